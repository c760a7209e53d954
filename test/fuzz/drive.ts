/**
 * Runs one scenario: the node's own execute (or the Gateway Chat Model as an agent drives it)
 * with the fake n8n context of test/helpers/executeContext.ts, so requests go out through n8n's
 * own request function to the fuzz gateway. Captures everything that leaves the node: output
 * items, the error, log lines, custom data, streamed chunks, and the model's results.
 */
import type { ChatModel, FunctionTool, Message, StreamChunk } from '@n8n/ai-node-sdk';
import { Readable } from 'node:stream';

import type { IBinaryData, IDataObject, IExecuteFunctions, INodeExecutionData, INodeType, ISupplyDataFunctions } from 'n8n-workflow';

import { GatewayChat } from '../../nodes/GatewayChat/GatewayChat.node';
import { supplyGatewayChatModel } from '../../nodes/GatewayChatModel/supply';
import { GatewayImageGenerate } from '../../nodes/GatewayImageGenerate/GatewayImageGenerate.node';
import { GatewayMessages } from '../../nodes/GatewayMessages/GatewayMessages.node';
import { GatewayAccount } from '../../nodes/GatewayAccount/GatewayAccount.node';
import { GatewayPlantCreate } from '../../nodes/GatewayPlantCreate/GatewayPlantCreate.node';
import { GatewayVideoGenerate } from '../../nodes/GatewayVideoGenerate/GatewayVideoGenerate.node';
import { standInSdk } from '../helpers/chatModelSdk';
import { createExecuteContext } from '../helpers/executeContext';
import { pngHeader } from '../helpers/files';
import type { FuzzGateway, RunState } from './gateway';
import type { Scenario } from './scenario';
import { deadlineMs, generateMaxWaitSeconds, storeOf } from './scenario';

export const SETTING_HEADER = { name: 'x-portkey-provider', value: 'openai' };

export interface LogLine {
	level: string;
	message: string;
	meta?: unknown;
}

export interface Outcome {
	output: INodeExecutionData[];
	error?: unknown;
	logs: LogLine[];
	customData: unknown[];
	chunks: unknown[];
	/** What the Chat Model handed to the agent: results, stream chunks, tool inputs. */
	modelResults: unknown[];
	/** Chat Model runs: how long each call took (each has its own Timeout). */
	callDurations: number[];
	startedAt: number;
	settledAt: number;
	/** The run had not settled by its deadline plus the grace and was stopped by the harness. */
	hung: boolean;
	/** Gave no answer even after the Stop. */
	neverSettled: boolean;
	/** The model's answer text (chat nodes and the model), for the unchanged-text check. */
	text?: string;
}

export const GRACE_MS = 2000;

const CALCULATOR: FunctionTool = {
	type: 'function',
	name: 'Calculator',
	description: 'Does sums',
	inputSchema: { type: 'object', properties: { input: { type: 'string' } } },
};

/** A first frame or attachment of 1 MB, kept by the binary store outside the item (streamed into the body). */
const FRAME = pngHeader(8, 8, 1024 * 1024);
/**
 * The large one: 8 MB, a body of about 11 MB, more than loopback's socket buffers take at once, so
 * the node is still writing it when an early answer (and a reset) comes (`plan.early` 'nodeServer').
 */
const LARGE_FRAME = pngHeader(8, 8, 8 * 1024 * 1024);
const binaryOf = (frame: Buffer): IBinaryData => ({ id: 'filesystem-v2:frame.png', data: 'filesystem-v2', mimeType: 'image/png', fileName: 'frame.png', fileSize: `${frame.length} B` });
const frameOf = (scenario: Scenario): Buffer => (storeOf(scenario).large ? LARGE_FRAME : FRAME);

/** The binary store as the scenario draws it: the frame in 64 KB reads (each late by `slowMs`), or a read that stalls (on its open, or before its first bytes). */
function storeHelpers(scenario: Scenario): Record<string, unknown> {
	const { stall, slowMs } = storeOf(scenario);
	const frame = frameOf(scenario);
	return {
		assertBinaryData: () => binaryOf(frame),
		getBinaryMetadata: async () => ({ fileSize: frame.length, mimeType: 'image/png' }),
		getBinaryStream: async (_id: string, chunkSize?: number) => {
			if (chunkSize !== undefined && stall === 'open') return await new Promise(() => undefined);
			if (chunkSize !== undefined && stall === 'firstBytes') return new Readable({ read: () => undefined });
			// Each read completes on a later turn of the event loop, as a file's or an S3 GET's does.
			return Readable.from((async function* () {
				for (let at = 0; at < frame.length; at += 64 * 1024) {
					await new Promise((resolve) => (slowMs > 0 ? setTimeout(resolve, slowMs) : setImmediate(resolve)));
					yield frame.subarray(at, at + 64 * 1024);
				}
			})());
		},
	};
}

/** The item's stored files: the frame, and for an edit of two images the same file in a second field. */
function storedFiles(scenario: Scenario): Record<string, IBinaryData> {
	const frame = binaryOf(frameOf(scenario));
	return scenario.node === 'imageEdit' && scenario.edit?.images === 2 ? { frame, frame2: frame } : { frame };
}

/** The option that sends the frame: a video's first frame, or a chat attachment. */
function frameOption(scenario: Scenario): IDataObject {
	if (!storeOf(scenario).frame) return {};
	return scenario.node.startsWith('video') ? { imageBinaryProperty: 'frame' } : { binaryAttachments: 'frame' };
}

/** Idle Timeout as drawn (issue 28), on every chat node: where it does not apply (no stream), it must change nothing. */
function idleOption(scenario: Scenario): IDataObject {
	return scenario.idleSeconds === undefined ? {} : { idleTimeoutSeconds: scenario.idleSeconds };
}

function parametersOf(scenario: Scenario): (itemIndex: number) => IDataObject {
	const model = (value: string) => ({ __rl: true, mode: 'id', value });
	const prompt = (i: number) => `A fern in the rain, item ${i}`;
	return (i) => {
		switch (scenario.node) {
			case 'chat':
			case 'chatStream':
			case 'messages':
			case 'messagesStream':
				return {
					model: model('chat-sonnet-5'),
					messages: { values: [{ role: 'user', content: `Hello ${i}` }] },
					maxTokens: 100,
					stream: scenario.node.endsWith('Stream'),
					options: { timeoutSeconds: scenario.deadlineSeconds, ...idleOption(scenario), ...frameOption(scenario) },
				};
			case 'modelGenerate':
			case 'modelStream':
				return { model: model('chat-sonnet-5'), options: { timeoutSeconds: scenario.deadlineSeconds, ...idleOption(scenario) } };
			case 'image':
				return { model: model('img-image-2'), prompt: prompt(i), n: 1, responseFormat: scenario.imageFormat, options: {} };
			case 'imageEdit': {
				const edit = scenario.edit ?? { images: 1, mask: false };
				const images = edit.images === 2 ? 'frame, frame2' : 'frame';
				return { operation: 'edit', model: model('img-image-2'), prompt: prompt(i), n: 1, responseFormat: scenario.imageFormat, images, options: edit.mask ? { maskBinaryProperty: 'frame' } : {} };
			}
			case 'plant':
				return { id: 1000 + i, name: `Fern ${i}`, tag: 'shade' };
			case 'account':
				return { operation: 'getBalance', options: {} };
			default: {
				const operation = { videoGenerate: 'generate', videoSubmit: 'submit', videoStatus: 'getStatus', videoDownload: 'download' }[scenario.node];
				const options: IDataObject = { ...(operation === 'generate' ? { maxWaitSeconds: generateMaxWaitSeconds(scenario), pollIntervalSeconds: 5 } : {}), ...frameOption(scenario) };
				if (operation === 'generate' && scenario.resume) options.resumeTaskId = scenario.taskIdInput;
				return { operation, model: model('video-2-0-fast-260128'), prompt: prompt(i), seconds: 5, size: '1280x720', taskId: scenario.taskIdInput, options };
			}
		}
	};
}

const NODES: Record<string, () => INodeType> = {
	chat: () => new GatewayChat(),
	chatStream: () => new GatewayChat(),
	messages: () => new GatewayMessages(),
	messagesStream: () => new GatewayMessages(),
	image: () => new GatewayImageGenerate(),
	imageEdit: () => new GatewayImageGenerate(),
	plant: () => new GatewayPlantCreate(),
	account: () => new GatewayAccount(),
	videoGenerate: () => new GatewayVideoGenerate(),
	videoSubmit: () => new GatewayVideoGenerate(),
	videoStatus: () => new GatewayVideoGenerate(),
	videoDownload: () => new GatewayVideoGenerate(),
};

async function collect(stream: AsyncIterable<StreamChunk>, into: unknown[]): Promise<StreamChunk[]> {
	const chunks: StreamChunk[] = [];
	for await (const chunk of stream) {
		chunks.push(chunk);
		into.push(chunk);
	}
	return chunks;
}

/** The agent's loop: ask, run the tool it calls (with the arguments it got), ask again, at most twice. */
async function driveModel(ctx: IExecuteFunctions, scenario: Scenario, outcome: Outcome): Promise<void> {
	const supplied = await supplyGatewayChatModel(ctx as unknown as ISupplyDataFunctions, 0, async () => standInSdk);
	const model = (supplied.response as ChatModel).withTools([CALCULATOR]);
	const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'What is 2 + 3?' }] }];
	for (let round = 0; round < 2; round++) {
		const started = Date.now();
		try {
			if (scenario.node === 'modelGenerate') {
				const result = await model.generate(messages);
				outcome.modelResults.push(result);
				const calls = result.message.content.filter((part) => part.type === 'tool-call') as Array<{ toolCallId?: string; toolName: string; input: string }>;
				const texts = result.message.content.filter((part) => part.type === 'text') as Array<{ text: string }>;
				if (calls.length === 0) {
					outcome.text = texts.map((t) => t.text).join('');
					return;
				}
				messages.push(result.message, {
					role: 'tool',
					content: calls.map((call) => ({ type: 'tool-result' as const, toolCallId: call.toolCallId ?? '', result: `ran with ${call.input}` })),
				});
			} else {
				const chunks = await collect(model.stream(messages), outcome.modelResults);
				const deltas = chunks.filter((c) => c.type === 'text-delta') as Array<{ delta: string }>;
				const calls = chunks.filter((c) => c.type === 'tool-call-delta') as Array<{ id?: string; name?: string; argumentsDelta?: string }>;
				if (calls.length === 0) {
					outcome.text = deltas.map((d) => d.delta).join('');
					return;
				}
				// Each call comes whole under its own id (closingChunks): run each, as the agent does.
				const ran = calls.map((call, i) => ({ id: call.id ?? `call_${i}`, input: call.argumentsDelta ?? '' }));
				messages.push(
					{ role: 'assistant', content: ran.map(({ id, input }) => ({ type: 'tool-call' as const, toolCallId: id, toolName: 'Calculator', input })) },
					{ role: 'tool', content: ran.map(({ id, input }) => ({ type: 'tool-result' as const, toolCallId: id, result: `ran with ${input}` })) },
				);
			}
		} finally {
			outcome.callDurations.push(Date.now() - started);
		}
	}
}

export async function runScenario(gateway: FuzzGateway, scenario: Scenario): Promise<{ outcome: Outcome; state: RunState }> {
	const state = gateway.open(scenario.plan, scenario.secrets);
	const stop = new AbortController();
	const { secrets } = scenario;
	const context = createExecuteContext({
		parameters: parametersOf(scenario),
		items: Array.from({ length: scenario.items }, (_, i) => ({ json: { i }, ...(storeOf(scenario).frame ? { binary: storedFiles(scenario) } : {}) })),
		continueOnFail: scenario.continueOnFail,
		abortSignal: stop.signal,
		streaming: scenario.node === 'chatStream' || scenario.node === 'messagesStream',
		credentials: {
			apiKey: secrets.key,
			baseUrl: state.baseUrl,
			customHeaders: JSON.stringify({ [secrets.headerName]: secrets.headerValue, [SETTING_HEADER.name]: SETTING_HEADER.value }),
		},
		nodeName: 'Fuzzed Node',
	});
	const outcome: Outcome = {
		output: [],
		logs: [],
		customData: [],
		chunks: context.chunks,
		modelResults: [],
		callDurations: [],
		startedAt: Date.now(),
		settledAt: 0,
		hung: false,
		neverSettled: false,
	};
	// Written over the fake context's own: it keeps no log lines and no custom data.
	const ctx = context.ctx as unknown as Record<string, unknown> & IExecuteFunctions;
	const writable = ctx as unknown as Record<string, unknown>;
	const logger: Record<string, (message: string, meta?: unknown) => void> = {};
	for (const level of ['debug', 'info', 'warn', 'error', 'verbose']) logger[level] = (message, meta) => outcome.logs.push({ level, message: String(message), meta });
	writable.logger = logger;
	writable.getExecutionId = () => `exec-${state.run}`;
	if (storeOf(scenario).frame) Object.assign(ctx.helpers, storeHelpers(scenario));
	// Each request would hold its body of a megabyte.
	if (storeOf(scenario).frame) context.requests.push = () => 0;
	const store: IDataObject = {};
	writable.customData = {
		set: (key: string, value: unknown) => {
			store[key] = value as never;
			outcome.customData.push({ key, value });
		},
		setAll: (values: IDataObject) => {
			Object.assign(store, values);
			outcome.customData.push(values);
		},
		get: (key: string) => store[key],
		getAll: () => store,
	};

	const work = (async () => {
		if (scenario.node === 'modelGenerate' || scenario.node === 'modelStream') {
			await driveModel(ctx, scenario, outcome);
			return;
		}
		const [items] = (await NODES[scenario.node]().execute!.call(ctx)) as INodeExecutionData[][];
		outcome.output = items;
		if (items.length === 1 && typeof items[0].json.text === 'string') outcome.text = items[0].json.text;
	})();
	const limit = deadlineMs(scenario) * (scenario.node.startsWith('model') ? 2 : 1) + GRACE_MS;
	let timer: NodeJS.Timeout | undefined;
	const watchdog = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), limit + 500)));
	const settled = work.then(
		() => 'done' as const,
		(error: unknown) => {
			outcome.error = error;
			return 'done' as const;
		},
	);
	if ((await Promise.race([settled, watchdog])) === 'hung') {
		outcome.hung = true;
		stop.abort();
		const late = await Promise.race([settled, new Promise<'never'>((resolve) => setTimeout(() => resolve('never'), 3000))]);
		if (late === 'never') outcome.neverSettled = true;
	}
	clearTimeout(timer);
	outcome.settledAt = Date.now();
	gateway.settle(state);
	// The node closes every connection it left with an answer unfinished: a moment for the closes to be seen.
	for (const until = Date.now() + CLOSE_GRACE_MS; unfinishedOpen(state).length > 0 && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 20));
	return { outcome, state };
}

/** How long after the run ends its connections have to close. */
const CLOSE_GRACE_MS = 1000;

/** Requests of the run whose answer the gateway had not written whole, on a connection neither end has closed. */
export const unfinishedOpen = (state: RunState) => state.requests.filter((request) => !request.complete && request.closedAt === undefined && request.answerKind !== 'late');
