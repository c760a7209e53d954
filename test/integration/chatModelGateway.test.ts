/**
 * The loopback gateway keeps the Gateway Chat Model's tool round trips honest (test/gateway/chat.js,
 * README "Tool calls"): a tool result must answer a call the assistant made, every call must be
 * answered, and a call comes back as the gateway issued it. Also the two magic words the chat
 * model's tests use: `[tool-pieces]` (parallel calls streamed the way the real API streams them)
 * and `[stream-pace:MS]` (a stream written slowly, as a model writes). Driven with the official
 * `openai` client where it can be.
 */
import OpenAI from 'openai';

import { TEST_KEY, useGateway } from '../gateway/testing';

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const env = useGateway();
let client: OpenAI;
beforeAll(() => {
	client = new OpenAI({ baseURL: `${env.gateway.baseUrl}/v1`, apiKey: TEST_KEY, maxRetries: 0 });
});

const TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = [
	{ type: 'function', function: { name: 'Calculator', parameters: { type: 'object', properties: { input: { type: 'string' } } } } },
];
const ASK: Message = { role: 'user', content: 'Both [call:Calculator {"input": "2 + 3"}] [call:Calculator {"input": "6 * 7"}]' };

async function firstTurn() {
	const completion = await client.chat.completions.create({ model: 'chat-sonnet-5', messages: [ASK], tools: TOOLS });
	const { message } = completion.choices[0];
	const calls = message.tool_calls!.filter((c) => c.type === 'function');
	return { message, calls };
}

const refusal = async (messages: Message[]) =>
	(await client.chat.completions.create({ model: 'chat-sonnet-5', messages, tools: TOOLS }).catch((e: unknown) => e)) as Error;

describe('tool round trips', () => {
	it('answers with both results when both calls come back answered, in one assistant message or one per call', async () => {
		const { message, calls } = await firstTurn();
		const results: Message[] = calls.map((call, i) => ({ role: 'tool', tool_call_id: call.id, content: ['5', '42'][i] }));
		const together = await client.chat.completions.create({ model: 'chat-sonnet-5', messages: [ASK, message, ...results], tools: TOOLS });
		expect(together.choices[0].message.content).toBe('Echo from chat-sonnet-5 with tool results: Calculator: 5 | Calculator: 42');
		// n8n's AI Agent sends each call back as an assistant message of its own, with the call's id added to its arguments.
		const oneByOne: Message[] = calls.flatMap((call, i) => [
			{ role: 'assistant', content: null, tool_calls: [{ ...call, function: { ...call.function, arguments: JSON.stringify({ ...JSON.parse(call.function.arguments), id: call.id }) } }] },
			results[i],
		]) as Message[];
		const separate = await client.chat.completions.create({ model: 'chat-sonnet-5', messages: [ASK, ...oneByOne], tools: TOOLS });
		expect(separate.choices[0].message.content).toBe('Echo from chat-sonnet-5 with tool results: Calculator: 5 | Calculator: 42');
	});

	it('refuses a call left without its result, as the real API does', async () => {
		const { message, calls } = await firstTurn();
		const error = await refusal([ASK, message, { role: 'tool', tool_call_id: calls[0].id, content: '5' }]);
		expect(error).toBeInstanceOf(OpenAI.BadRequestError);
		expect(error.message).toContain(`The following tool_call_ids did not have response messages: ${calls[1].id}`);
	});

	it('refuses a tool result that answers no call of the assistant message before it', async () => {
		const error = await refusal([ASK, { role: 'tool', tool_call_id: 'call_made_up', content: '5' }]);
		expect(error).toBeInstanceOf(OpenAI.BadRequestError);
		expect(error.message).toContain("a message with role 'tool' must be a response to a preceding message with 'tool_calls' (no open call call_made_up)");
	});

	it('refuses a call that comes back changed: two calls glued into one, or another tool', async () => {
		const { message, calls } = await firstTurn();
		const glued = { ...calls[0], function: { name: 'Calculator', arguments: '{"input":"2 + 3"}{"input":"6 * 7"}' } };
		const error = await refusal([ASK, { ...message, tool_calls: [glued] }, { role: 'tool', tool_call_id: glued.id, content: '5' }]);
		expect(error.message).toContain(`${glued.id} comes back changed (issued as Calculator {"input":"2 + 3"})`);
		const renamed = { ...calls[1], function: { ...calls[1].function, name: 'Other' } };
		const other = await refusal([ASK, { ...message, tool_calls: [calls[0], renamed] }, ...calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: '1' }))]);
		expect(other.message).toContain(`${renamed.id} comes back changed`);
	});
});

describe('magic words of the streamed answers', () => {
	it('[tool-pieces] streams parallel calls one after the other: id and name first, then the arguments in pieces under the index only', async () => {
		const stream = await client.chat.completions.create({
			model: 'chat-sonnet-5',
			messages: [{ role: 'user', content: '[tool-pieces] [call:Calculator {"input": "2 + 3"}] [call:Calculator {"input": "6 * 7"}]' }],
			tools: TOOLS,
			stream: true,
		});
		const deltas: unknown[] = [];
		for await (const chunk of stream) for (const call of chunk.choices[0]?.delta.tool_calls ?? []) deltas.push(call);
		expect(deltas).toEqual([
			{ index: 0, id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'Calculator', arguments: '' } },
			{ index: 0, function: { arguments: '{"input":' } },
			{ index: 0, function: { arguments: '"2 + 3"}' } },
			{ index: 1, id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'Calculator', arguments: '' } },
			{ index: 1, function: { arguments: '{"input":' } },
			{ index: 1, function: { arguments: '"6 * 7"}' } },
		]);
	});

	it('[stream-pace:MS] writes each frame MS ms after the one before', async () => {
		const stream = await client.chat.completions.create({
			model: 'chat-sonnet-5',
			messages: [{ role: 'user', content: 'one two three [stream-pace:80]' }],
			stream: true,
		});
		const times: number[] = [];
		for await (const chunk of stream) if (chunk.choices[0]?.delta.content) times.push(Date.now());
		expect(times.length).toBeGreaterThanOrEqual(5);
		const gaps = times.slice(1).map((t, i) => t - times[i]);
		expect(Math.min(...gaps)).toBeGreaterThanOrEqual(60);
	});
});
