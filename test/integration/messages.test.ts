/**
 * Gateway Messages against the loopback gateway over real HTTP: the same output with and without
 * Stream, thinking (adaptive, with a budget, and chat-fable-5's own), effort as
 * output_config.effort, n8n streaming, and errors in the native wrapper.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { createMessage } from '../../nodes/GatewayMessages/create';
import { useGateway } from '../gateway/testing';
import { createExecuteContext } from '../helpers/executeContext';

const KEY = 'sk-integration-messages-0123456789';
const PATH = '/v1/messages';
// One loopback gateway for the file, with a clean log and state before each test.
const env = useGateway();

type Parameters = IDataObject | ((itemIndex: number) => IDataObject);

const say = (content: string) => ({ values: [{ role: 'user', content }] });
const modelId = (value: string) => ({ __rl: true, mode: 'list', value });

async function run(parameters: Parameters, options: { items?: INodeExecutionData[]; continueOnFail?: boolean; streaming?: boolean; apiKey?: string } = {}) {
	const context = createExecuteContext({
		parameters: (itemIndex) => ({
			model: modelId('chat-sonnet-5'),
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
		nodeType: 'n8n-nodes-model-gateway.gatewayMessages',
	});
	const [output] = await createMessage.call(context.ctx);
	return { output, ...context };
}

const sent = () => env.gateway.requests.filter((request) => request.path === PATH);
const sentBody = (index = 0) => JSON.parse(sent()[index].rawBody) as IDataObject;

async function bothWays(parameters: IDataObject) {
	const plain = await run({ ...parameters, stream: false });
	const streamed = await run({ ...parameters, stream: true });
	return { plain: plain.output[0].json, streamed: streamed.output[0].json };
}

describe('Gateway Messages (integration)', () => {
	it('answers with text, content blocks, model, stop reason and usage', async () => {
		const { output } = await run({ messages: { values: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello!' }, { role: 'user', content: 'What now?' }] }, options: { system: 'Be brief.' } });
		expect(output[0].pairedItem).toEqual({ item: 0 });
		expect(output[0].json).toEqual({
			text: '[Be brief.] Echo from chat-sonnet-5: What now?',
			content: [{ type: 'text', text: '[Be brief.] Echo from chat-sonnet-5: What now?' }],
			model: 'chat-sonnet-5',
			stopReason: 'end_turn',
			usage: { input_tokens: 6, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
		});
		expect(sentBody()).toEqual({
			model: 'chat-sonnet-5',
			max_tokens: 4096,
			messages: [
				{ role: 'user', content: 'Hi' },
				{ role: 'assistant', content: 'Hello!' },
				{ role: 'user', content: 'What now?' },
			],
			stream: false,
			system: 'Be brief.',
		});
		expect(sent()[0].headers).toMatchObject({ authorization: `Bearer ${KEY}`, 'anthropic-version': '2023-06-01' });
	});

	it('gives the same output with and without Stream', async () => {
		const { plain, streamed } = await bothWays({ messages: say('Tell me about foxes and their dens in winter'), options: { system: 'Be brief.' } });
		expect(streamed).toEqual(plain);
	});

	it('handles the thinking of chat-fable-5, which always thinks, the same both ways', async () => {
		const { plain, streamed } = await bothWays({ model: modelId('chat-fable-5'), messages: say('Plan a trip') });
		expect(plain.thinking).toBe('Thinking about: Plan a trip');
		expect(plain.text).toBe('Echo from chat-fable-5: Plan a trip');
		expect((plain.content as IDataObject[])[0]).toMatchObject({ type: 'thinking', thinking: 'Thinking about: Plan a trip', signature: expect.any(String) });
		expect(streamed).toEqual(plain);
	});

	it('sends thinking with a budget, and adaptive thinking', async () => {
		const { plain, streamed } = await bothWays({ maxTokens: 3000, options: { thinking: 'enabled', thinkingBudget: 1024 } });
		expect(sentBody()).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 1024 } });
		expect(plain.thinking).toBe('Thinking within 1024 tokens about: Hello');
		expect(streamed).toEqual(plain);
		const adaptive = await run({ options: { thinking: 'adaptive' } });
		expect(sentBody(2)).toMatchObject({ thinking: { type: 'adaptive' } });
		expect(adaptive.output[0].json.thinking).toBe('Thinking about: Hello');
	});

	it('sends effort as output_config.effort', async () => {
		const { plain, streamed } = await bothWays({ model: modelId('chat-opus-4-8'), options: { effort: 'xhigh' } });
		expect(sentBody()).toMatchObject({ output_config: { effort: 'xhigh' } });
		expect(plain.text).toBe('Echo from chat-opus-4-8 (effort: xhigh): Hello');
		expect(streamed).toEqual(plain);
	});

	it('reports stop sequences and cut answers the same both ways', async () => {
		const stopped = await bothWays({ messages: say('alpha STOP beta'), options: { stopSequences: ['STOP'] } });
		expect(stopped.plain).toMatchObject({ stopReason: 'stop_sequence', text: 'Echo from chat-sonnet-5: alpha ' });
		expect(stopped.streamed).toEqual(stopped.plain);
		const cut = await bothWays({ maxTokens: 2, messages: say('one two three four') });
		expect(cut.plain.stopReason).toBe('max_tokens');
		expect(cut.streamed).toEqual(cut.plain);
	});

	it('adds the raw response when asked, for a stream the rebuilt message', async () => {
		const { output } = await run({ stream: true, options: { includeRawResponse: true } });
		expect(output[0].json.rawResponse).toMatchObject({ type: 'message', role: 'assistant', model: 'chat-sonnet-5', stop_reason: 'end_turn', content: [{ type: 'text' }] });
	});

	it('passes only the answer text on to n8n, piece by piece, when the run is streamed', async () => {
		const { output, chunks } = await run({ stream: true, model: modelId('chat-fable-5'), messages: say('Stream these seven words to me please') }, { streaming: true });
		const items = chunks.filter((chunk) => chunk.type === 'item').map((chunk) => chunk.content);
		expect(chunks[0].type).toBe('begin');
		expect(chunks[chunks.length - 1].type).toBe('end');
		expect(items.length).toBeGreaterThan(3);
		expect(items.join('')).toBe(output[0].json.text);
	});

	it('fails a stream that breaks off, and one that carries an error event', async () => {
		await expect(run({ stream: true, messages: say('[break-stream] one two three four five six') })).rejects.toThrow(
			/^The messages request failed: the connection to 127\.0\.0\.1:\d+ was dropped before the answer was complete$/,
		);
		await expect(run({ stream: true, messages: say('[stream-error] one two three four five six') })).rejects.toThrow(
			'The messages request failed: the gateway reported a failure: "Overloaded"',
		);
	});

	it.each([false, true])('explains errors in the native wrapper in plain words (stream %s)', async (stream) => {
		await expect(run({ stream, model: { __rl: true, mode: 'id', value: 'chat-nope-1' } })).rejects.toThrow(
			/^The messages request failed: the gateway has no channel for this model \(HTTP 503\): "No available channel for model chat-nope-1/,
		);
		await expect(run({ stream, options: { temperature: 0.5, thinking: 'adaptive' } })).rejects.toThrow(
			'The messages request failed: the gateway refused the request (HTTP 400): "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode."',
		);
		await expect(run({ stream }, { apiKey: 'sk-noquota-abcdef' })).rejects.toThrow(
			/^The messages request failed: the gateway refused the request for lack of quota or permission \(HTTP 403\)/,
		);
	});

	it('retries a 429 and answers', async () => {
		const { output } = await run({ stream: true, messages: say('[429-once] hi') });
		expect(output[0].json.text).toBe('Echo from chat-sonnet-5: [429-once] hi');
		expect(sent()).toHaveLength(2);
	});

	it('checks the thinking budget before sending anything', async () => {
		await expect(run({ maxTokens: 2000, options: { thinking: 'enabled', thinkingBudget: 2000 } })).rejects.toThrow(
			'"Thinking Budget" must be below "Max Tokens" (2000), not 2000 (item 0)',
		);
		await expect(run({ options: { thinking: 'enabled', thinkingBudget: 512 } })).rejects.toThrow('"Thinking Budget" must be at least 1024, not 512 (item 0)');
		expect(sent()).toHaveLength(0);
	});

	it('with Continue On Fail turns failed items into error items and keeps order', async () => {
		const items = [{ json: {} }, { json: {} }, { json: {} }];
		const { output } = await run((i) => ({ stream: i !== 0, messages: say(i === 1 ? '[break-stream] a b c d e f' : `ok ${i}`) }), { items, continueOnFail: true });
		expect(output.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
		expect(output[0].json.text).toBe('Echo from chat-sonnet-5: ok 0');
		expect(output[1].json.error).toMatch(/^The messages request failed: the connection to 127\.0\.0\.1:\d+ was dropped before the answer was complete$/);
		expect(output[2].json.text).toBe('Echo from chat-sonnet-5: ok 2');
	});
});
