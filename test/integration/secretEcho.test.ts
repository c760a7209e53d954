/**
 * A gateway that quotes the key and a secret Custom Header value in its SUCCESS answers (and
 * splits them over streamed deltas), over real HTTP, against every node's real entry point
 * (`execute`, `supplyData`): nothing that leaves a node may hold the key, any 8-character run of
 * its secret part, its base64, or the secret header value; settings and task ids keep every
 * character.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import type { ChatModel, FunctionTool, StreamChunk } from '@n8n/ai-node-sdk';
import type { IDataObject, IExecuteFunctions, INodeExecutionData, ISupplyDataFunctions } from 'n8n-workflow';

import { GatewayChat } from '../../nodes/GatewayChat/GatewayChat.node';
import { GatewayImageGenerate } from '../../nodes/GatewayImageGenerate/GatewayImageGenerate.node';
import { GatewayMessages } from '../../nodes/GatewayMessages/GatewayMessages.node';
import { GatewayPlantCreate } from '../../nodes/GatewayPlantCreate/GatewayPlantCreate.node';
import { GatewayVideoGenerate } from '../../nodes/GatewayVideoGenerate/GatewayVideoGenerate.node';
import type { AiNodeSdk } from '../../nodes/GatewayChatModel/sdk';
import { supplyGatewayChatModel } from '../../nodes/GatewayChatModel/supply';
import { createExecuteContext } from '../helpers/executeContext';
import { secretEncodings } from '../helpers/secretEncodings';
import type { SentChunk } from '../helpers/executeContext';

const KEY = 'sk-Echo7Hq2Wc9Zr4Lp0Xt6NbVd3Fm8Ks';
const SECRET = KEY.slice(3);
const TOKEN = 'Qk7v9';
/** A long secret header value, echoed in every form a relay or a log writes it, whole and cut to its first 20 characters (issue 26). */
const RELAY_SECRET = 'rl/Se+cr=Val-9Q4z/x7Kp2wM';
const RELAY_FORMS = [...Object.values(secretEncodings(RELAY_SECRET)), ...Object.values(secretEncodings(RELAY_SECRET.slice(0, 20))), ...Object.values(secretEncodings(KEY.slice(0, 20)))];
const HEADERS = JSON.stringify({ 'x-api-token': TOKEN, 'x-relay-secret': RELAY_SECRET, 'x-portkey-provider': 'openai' });
/** A task id that merely looks like a key: it must come out with every character. */
const SK_TASK = 'task-sk-9f8e7d6c5b';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
/** What the gateway says in its answers: the key and the header value, whole, base64, after Bearer, and a setting. */
const QUOTE = `key ${KEY}; tail ${SECRET}; b64 ${Buffer.from(KEY).toString('base64')}; Bearer ${SECRET}; token ${TOKEN}; relay ${RELAY_FORMS.join(' | ')}; provider openai`;

function sse(res: http.ServerResponse, events: unknown[]): void {
	res.writeHead(200, { 'content-type': 'text/event-stream' });
	for (const event of events) res.write(`data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`);
	res.end();
}

/** The quote in pieces, cut inside the key and inside the header value. */
const PIECES = [QUOTE.slice(0, 9), QUOTE.slice(9, 20), QUOTE.slice(20, QUOTE.indexOf(TOKEN) + 2), QUOTE.slice(QUOTE.indexOf(TOKEN) + 2)];

function answer(req: http.IncomingMessage, body: IDataObject, res: http.ServerResponse, baseUrl: string): void {
	const json = (value: unknown) => {
		res.writeHead(200, { 'content-type': 'application/json' });
		res.end(JSON.stringify(value));
	};
	const path = (req.url ?? '').split('?')[0];
	const cutAt = /^cut-at-(\d+)$/.exec(String(((body.messages as IDataObject[] | undefined)?.[0] as IDataObject | undefined)?.content ?? ''));
	if (cutAt) {
		// An error whose words reach the key only near where a quote is shortened.
		res.writeHead(401, { 'content-type': String(req.headers['x-error-type'] ?? 'text/plain') });
		const words = `${'x'.repeat(Number(cutAt[1]))}${SECRET} is not a valid token`;
		res.end(req.headers['x-error-type'] === 'application/json' ? JSON.stringify({ error: { message: words, type: 'invalid_request_error' } }) : words);
		return;
	}
	if (path === '/v1/chat/completions') {
		const toolCalls = body.tools ? [{ id: 'call_1', type: 'function', function: { name: 'Calculator', arguments: JSON.stringify({ input: QUOTE }) } }] : undefined;
		if (!body.stream) {
			return json({ id: 'c1', object: 'chat.completion', model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: QUOTE, tool_calls: toolCalls }, finish_reason: toolCalls ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 } });
		}
		const chunk = (delta: IDataObject, finish: string | null = null) => ({ id: 'c1', object: 'chat.completion.chunk', model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] });
		const tools = toolCalls ? [chunk({ tool_calls: [{ index: 0, ...toolCalls[0], function: { name: 'Calculator', arguments: toolCalls[0].function.arguments.slice(0, 20) } }] }), chunk({ tool_calls: [{ index: 0, function: { arguments: toolCalls[0].function.arguments.slice(20) } }] })] : [];
		return sse(res, [chunk({ role: 'assistant', content: '' }), ...PIECES.map((content) => chunk({ content })), ...tools, chunk({}, toolCalls ? 'tool_calls' : 'stop'), '[DONE]']);
	}
	if (path === '/v1/messages') {
		if (!body.stream) return json({ id: 'm1', type: 'message', role: 'assistant', model: body.model, content: [{ type: 'text', text: QUOTE }], stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 5 } });
		return sse(res, [
			{ type: 'message_start', message: { id: 'm1', type: 'message', role: 'assistant', model: body.model, content: [], usage: { input_tokens: 3, output_tokens: 0 } } },
			{ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
			...PIECES.map((text) => ({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })),
			{ type: 'content_block_stop', index: 0 },
			{ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } },
			{ type: 'message_stop' },
		]);
	}
	if (path === '/v1/images/generations') return json({ created: 1, data: [{ b64_json: PNG, revised_prompt: `a cat; ${QUOTE}` }] });
	if (path === '/plants') return json({ id: body.id, name: body.name, tag: QUOTE });
	if (path === '/v1/video/generations' && body.prompt === 'sk task') return json({ id: SK_TASK, task_id: SK_TASK, object: 'video', model: 'video-2-0-fast-260128', status: 'queued' });
	if (path === `/v1/video/generations/${SK_TASK}`) return json({ code: 'success', data: { task_id: SK_TASK, status: 'FAILURE', progress: '100%', fail_reason: `task ${SK_TASK} refused; ${QUOTE}` } });
	if (path === '/v1/video/generations') return json({ id: 'task_openai_1', task_id: 'task_openai_1', object: 'video', model: `video-2-0-fast-260128 ${QUOTE}`, status: 'queued' });
	if (path.startsWith('/v1/video/generations/')) {
		return json({ code: 'success', data: { task_id: 'task_openai_1', status: 'FAILURE', progress: '100%', fail_reason: QUOTE, result_url: `${baseUrl}/files/v.mp4?sig=${KEY}` } });
	}
	res.writeHead(404);
	res.end();
}

let server: http.Server;
let baseUrl = '';
beforeAll(async () => {
	server = http.createServer((req, res) => {
		let text = '';
		req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
		req.on('end', () => answer(req, text ? (JSON.parse(text) as IDataObject) : {}, res, baseUrl));
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => await new Promise((resolve) => server.close(resolve)));

interface Exits {
	output: INodeExecutionData[];
	error?: Error;
	chunks: SentChunk[];
	logs: unknown[];
	customData: Record<string, string>;
	/** Everything n8n would show, store or log, as one text. */
	text: string;
}

/** Runs a node's execute as n8n does, collecting everything that leaves it. */
async function execute(node: { execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> }, parameters: IDataObject, options: { streaming?: boolean; continueOnFail?: boolean } = {}): Promise<Exits> {
	const { ctx, chunks } = createExecuteContext({ parameters, credentials: { apiKey: KEY, baseUrl, customHeaders: HEADERS }, streaming: options.streaming, continueOnFail: options.continueOnFail });
	const logs: unknown[] = [];
	const customData: Record<string, string> = {};
	const log = (level: string) => (message: string, meta?: unknown) => logs.push({ level, message, meta });
	Object.assign(ctx, {
		logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
		customData: { set: (key: string, value: string) => (customData[key] = value), setAll: (values: Record<string, string>) => Object.assign(customData, values), get: (key: string) => customData[key], getAll: () => ({ ...customData }) },
		sendMessageToUI: (...messages: unknown[]) => logs.push({ ui: messages }),
	});
	let output: INodeExecutionData[] = [];
	let error: (Error & { description?: string; context?: unknown }) | undefined;
	try {
		[output] = await node.execute.call(ctx);
	} catch (caught) {
		error = caught as Error;
	}
	const text = JSON.stringify({ output, chunks, logs, customData, error: error && { message: error.message, description: error.description, context: error.context, stack: error.stack } });
	return { output, error, chunks, logs, customData, text };
}

function expectNoSecret(text: string): void {
	expect(text).not.toContain(KEY);
	for (let start = 0; start + 8 <= SECRET.length; start++) expect(text).not.toContain(SECRET.slice(start, start + 8));
	expect(text).not.toContain(Buffer.from(KEY).toString('base64').slice(0, 20));
	expect(text).not.toMatch(new RegExp(`(?<![A-Za-z0-9])${TOKEN}(?![A-Za-z0-9])`));
	// Every form of the relay secret and of the key's first 20 characters, as written and as it stands inside JSON text.
	for (const form of RELAY_FORMS) for (const written of [form, JSON.stringify(form).slice(1, -1)]) expect(text).not.toContain(written);
}

const model = (value: string) => ({ __rl: true, mode: 'id', value });
const chatParameters = (stream: boolean) => ({ model: model('chat-sonnet-5'), messages: { values: [{ role: 'user', content: 'hi' }] }, maxTokens: 256, stream, options: {} });

describe('a success answer quoting the key and a secret header value', () => {
	it.each([
		['Gateway Chat', () => new GatewayChat(), chatParameters(false), false],
		['Gateway Chat streamed', () => new GatewayChat(), chatParameters(true), true],
		['Gateway Messages', () => new GatewayMessages(), chatParameters(false), false],
		['Gateway Messages streamed', () => new GatewayMessages(), chatParameters(true), true],
	])('%s: the answer is masked in the item and in every live chunk; the setting stays', async (_name, node, parameters, streaming) => {
		const run = await execute(node(), parameters, { streaming });
		expect(run.error).toBeUndefined();
		expectNoSecret(run.text);
		expect(run.output[0].json.text).toContain('provider openai');
		if (streaming) {
			const live = run.chunks.filter((chunk) => chunk.type === 'item').map((chunk) => chunk.content).join('');
			expect(live).toBe(run.output[0].json.text);
			expect(run.chunks.map((chunk) => chunk.type)).toEqual(['begin', ...run.chunks.slice(1, -1).map(() => 'item'), 'end']);
		}
	});

	it("Gateway Image Generate: the image's revised_prompt is masked, the file kept", async () => {
		const run = await execute(new GatewayImageGenerate(), { model: model('img-image-2'), prompt: 'a cat', n: 1, responseFormat: 'b64_json', options: {} });
		expect(run.error).toBeUndefined();
		expectNoSecret(run.text);
		expect(JSON.stringify(run.output[0].json)).toContain('a cat; key ***');
		expect(run.output[0].binary).toBeDefined();
	});

	it("Gateway Plant Create: the plant's tag is masked", async () => {
		const run = await execute(new GatewayPlantCreate(), { id: 7, name: 'Rose', tag: '' });
		expect(run.error).toBeUndefined();
		expectNoSecret(run.text);
		expect(JSON.stringify(run.output[0].json)).toContain('provider openai');
	});

	it('Gateway Video Generate: Submit and Get Status are masked; the task id keeps every character, in the item and the log', async () => {
		const submitted = await execute(new GatewayVideoGenerate(), { operation: 'submit', model: model('video-2-0-fast-260128'), prompt: 'a cat', seconds: 5, size: '1280x720', options: {} });
		expect(submitted.error).toBeUndefined();
		expectNoSecret(submitted.text);
		expect(submitted.output[0].json.task_id).toBe('task_openai_1');
		const status = await execute(new GatewayVideoGenerate(), { operation: 'getStatus', taskId: 'task_openai_1' });
		expect(status.error).toBeUndefined();
		expectNoSecret(status.text);
		expect(status.output[0].json).toMatchObject({ task_id: 'task_openai_1', status: 'FAILURE' });
		expect(String(status.output[0].json.fail_reason)).toContain('provider openai');
	});
});

describe('a task id that merely looks like a key (issue 26)', () => {
	it('Gateway Video Generate: Submit and Get Status keep task-sk-… whole in the item, the error words and the log; the secrets around it are masked', async () => {
		const submitted = await execute(new GatewayVideoGenerate(), { operation: 'submit', model: model('video-2-0-fast-260128'), prompt: 'sk task', seconds: 5, size: '1280x720', options: {} });
		expect(submitted.error).toBeUndefined();
		expect(submitted.output[0].json.task_id).toBe(SK_TASK);
		expect(JSON.stringify(submitted.logs)).toContain(SK_TASK);
		const status = await execute(new GatewayVideoGenerate(), { operation: 'getStatus', taskId: SK_TASK });
		expect(status.error).toBeUndefined();
		expectNoSecret(status.text);
		expect(status.output[0].json).toMatchObject({ task_id: SK_TASK, status: 'FAILURE' });
		expect(String(status.output[0].json.fail_reason)).toContain(`task ${SK_TASK} refused`);
	});
});

describe('a quote is masked before it is shortened', () => {
	it.each([270, 281, 292, 295, 298, 299])('a 401 whose words reach the key after %i characters shows none of it', async (offset) => {
		const parameters = { ...chatParameters(false), messages: { values: [{ role: 'user', content: `cut-at-${offset}` }] } };
		for (const continueOnFail of [false, true]) {
			const run = await execute(new GatewayChat(), parameters, { continueOnFail });
			expectNoSecret(run.text);
			// Not even the first characters of the secret part, where the quote is cut.
			expect(run.text).not.toContain(`x${SECRET[0]}`);
			expect(run.text).toContain('xxxx');
		}
	});
});

describe('an input field holding the key', () => {
	it.each([
		['Gateway Video Generate, Image URL', () => new GatewayVideoGenerate(), { operation: 'generate', model: model('video-2-0-fast-260128'), prompt: 'a cat', seconds: 5, size: '1280x720', options: { imageUrl: SECRET } }],
		['Gateway Image Generate, Size', () => new GatewayImageGenerate(), { model: model('img-image-2'), prompt: 'a cat', n: 1, responseFormat: 'url', options: { size: SECRET } }],
	])('%s: the input check does not echo it (error or Continue On Fail item)', async (_name, node, parameters) => {
		const failed = await execute(node(), parameters);
		expect(failed.error).toBeDefined();
		expectNoSecret(failed.text);
		const item = await execute(node(), parameters, { continueOnFail: true });
		expect(item.output[0].json.error).toBeDefined();
		expectNoSecret(item.text);
	});
});

describe('the Gateway Chat Model', () => {
	abstract class StandInBaseChatModel {
		constructor(
			public provider: string,
			public modelId: string,
			public defaultConfig?: object,
			protected tools: unknown[] = [],
		) {}
	}
	const sdk = {
		BaseChatModel: StandInBaseChatModel,
		supplyModel: (_ctx: unknown, chatModel: ChatModel) => ({ response: chatModel }),
		getParametersJsonSchema: (tool: FunctionTool) => tool.inputSchema,
	} as unknown as AiNodeSdk;
	const CALCULATOR: FunctionTool = { type: 'function', name: 'Calculator', description: 'Does sums', inputSchema: { type: 'object', properties: { input: { type: 'string' } } } };

	async function chatModel(tools: boolean): Promise<ChatModel> {
		const { ctx } = createExecuteContext({ parameters: { model: model('chat-sonnet-5'), options: {} }, credentials: { apiKey: KEY, baseUrl, customHeaders: HEADERS }, nodeName: 'Gateway Chat Model' });
		const supplied = await supplyGatewayChatModel(ctx as unknown as ISupplyDataFunctions, 0, async () => sdk);
		const chat = supplied.response as ChatModel & { tools: unknown[] };
		if (tools) chat.tools = [CALCULATOR];
		return chat;
	}
	const user = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }];

	it.each([false, true])('generate (tools: %s): text and tool-call arguments are masked, still valid JSON', async (tools) => {
		const result = await (await chatModel(tools)).generate(user);
		expectNoSecret(JSON.stringify(result));
		const call = result.message.content.find((part) => part.type === 'tool-call');
		if (tools) expect(JSON.parse((call as { input: string }).input)).toEqual({ input: expect.stringContaining('provider openai') });
	});

	it.each([false, true])('stream (tools: %s): deltas and tool-call arguments are masked across deltas', async (tools) => {
		const chunks: StreamChunk[] = [];
		for await (const chunk of (await chatModel(tools)).stream(user)) chunks.push(chunk);
		expectNoSecret(JSON.stringify(chunks));
		const text = chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.delta : '')).join('');
		expect(text).toContain('provider openai');
		expect(text).toContain('key ***');
	});
});
