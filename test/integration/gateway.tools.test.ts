// Tool calls of the loopback gateway's chat endpoint (`[call:<tool> {args}]`), driven with the
// official `openai` client: the wire format an AI Agent's OpenAI chat model sends and reads.
import OpenAI from 'openai';
import { TEST_KEY, useGateway } from '../gateway/testing';

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const env = useGateway();
let client: OpenAI;
beforeAll(() => {
	client = new OpenAI({ baseURL: `${env.gateway.baseUrl}/v1`, apiKey: TEST_KEY, maxRetries: 0 });
});

const tool = (name: string): OpenAI.Chat.Completions.ChatCompletionTool => ({
	type: 'function',
	function: { name, description: `the ${name} tool`, parameters: { type: 'object', properties: { q: { type: 'string' } } } },
});
const TOOLS = [tool('Find_Plant'), tool('Make_Image')];

describe('POST /v1/chat/completions with tools', () => {
	it('calls the tool named in the last user message, with its JSON arguments, then answers with the result', async () => {
		const messages: Message[] = [
			{ role: 'system', content: 'Use tools' },
			{ role: 'user', content: 'Look it up [call:Find_Plant {"q": "fern [wild]", "n": {"max": 2}}] please' },
		];
		const first = await client.chat.completions.create({ model: 'chat-sonnet-5', messages, tools: TOOLS });
		expect(first.choices[0].finish_reason).toBe('tool_calls');
		const { message } = first.choices[0];
		expect(message.content).toBeNull();
		expect(message.tool_calls).toEqual([
			{ id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'Find_Plant', arguments: '{"q":"fern [wild]","n":{"max":2}}' } },
		]);

		const call = message.tool_calls![0];
		messages.push(message, { role: 'tool', tool_call_id: call.id, content: '{"found": 3}' });
		const second = await client.chat.completions.create({ model: 'chat-sonnet-5', messages, tools: TOOLS });
		expect(second.choices[0]).toMatchObject({
			finish_reason: 'stop',
			message: { role: 'assistant', content: '[Use tools] Echo from chat-sonnet-5 with tool results: Find_Plant: {"found": 3}' },
		});
	});

	it('makes one tool call per [call:…] word, arguments optional', async () => {
		const completion = await client.chat.completions.create({
			model: 'chat-haiku-4-5',
			messages: [{ role: 'user', content: '[call:Make_Image] and [call:Find_Plant {"q": "ivy"}]' }],
			tools: TOOLS,
		});
		const calls = completion.choices[0].message.tool_calls!.map((c) => (c.type === 'function' ? [c.function.name, c.function.arguments] : []));
		expect(calls).toEqual([
			['Make_Image', '{}'],
			['Find_Plant', '{"q":"ivy"}'],
		]);
		expect(new Set(completion.choices[0].message.tool_calls!.map((c) => c.id)).size).toBe(2);
	});

	it('streams a tool call as one delta, then finish_reason tool_calls', async () => {
		const stream = await client.chat.completions.create({
			model: 'chat-sonnet-5',
			messages: [{ role: 'user', content: '[call:Find_Plant {"q": "moss"}]' }],
			tools: TOOLS,
			stream: true,
		});
		const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
		for await (const chunk of stream) chunks.push(chunk);
		expect(chunks[0].choices[0].delta.tool_calls).toEqual([
			{ index: 0, id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'Find_Plant', arguments: '{"q":"moss"}' } },
		]);
		expect(chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean)).toEqual(['tool_calls']);
	});

	it('refuses a tool the request does not offer, naming the offered ones', async () => {
		const error = await client.chat.completions
			.create({ model: 'chat-sonnet-5', messages: [{ role: 'user', content: '[call:Water_Plant]' }], tools: TOOLS })
			.catch((e: unknown) => e);
		expect(error).toBeInstanceOf(OpenAI.BadRequestError);
		expect((error as Error).message).toContain('[call:Water_Plant] names a tool the request does not offer (offered: Find_Plant, Make_Image)');
	});

	it('refuses arguments that are not a JSON object', async () => {
		const error = await client.chat.completions
			.create({ model: 'chat-sonnet-5', messages: [{ role: 'user', content: '[call:Find_Plant {"q": ]' }], tools: TOOLS })
			.catch((e: unknown) => e);
		expect(error).toBeInstanceOf(OpenAI.BadRequestError);
		expect((error as Error).message).toContain('needs a JSON object of arguments');
	});

	it('only echoes [call:…] when no tools are offered', async () => {
		const completion = await client.chat.completions.create({
			model: 'chat-sonnet-5',
			messages: [{ role: 'user', content: 'say [call:Find_Plant]' }],
		});
		expect(completion.choices[0].message.content).toBe('Echo from chat-sonnet-5: say [call:Find_Plant]');
	});
});
