/**
 * The Gateway Chat Model against the loopback gateway (test/gateway) and the hostile one
 * (test/hostile), through the package's real transport and n8n's own request function.
 *
 * The first part hands the model to a stand-in of the AI node SDK (its BaseChatModel and a
 * supplyModel that returns the model as it is), so every behaviour is the model's own. The second
 * part uses n8n's real SDK from the installed n8n 2.41.1 (skipped when that install is missing):
 * its LangChain adapter and n8n's token tracing, as the AI Agent meets them.
 */

import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import type { ChatModel, FunctionTool, Message, StreamChunk } from '@n8n/ai-node-sdk';
import type { IDataObject, ISupplyDataFunctions } from 'n8n-workflow';

import type { AiNodeSdk } from '../../nodes/GatewayChatModel/sdk';
import { supplyGatewayChatModel } from '../../nodes/GatewayChatModel/supply';
import { startGateway } from '../gateway';
import type { Gateway } from '../gateway';
import { startHostileGateway } from '../hostile';
import type { HostileGateway } from '../hostile';
import { standInSdk } from '../helpers/chatModelSdk';
import { BUSY_MARGIN_MS, eventually, once } from '../helpers/busy';
import { createExecuteContext } from '../helpers/executeContext';
import { describeWithSdk, useRealSdk } from '../helpers/realSdk';

const KEY = 'sk-model-0123456789abcdef';
const SECRET_PART = KEY.slice(3);


const CALCULATOR: FunctionTool = {
	type: 'function',
	name: 'Calculator',
	description: 'Does sums',
	inputSchema: { type: 'object', properties: { input: { type: 'string' } } },
};

let gateway: Gateway;
let hostile: HostileGateway;
beforeAll(async () => {
	gateway = await startGateway();
	hostile = await startHostileGateway({ dripIntervalMs: 100, keepAliveIntervalMs: 100, videoPollsToFinish: 0 });
});
afterAll(async () => {
	await gateway.close();
	await hostile.close();
});
beforeEach(() => {
	gateway.reset();
	hostile.reset();
});

interface ModelOptions {
	model?: string;
	options?: IDataObject;
	baseUrl?: string;
	apiKey?: string;
	cancel?: AbortSignal;
	sdk?: AiNodeSdk;
	extra?: IDataObject;
}

async function chatModel({ model = 'chat-sonnet-5', options = {}, baseUrl = gateway.baseUrl, apiKey = KEY, cancel, sdk = standInSdk, extra = {} }: ModelOptions = {}) {
	const { ctx } = createExecuteContext({
		parameters: { model: { __rl: true, mode: 'id', value: model }, options },
		credentials: { apiKey, baseUrl },
		abortSignal: cancel,
		nodeName: 'Gateway Chat Model',
	});
	Object.assign(ctx, extra);
	const supplied = await supplyGatewayChatModel(ctx as unknown as ISupplyDataFunctions, 0, async () => sdk);
	return supplied.response as ChatModel;
}

const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] });
const chatRequests = () => gateway.requests.filter((r) => r.path === '/v1/chat/completions');
const sent = (index = 0) => JSON.parse(chatRequests()[index].rawBody) as IDataObject;

async function collect(stream: AsyncIterable<StreamChunk>): Promise<Array<StreamChunk & { at: number }>> {
	const chunks: Array<StreamChunk & { at: number }> = [];
	for await (const chunk of stream) chunks.push({ ...chunk, at: Date.now() });
	return chunks;
}

/** The error a call ends with, and everything of it n8n would show or keep. */
async function failure(work: Promise<unknown> | AsyncIterable<StreamChunk>): Promise<{ error: Error & { description?: string }; text: string }> {
	const promise = Symbol.asyncIterator in (work as object) ? collect(work as AsyncIterable<StreamChunk>) : (work as Promise<unknown>);
	const error = (await promise.then(
		() => {
			throw new Error('expected a failure');
		},
		(e: unknown) => e,
	)) as Error & { description?: string };
	return { error, text: JSON.stringify({ message: error.message, description: error.description, stack: error.stack, error }) };
}

describe('a whole answer (generate)', () => {
	it('sends the model, effort, max tokens and temperature, and returns the text with the real token usage', async () => {
		const model = await chatModel({ model: 'chat-opus-4-8', options: { effort: 'xhigh', maxTokens: 500, temperature: 0.3 } });
		const result = await model.generate([{ role: 'system', content: [{ type: 'text', text: 'Be brief.' }] }, user('Name a fern')]);
		expect(sent()).toEqual({
			model: 'chat-opus-4-8',
			messages: [
				{ role: 'system', content: 'Be brief.' },
				{ role: 'user', content: 'Name a fern' },
			],
			max_tokens: 500,
			temperature: 0.3,
			reasoning_effort: 'xhigh',
		});
		expect(chatRequests()[0].headers.authorization).toBe(`Bearer ${KEY}`);
		expect(result.message.content).toEqual([{ type: 'text', text: '[Be brief.] Echo from chat-opus-4-8: Name a fern' }]);
		expect(result.finishReason).toBe('stop');
		expect(result.usage).toMatchObject({ promptTokens: 11, completionTokens: 16, totalTokens: 27 });
		expect(result.providerMetadata).toMatchObject({ reasoning_content: 'Reasoning with xhigh effort about: Name a fern' });
	});

	it('makes a round trip with two tool calls: the calls out, their results back in the next request', async () => {
		const model = (await chatModel()).withTools([CALCULATOR]);
		const ask = user('Both: [call:Calculator {"input": "2 + 3"}] [call:Calculator {"input": "6 * 7"}]');
		const first = await model.generate([ask]);
		expect(first.finishReason).toBe('tool-calls');
		const calls = first.message.content.filter((part) => part.type === 'tool-call') as Array<{ toolCallId: string; toolName: string; input: string }>;
		expect(calls.map((c) => [c.toolName, c.input])).toEqual([
			['Calculator', '{"input":"2 + 3"}'],
			['Calculator', '{"input":"6 * 7"}'],
		]);
		expect(new Set(calls.map((c) => c.toolCallId)).size).toBe(2);
		expect(sent().tools).toEqual([{ type: 'function', function: { name: 'Calculator', description: 'Does sums', parameters: CALCULATOR.inputSchema } }]);

		const second = await model.generate([
			ask,
			first.message,
			{ role: 'tool', content: calls.map((c, i) => ({ type: 'tool-result' as const, toolCallId: c.toolCallId, result: ['5', '42'][i] })) },
		]);
		expect((sent(1).messages as IDataObject[]).slice(1)).toEqual([
			{ role: 'assistant', content: null, tool_calls: calls.map((c) => ({ id: c.toolCallId, type: 'function', function: { name: 'Calculator', arguments: c.input } })) },
			{ role: 'tool', tool_call_id: calls[0].toolCallId, content: '5' },
			{ role: 'tool', tool_call_id: calls[1].toolCallId, content: '42' },
		]);
		expect(second.message.content).toEqual([{ type: 'text', text: 'Echo from chat-sonnet-5 with tool results: Calculator: 5 | Calculator: 42' }]);
	});

	it('retries a bare 429 after a pause, and succeeds', async () => {
		const model = await chatModel();
		const result = await model.generate([user('Hello [429-once]')]);
		expect(result.message.content).toEqual([{ type: 'text', text: 'Echo from chat-sonnet-5: Hello [429-once]' }]);
		const [limited, retried] = chatRequests();
		expect(chatRequests()).toHaveLength(2);
		expect(retried.rawBody).toBe(limited.rawBody);
		expect(retried.time - limited.time).toBeGreaterThanOrEqual(250);
	});

	it.each([
		['an unknown model', { model: 'chat-nope-1' }, /^The chat model request failed: the gateway has no channel for this model \(HTTP 503\): "No available channel for model chat-nope-1/],
		['a refused key', { apiKey: 'sk-invalid-0123456789' }, /^The chat model request failed: the gateway refused the API key \(HTTP 401\): "Invalid token/],
	])('ends with our words on %s, after one request', async (_case, options, message) => {
		const model = await chatModel(options);
		const { error } = await failure(model.generate([user('Hello')]));
		expect(error.message).toMatch(message);
		expect(chatRequests()).toHaveLength(1);
	});
});

describe('a streamed answer (stream)', () => {
	it('hands the text on piece by piece as the gateway writes it, then the finish with the real usage', async () => {
		const model = await chatModel({ options: { effort: 'low' } });
		const chunks = await collect(model.stream([user('one two three four five six [stream-pace:60]')]));
		expect(sent()).toMatchObject({ stream: true, stream_options: { include_usage: true }, reasoning_effort: 'low' });
		const deltas = chunks.filter((c) => c.type === 'text-delta') as Array<{ delta: string; at: number }>;
		expect(deltas.map((d) => d.delta).join('')).toBe('Echo from chat-sonnet-5: one two three four five six [stream-pace:60]');
		expect(deltas.length).toBeGreaterThan(5);
		// Paced 60 ms a frame by the gateway: the pieces arrive spread out, not at the end all at once.
		expect(deltas[deltas.length - 1].at - deltas[0].at).toBeGreaterThanOrEqual(300);
		expect(chunks[chunks.length - 1]).toEqual({ type: 'finish', finishReason: 'stop', usage: expect.objectContaining({ promptTokens: 10, completionTokens: 22, totalTokens: 32 }), at: expect.any(Number) });
	});

	it('takes one JSON object from a relay that ignores `stream`: its text as one piece, then the finish; the key echoed in it masked', async () => {
		const relay = http.createServer((req, res) => {
			req.resume();
			req.on('end', () => {
				const completion = { id: 'c1', object: 'chat.completion', model: 'chat-sonnet-5', choices: [{ index: 0, message: { role: 'assistant', content: `Whole answer, key ${KEY}` }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } };
				res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion));
			});
		});
		await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
		try {
			const model = await chatModel({ baseUrl: `http://127.0.0.1:${(relay.address() as AddressInfo).port}` });
			const chunks = await collect(model.stream([user('hello')]));
			expect(chunks.filter((c) => c.type === 'text-delta').map((c) => (c as { delta: string }).delta)).toEqual([expect.stringMatching(/^Whole answer, key /)]);
			expect(JSON.stringify(chunks)).not.toContain(SECRET_PART);
			expect(chunks[chunks.length - 1]).toMatchObject({ type: 'finish', finishReason: 'stop', usage: expect.objectContaining({ totalTokens: 7 }) });
		} finally {
			await new Promise((resolve) => relay.close(resolve));
		}
	});

	it('hands two parallel tool calls on whole, each under its own id, from a stream that sends them in pieces', async () => {
		const model = (await chatModel()).withTools([CALCULATOR]);
		const chunks = await collect(model.stream([user('[tool-pieces] [call:Calculator {"input": "2 + 3"}] [call:Calculator {"input": "6 * 7"}]')]));
		const calls = chunks.filter((c) => c.type === 'tool-call-delta') as Array<{ id: string; name: string; argumentsDelta: string }>;
		expect(calls.map((c) => [c.name, c.argumentsDelta])).toEqual([
			['Calculator', '{"input":"2 + 3"}'],
			['Calculator', '{"input":"6 * 7"}'],
		]);
		expect(calls.every((c) => /^call_/.test(c.id))).toBe(true);
		expect(new Set(calls.map((c) => c.id)).size).toBe(2);
		expect(chunks[chunks.length - 1]).toMatchObject({ type: 'finish', finishReason: 'tool-calls', usage: { totalTokens: expect.any(Number) } });
	});

	it.each([
		['a stream that breaks off', '[break-stream]', /^The chat model request failed: the connection to 127\.0\.0\.1:\d+ was dropped before the answer was complete$/],
		['an error inside the stream', '[stream-error]', /^The chat model request failed: the gateway reported a failure: "upstream stream error: the model stopped unexpectedly" \(code stream_interrupted\)$/],
	])('ends %s with our words, the whole message also in the description a chat shows', async (_case, word, message) => {
		const model = await chatModel();
		const { error } = await failure(model.stream([user(`a long answer ${word} one two three four five six seven`)]));
		expect(error.message).toMatch(message);
		expect(error.description?.startsWith(error.message)).toBe(true);
	});

	it('retries a bare 429 before the stream starts', async () => {
		const model = await chatModel();
		const chunks = await collect(model.stream([user('Hi [429-once]')]));
		expect(chunks.filter((c) => c.type === 'text-delta').length).toBeGreaterThan(0);
		expect(chatRequests()).toHaveLength(2);
	});
});

describe('limits, cancelling and the key', () => {
	const keepAlive = (text = 'Hello') => [user(`${text} [hostile:keepalive-stream]`)];
	const hostileCalls = () => hostile.requests.filter((r) => r.path === '/v1/chat/completions');

	it('gives up on a relay that only sends keep-alive comments at the Timeout, streamed or not', async () => {
		const model = await chatModel({ baseUrl: hostile.baseUrl, options: { timeoutSeconds: 1 } });
		const started = Date.now();
		const whole = await failure(model.generate(keepAlive()));
		expect(whole.error.message).toBe('The chat model request failed: no complete answer within 1 s');
		const streamed = await failure(model.stream(keepAlive()));
		expect(streamed.error.message).toBe('The chat model request failed: no complete answer within 1 s');
		expect(Date.now() - started).toBeLessThan(4000);
		expect(hostileCalls()).toHaveLength(2);
	});

	it('stops the request when the execution is cancelled: the gateway sees the client hang up', async () => {
		const cancel = new AbortController();
		const model = await chatModel({ baseUrl: hostile.baseUrl, cancel: cancel.signal });
		setTimeout(() => cancel.abort(), 300);
		const { error } = await failure(model.stream(keepAlive()));
		expect(error.message).toBe('The chat model request was cancelled');
		await new Promise((resolve) => setTimeout(resolve, 200));
		expect(hostileCalls()).toHaveLength(1);
		expect(hostileCalls()[0].aborted).toBe(true);
	});

	it("stops it on the calling chain's own signal too (LangChain's `signal`), streamed or not", async () => {
		const model = await chatModel({ baseUrl: hostile.baseUrl });
		for (const call of [
			(signal: AbortSignal) => model.stream(keepAlive('stream'), { signal } as object),
			(signal: AbortSignal) => model.generate(keepAlive('whole'), { signal } as object),
		]) {
			const chain = new AbortController();
			setTimeout(() => chain.abort(), 200);
			const { error } = await failure(call(chain.signal));
			expect(error.message).toBe('The chat model request was cancelled');
		}
		await new Promise((resolve) => setTimeout(resolve, 200));
		expect(hostileCalls().map((r) => r.aborted)).toEqual([true, true]);
	});

	it.each([
		['200-error-object', /^The chat model request failed: the gateway reported a failure: "upstream overloaded" \(code overloaded\)$/],
		['200-success-false', /^The chat model request failed: the gateway reported a failure: "channel disabled"$/],
		['200-empty-choices', /^The chat model request failed: the gateway's answer has no choices: /],
	])('reads an error inside a 200 answer (%s) the same way, streamed or not', async (scenario, message) => {
		const model = await chatModel({ baseUrl: hostile.baseUrl });
		const messages = [user(`Hello [hostile:${scenario}]`)];
		expect((await failure(model.generate(messages))).error.message).toMatch(message);
		expect((await failure(model.stream(messages))).error.message).toMatch(message);
	});

	it.each([
		['a 200 answer quoting the key', 'token-in-200', false, /refused the API key: "invalid token Bearer \*\*\*"/],
		['a 401 quoting the key without sk-', '401-secret-part', false, /无效的令牌 token=\*\*\*/],
		['a stream error quoting the key', 'stream-error-key', true, /Authorization: Bearer \*\*\*/],
	])('never shows the key: %s', async (_case, scenario, streamed, message) => {
		const model = await chatModel({ baseUrl: hostile.baseUrl });
		const messages = [user(`Hello [hostile:${scenario}]`)];
		const { error, text } = await failure(streamed ? model.stream(messages) : model.generate(messages));
		expect(error.message).toMatch(message);
		expect(text).not.toContain(KEY);
		expect(text).not.toContain(SECRET_PART);
		expect(hostileCalls()[0].headers.authorization).toBe(`Bearer ${KEY}`);
	});
});

// ---------------------------------------------------------------------------------------------
// n8n's real AI node SDK (from the n8n 2.41.1 the e2e suite installs): its adapter and tracing


interface LcChunk {
	concat(other: LcChunk): LcChunk;
	tool_calls?: Array<{ id?: string; name: string; args: Record<string, unknown> }>;
	content: unknown;
}
interface LcModel {
	bindTools(tools: unknown[]): LcModel;
	invoke(input: string, options?: object): Promise<LcChunk>;
	stream(input: string, options?: object): Promise<AsyncIterable<LcChunk>>;
}

describeWithSdk("with n8n's AI node SDK 0.31.1 (its LangChain adapter and token tracing)", () => {
	const realSdk = useRealSdk();
	const tools = [{ type: 'function', function: { name: 'Calculator', description: 'Does sums', parameters: CALCULATOR.inputSchema } }];

	/** The tracing's reports to n8n: what a chat model sub-node shows as its output. */
	async function adapter() {
		const outputs: IDataObject[] = [];
		let runs = 0;
		const extra = {
			addInputData: () => ({ index: runs++ }),
			addOutputData: (_type: string, _index: number, data: unknown) => {
				if (Array.isArray(data)) outputs.push((data as Array<Array<{ json: IDataObject }>>)[0][0].json);
				else outputs.push({ error: (data as Error).message });
			},
			getNextRunIndex: () => runs,
			logAiEvent: () => undefined,
		};
		const model = (await chatModel({ sdk: await realSdk(), extra })) as unknown as LcModel;
		return { model: model.bindTools(tools), outputs };
	}

	const BOTH = '[tool-pieces] [call:Calculator {"input": "2 + 3"}] [call:Calculator {"input": "6 * 7"}]';

	it('streams two parallel tool calls as two calls, with the real token usage reported to n8n', async () => {
		const { model, outputs } = await adapter();
		let whole: LcChunk | undefined;
		for await (const chunk of await model.stream(BOTH)) whole = whole ? whole.concat(chunk) : chunk;
		expect(whole?.tool_calls?.map((c) => [c.name, c.args])).toEqual([
			['Calculator', { input: '2 + 3' }],
			['Calculator', { input: '6 * 7' }],
		]);
		expect(new Set(whole?.tool_calls?.map((c) => c.id)).size).toBe(2);
		expect(outputs).toHaveLength(1);
		expect(outputs[0].tokenUsage).toEqual({ promptTokens: expect.any(Number), completionTokens: expect.any(Number), totalTokens: expect.any(Number) });
		expect(outputs[0].tokenUsageEstimate).toBeUndefined();
	});

	it('gives the same calls and real usage without streaming', async () => {
		const { model, outputs } = await adapter();
		const message = await model.invoke(BOTH);
		expect(message.tool_calls?.map((c) => c.args)).toEqual([{ input: '2 + 3' }, { input: '6 * 7' }]);
		expect(outputs[0].tokenUsage).toMatchObject({ completionTokens: expect.any(Number) });
	});

	it("honours the signal LangChain passes (the agent's cancel signal)", async () => {
		const { model } = await (async () => {
			const outputs: IDataObject[] = [];
			const extra = { addInputData: () => ({ index: 0 }), addOutputData: () => outputs.push({}), getNextRunIndex: () => 0, logAiEvent: () => undefined };
			return { model: (await chatModel({ sdk: await realSdk(), extra, baseUrl: hostile.baseUrl })) as unknown as LcModel };
		})();
		const controller = new AbortController();
		// cancelled once the gateway has the request (it then keeps the stream alive for ever)
		const sent = () => hostile.requests.filter((r) => r.path === '/v1/chat/completions');
		let cancelledAt = Number.POSITIVE_INFINITY;
		once(
			() => sent().length > 0,
			() => {
				cancelledAt = Date.now();
				controller.abort();
			},
		);
		const error = await (async () => {
			for await (const chunk of await model.stream('Hello [hostile:keepalive-stream]', { signal: controller.signal })) void chunk;
		})().catch((e: unknown) => e as Error);
		expect(error).toBeInstanceOf(Error);
		expect(Date.now() - cancelledAt).toBeLessThan(BUSY_MARGIN_MS);
		expect(await eventually(() => sent()[0].aborted)).toBe(true);
	});
});
