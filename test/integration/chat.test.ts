/**
 * Gateway Chat against the loopback gateway over real HTTP: the same output with and without
 * Stream, reasoning, effort, n8n streaming, and errors (bad key, unknown model, 429, broken and
 * error streams, bad input that must not be sent).
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { complete } from '../../nodes/GatewayChat/complete';
import { useGateway } from '../gateway/testing';
import { createExecuteContext } from '../helpers/executeContext';

const KEY = 'sk-integration-chat-0123456789';
const PATH = '/v1/chat/completions';
// One loopback gateway for the file, with a clean log and state before each test.
const env = useGateway();

type Parameters = IDataObject | ((itemIndex: number) => IDataObject);

interface RunOptions {
	items?: INodeExecutionData[];
	continueOnFail?: boolean;
	streaming?: boolean;
	apiKey?: string;
}

const say = (content: string, system?: string) => ({
	values: [...(system ? [{ role: 'system', content: system }] : []), { role: 'user', content }],
});

async function run(parameters: Parameters, options: RunOptions = {}) {
	const context = createExecuteContext({
		parameters: (itemIndex) => ({
			model: { __rl: true, mode: 'list', value: 'chat-sonnet-5' },
			messages: say('Hello'),
			maxTokens: 4096,
			stream: false,
			options: {},
			...(typeof parameters === 'function' ? parameters(itemIndex) : parameters),
		}),
		items: options.items,
		continueOnFail: options.continueOnFail,
		streaming: options.streaming,
		credentials: { apiKey: options.apiKey ?? KEY, baseUrl: env.gateway.baseUrl },
		nodeType: 'n8n-nodes-model-gateway.gatewayChat',
	});
	const [output] = await complete.call(context.ctx);
	return { output, ...context };
}

const chatRequests = () => env.gateway.requests.filter((request) => request.path === PATH);
const sentBody = (index = 0) => JSON.parse(chatRequests()[index].rawBody) as IDataObject;

/** Runs the same parameters with Stream off and on; returns both outputs. */
async function bothWays(parameters: IDataObject) {
	const plain = await run({ ...parameters, stream: false });
	const streamed = await run({ ...parameters, stream: true });
	return { plain: plain.output[0].json, streamed: streamed.output[0].json };
}

describe('Gateway Chat (integration)', () => {
	it('answers a conversation and reports text, model, finish reason and usage', async () => {
		const { output } = await run({ messages: say('What is n8n?', 'Be brief.') });
		expect(output).toHaveLength(1);
		expect(output[0].pairedItem).toEqual({ item: 0 });
		expect(output[0].json).toEqual({
			text: '[Be brief.] Echo from chat-sonnet-5: What is n8n?',
			model: 'chat-sonnet-5',
			finishReason: 'stop',
			usage: expect.objectContaining({ prompt_tokens: expect.any(Number), completion_tokens: 8, total_tokens: expect.any(Number) }),
		});
		expect(sentBody()).toEqual({
			model: 'chat-sonnet-5',
			messages: [
				{ role: 'system', content: 'Be brief.' },
				{ role: 'user', content: 'What is n8n?' },
			],
			max_tokens: 4096,
			stream: false,
		});
		expect(chatRequests()[0].headers.authorization).toBe(`Bearer ${KEY}`);
	});

	it('gives the same output with and without Stream', async () => {
		const { plain, streamed } = await bothWays({ messages: say('Tell me about foxes and their dens in winter', 'Be brief.') });
		expect(streamed).toEqual(plain);
		expect(sentBody(1)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
	});

	it('returns the reasoning of chat-fable-5, which always thinks, the same both ways', async () => {
		const { plain, streamed } = await bothWays({ model: { __rl: true, mode: 'id', value: 'chat-fable-5' }, messages: say('Plan a trip') });
		expect(plain.reasoning).toBe('Reasoning with adaptive effort about: Plan a trip');
		expect(plain.text).toBe('Echo from chat-fable-5: Plan a trip');
		expect(streamed).toEqual(plain);
	});

	it('sends effort as reasoning_effort', async () => {
		const { plain, streamed } = await bothWays({ model: { __rl: true, mode: 'list', value: 'chat-opus-4-8' }, options: { effort: 'xhigh' } });
		expect(sentBody()).toMatchObject({ reasoning_effort: 'xhigh' });
		expect(plain.reasoning).toBe('Reasoning with xhigh effort about: Hello');
		expect(streamed).toEqual(plain);
	});

	it('reports a cut answer as finishReason length, the same both ways', async () => {
		const { plain, streamed } = await bothWays({ maxTokens: 3, messages: say('one two three four five six') });
		expect(plain).toMatchObject({ finishReason: 'length', text: 'Echo from chat-sonnet-5:' });
		expect(streamed).toEqual(plain);
	});

	it('sends temperature, top_p, stop and Extra Body Fields', async () => {
		const { output } = await run({ messages: say('alpha STOP beta'), options: { temperature: 0.3, topP: 0.8, stop: ['STOP'], extraBody: '{"seed": 7, "max_tokens": 1}' } });
		expect(sentBody()).toMatchObject({ temperature: 0.3, top_p: 0.8, stop: ['STOP'], seed: 7, max_tokens: 4096 });
		expect(output[0].json.text).toBe('Echo from chat-sonnet-5: alpha ');
	});

	it('adds the raw response when asked, for a stream the rebuilt completion', async () => {
		const { output } = await run({ stream: true, options: { includeRawResponse: true } });
		expect(output[0].json.rawResponse).toMatchObject({
			object: 'chat.completion',
			model: 'chat-sonnet-5',
			choices: [{ index: 0, message: { role: 'assistant', content: 'Echo from chat-sonnet-5: Hello' }, finish_reason: 'stop' }],
		});
	});

	it('passes the answer on to n8n piece by piece when the run is streamed', async () => {
		const { output, chunks } = await run({ stream: true, messages: say('Stream these seven words to me please') }, { streaming: true });
		const items = chunks.filter((chunk) => chunk.type === 'item').map((chunk) => chunk.content);
		expect(chunks[0].type).toBe('begin');
		expect(chunks[chunks.length - 1].type).toBe('end');
		expect(items.length).toBeGreaterThan(3);
		expect(items.join('')).toBe(output[0].json.text);
	});

	it('keeps the order and pairing of many items', async () => {
		const items = Array.from({ length: 6 }, (_, i) => ({ json: { i } }));
		const { output } = await run((i) => ({ messages: say(`item ${i}`), stream: i % 2 === 0 }), { items });
		expect(output.map((item) => item.json.text)).toEqual(items.map((_, i) => `Echo from chat-sonnet-5: item ${i}`));
		expect(output.map((item) => item.pairedItem)).toEqual(items.map((_, i) => ({ item: i })));
	});

	it('retries a 429 and answers', async () => {
		const { output } = await run({ stream: true, messages: say('[429-once] hello') });
		expect(output[0].json.text).toBe('Echo from chat-sonnet-5: [429-once] hello');
		expect(chatRequests()).toHaveLength(2);
	});

	it('fails a stream that breaks off, never returning the partial answer', async () => {
		await expect(run({ stream: true, messages: say('[break-stream] one two three four five six seven eight') })).rejects.toThrow(
			/^The chat request failed: the connection to 127\.0\.0\.1:\d+ was dropped before the answer was complete$/,
		);
	});

	it('fails a stream that carries an error, quoting it', async () => {
		await expect(run({ stream: true, messages: say('[stream-error] one two three four five six') })).rejects.toThrow(
			'The chat request failed: the gateway reported a failure: "upstream stream error: the model stopped unexpectedly" (code stream_interrupted)',
		);
	});

	it('tells n8n about a stream error after the text it already passed on', async () => {
		const { ctx, chunks } = createExecuteContext({
			parameters: { model: 'chat-sonnet-5', messages: say('[stream-error] one two three four five six'), maxTokens: 100, stream: true, options: {} },
			credentials: { apiKey: KEY, baseUrl: env.gateway.baseUrl },
			streaming: true,
		});
		await expect(complete.call(ctx)).rejects.toThrow('"upstream stream error: the model stopped unexpectedly"');
		expect(chunks.map((chunk) => chunk.type)).toEqual(expect.arrayContaining(['begin', 'item', 'error']));
		expect(chunks.map((chunk) => chunk.type)).not.toContain('end');
	});

	it.each([false, true])('explains an unknown model in plain words (stream %s)', async (stream) => {
		await expect(run({ stream, model: { __rl: true, mode: 'id', value: 'chat-nope-1' } })).rejects.toThrow(
			/^The chat request failed: the gateway has no channel for this model \(HTTP 503\): "No available channel for model chat-nope-1.*" \(code model_not_found\)$/,
		);
		// A permanent refusal: not retried.
		expect(chatRequests()).toHaveLength(1);
	});

	it('explains a refused key without showing it', async () => {
		const badKey = 'sk-invalid-abcdef123456';
		const error = await run({}, { apiKey: badKey }).catch((e: Error) => e);
		expect((error as Error).message).toMatch(/^The chat request failed: the gateway refused the API key \(HTTP 401\): "Invalid token/);
		const shown = error as Error & { description?: string; context?: unknown };
		expect(JSON.stringify({ ...shown, message: shown.message, description: shown.description, context: shown.context, stack: shown.stack })).not.toContain(
			badKey.slice(3),
		);
	});

	it('refuses bad input before sending anything', async () => {
		await expect(run({ model: { __rl: true, mode: 'list', value: 'chat-haiku-4-5' }, maxTokens: 100_000 })).rejects.toThrow(
			'"Max Tokens" must be at most 64000 for chat-haiku-4-5, not 100000 (item 0)',
		);
		await expect(run({ messages: say('') })).rejects.toThrow('"Messages" row 1 (user) has no content (item 0)');
		expect(chatRequests()).toHaveLength(0);
	});

	it('with Continue On Fail turns failed items into error items and goes on', async () => {
		const items = [{ json: {} }, { json: {} }, { json: {} }];
		const { output } = await run((i) => ({ stream: true, messages: say(i === 1 ? '[stream-error] a b c d e f' : i === 2 ? '' : `ok ${i}`) }), {
			items,
			continueOnFail: true,
		});
		expect(output.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
		expect(output[0].json.text).toBe('Echo from chat-sonnet-5: ok 0');
		expect(output[1].json.error).toBe('The chat request failed: the gateway reported a failure: "upstream stream error: the model stopped unexpectedly" (code stream_interrupted)');
		expect(output[2].json.error).toMatch(/"Messages" row 1 \(user\) has no content \(item 2\)/);
	});
});
