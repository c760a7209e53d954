/**
 * Idle Timeout (issue 28) over real HTTP to the loopback gateway, for Gateway Chat, Gateway
 * Messages and the Gateway Chat Model: a streamed answer that goes silent ends at about its idle
 * limit (not at Timeout), saying how long it was silent and what had arrived; keep-alive comments
 * keep it alive; Timeout still bounds a stream that only sends keep-alives; a whole answer (Stream
 * off) is not bound by it. Times are bounds with a margin (test/helpers/busy.ts).
 */
import type { ChatModel, Message, StreamChunk } from '@n8n/ai-node-sdk';
import type { IDataObject, ISupplyDataFunctions } from 'n8n-workflow';

import { complete } from '../../nodes/GatewayChat/complete';
import { supplyGatewayChatModel } from '../../nodes/GatewayChatModel/supply';
import { createMessage } from '../../nodes/GatewayMessages/create';
import { useGateway } from '../gateway/testing';
import { BUSY_MARGIN_MS } from '../helpers/busy';
import { standInSdk } from '../helpers/chatModelSdk';
import { createExecuteContext } from '../helpers/executeContext';

const KEY = 'sk-integration-idle-0123456789';
const env = useGateway();

type Operation = typeof complete;
const NODES: Array<[string, Operation, string, string]> = [
	['Gateway Chat', complete, '/v1/chat/completions', 'The chat request'],
	['Gateway Messages', createMessage, '/v1/messages', 'The messages request'],
];

const say = (content: string) => ({ values: [{ role: 'user', content }] });

async function run(operation: Operation, parameters: IDataObject, streaming = false) {
	const context = createExecuteContext({
		parameters: { model: { __rl: true, mode: 'id', value: 'chat-sonnet-5' }, messages: say('Hello'), maxTokens: 4096, stream: true, options: {}, ...parameters },
		credentials: { apiKey: KEY, baseUrl: env.gateway.baseUrl },
		streaming,
	});
	const started = Date.now();
	try {
		const [output] = await operation.call(context.ctx);
		return { output, took: Date.now() - started, chunks: context.chunks };
	} catch (error) {
		return { error: error as Error & { description?: string }, took: Date.now() - started, chunks: context.chunks };
	}
}

const requestsTo = (path: string) => env.gateway.requests.filter((request) => request.path === path);
const WORDS = 'one two three four five six seven eight nine ten eleven twelve';
/** The words that make the gateway stall after `bytes` bytes of the stream's body (test/gateway/README.md). */
const stall = (bytes: number, extra = '') => `${WORDS} [stall-after:${bytes}]${extra}`;

describe.each(NODES)('%s: a streamed answer that goes silent', (_name, operation, path, what) => {
	it('ends at about Idle Timeout, not Timeout, saying how long it was silent and what had arrived, sent once', async () => {
		const result = await run(operation, { messages: say(stall(700)), options: { idleTimeoutSeconds: 1, timeoutSeconds: 60 } });
		expect(result.error?.message).toMatch(
			new RegExp(`^${what} failed: the gateway sent nothing for 1 s after [\\d,]+ characters of the answer \\(\\d+ events\\), the limit set by Idle Timeout \\(Seconds\\)$`),
		);
		expect(result.error?.description).toMatch(/^The gateway had begun the answer, so it may bill it even so; it was not sent again\./);
		expect(result.took).toBeGreaterThanOrEqual(900);
		expect(result.took).toBeLessThan(1000 + BUSY_MARGIN_MS);
		expect(requestsTo(path)).toHaveLength(1);
	});

	it('says so when the answer had begun but no event was whole yet', async () => {
		const early = await run(operation, { messages: say(stall(5)), options: { idleTimeoutSeconds: 1 } });
		expect(early.error?.message).toContain('the gateway sent nothing for 1 s after the answer began, before its first event');
	});

	it('keeps going while keep-alive comments arrive, and gives the whole answer', async () => {
		const result = await run(operation, { messages: say(stall(700, ' [stall-for:2500] [stall-ping:250]')), options: { idleTimeoutSeconds: 1 } });
		expect(result.error).toBeUndefined();
		expect(String(result.output?.[0].json.text)).toContain('twelve');
		expect(result.took).toBeGreaterThanOrEqual(2400);
	});

	it('is still bounded by Timeout when only keep-alive comments arrive; an Idle Timeout above it changes nothing', async () => {
		const result = await run(operation, { messages: say(stall(700, ' [stall-ping:200]')), options: { idleTimeoutSeconds: 30, timeoutSeconds: 2 } });
		expect(result.error?.message).toBe(`${what} failed: no complete answer within 2 s`);
		expect(result.took).toBeLessThan(2000 + BUSY_MARGIN_MS);
	});

	it('ends a gateway that sends nothing at all after the request, before the answer began', async () => {
		env.gateway.queueFaults(path, ['slow:8000']);
		const result = await run(operation, { options: { idleTimeoutSeconds: 1 } });
		expect(result.error?.message).toBe(`${what} failed: the gateway sent nothing for 1 s after the request was sent, the limit set by Idle Timeout (Seconds)`);
		expect(result.error?.description).toBe('The request may have gone through even so.');
		expect(result.took).toBeLessThan(1000 + BUSY_MARGIN_MS);
		expect(requestsTo(path)).toHaveLength(1);
	});

	it('does not bind a whole answer (Stream off), which is silent until it is written', async () => {
		env.gateway.queueFaults(path, ['slow:1800']);
		const result = await run(operation, { stream: false, options: { idleTimeoutSeconds: 1 } });
		expect(result.error).toBeUndefined();
		expect(result.took).toBeGreaterThanOrEqual(1700);
	});

	it('tells n8n about the stall after the text it already passed on', async () => {
		const result = await run(operation, { messages: say(stall(700)), options: { idleTimeoutSeconds: 1 } }, true);
		const types = result.chunks.map((chunk) => chunk.type);
		expect(types).toEqual(expect.arrayContaining(['begin', 'item', 'error']));
		expect(types).not.toContain('end');
	});

	it('refuses an Idle Timeout that is not a whole number of seconds from 1 on, naming the field and the item, before sending', async () => {
		for (const idleTimeoutSeconds of [0, -5, 1.5, 'soon']) {
			const result = await run(operation, { options: { idleTimeoutSeconds } });
			expect(result.error?.message).toMatch(/^"Idle Timeout \(Seconds\)" must be (a whole number|from 1 to 86400), not .*\(item 0\)$/);
		}
		expect(requestsTo(path)).toHaveLength(0);
	});
});

describe('Gateway Chat Model: a streamed answer that goes silent', () => {
	async function chatModel(options: IDataObject) {
		const { ctx } = createExecuteContext({
			parameters: { model: { __rl: true, mode: 'id', value: 'chat-sonnet-5' }, options },
			credentials: { apiKey: KEY, baseUrl: env.gateway.baseUrl },
			nodeName: 'Gateway Chat Model',
		});
		const supplied = await supplyGatewayChatModel(ctx as unknown as ISupplyDataFunctions, 0, async () => standInSdk);
		return supplied.response as ChatModel;
	}
	const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
	async function streamed(model: ChatModel, text: string) {
		const started = Date.now();
		const chunks: StreamChunk[] = [];
		try {
			for await (const chunk of model.stream([user(text)])) chunks.push(chunk);
			return { chunks, took: Date.now() - started };
		} catch (error) {
			return { chunks, error: error as Error & { description?: string }, took: Date.now() - started };
		}
	}

	it('ends at about Idle Timeout with the same words, through the path the AI Agent takes', async () => {
		const result = await streamed(await chatModel({ idleTimeoutSeconds: 1, timeoutSeconds: 60 }), stall(700));
		expect(result.error?.message).toMatch(/^The chat model request failed: the gateway sent nothing for 1 s after [\d,]+ characters of the answer \(\d+ events\), the limit set by Idle Timeout \(Seconds\)$/);
		// A chat shows only the description: it carries the whole message.
		expect(result.error?.description).toContain('Idle Timeout (Seconds)');
		expect(result.took).toBeLessThan(1000 + BUSY_MARGIN_MS);
		expect(requestsTo('/v1/chat/completions')).toHaveLength(1);
	});

	it('keeps going while keep-alive comments arrive', async () => {
		const result = await streamed(await chatModel({ idleTimeoutSeconds: 1 }), stall(700, ' [stall-for:2500] [stall-ping:250]'));
		expect(result.error).toBeUndefined();
		expect(result.chunks.filter((chunk) => chunk.type === 'text-delta').map((chunk) => (chunk as { delta: string }).delta).join('')).toContain('twelve');
	});

	it('is still bounded by Timeout when only keep-alive comments arrive', async () => {
		const result = await streamed(await chatModel({ idleTimeoutSeconds: 1, timeoutSeconds: 2 }), stall(700, ' [stall-ping:200]'));
		expect(result.error?.message).toBe('The chat model request failed: no complete answer within 2 s');
		expect(result.took).toBeLessThan(2000 + BUSY_MARGIN_MS);
	});

	it('does not bind a whole answer (generate)', async () => {
		env.gateway.queueFaults('/v1/chat/completions', ['slow:1800']);
		const model = await chatModel({ idleTimeoutSeconds: 1 });
		const result = await model.generate([user('Hello')]);
		expect(result.finishReason).toBe('stop');
	});

	it('refuses an Idle Timeout below 1, naming the field, before sending', async () => {
		await expect(chatModel({ idleTimeoutSeconds: 0 })).rejects.toThrow('"Idle Timeout (Seconds)" must be from 1 to 86400, not 0 (item 0)');
		expect(requestsTo('/v1/chat/completions')).toHaveLength(0);
	});
});
