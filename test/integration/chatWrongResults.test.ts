/**
 * Wrong results of issue 18, over real HTTP to a tiny loopback server that answers exactly what
 * each test scripts: JSON mode that accepts what is not the asked-for JSON, an empty stream taken
 * for an empty success, a streamed 200 that is not a stream read as "the stream ended", a tool
 * call with malformed arguments run anyway, and a Gateway Chat Model without `max_tokens`.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import type { ChatModel, FunctionTool, StreamChunk } from '@n8n/ai-node-sdk';
import type { IDataObject, ISupplyDataFunctions } from 'n8n-workflow';

import { complete } from '../../nodes/GatewayChat/complete';
import { supplyGatewayChatModel } from '../../nodes/GatewayChatModel/supply';
import { createMessage } from '../../nodes/GatewayMessages/create';
import { standInSdk } from '../helpers/chatModelSdk';
import { createExecuteContext } from '../helpers/executeContext';
import { describeWithSdk, useRealSdk } from '../helpers/realSdk';

const KEY = 'sk-wrong-results-0123456789';

interface Answer {
	body: string;
	contentType?: string;
}

/** Answers every POST with the next scripted answer (the last one again when they run out). */
let answers: Answer[] = [];
const received: IDataObject[] = [];
let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
	server = http.createServer((request, response) => {
		const parts: Buffer[] = [];
		request.on('data', (part: Buffer) => parts.push(part));
		request.on('end', () => {
			received.push(JSON.parse(Buffer.concat(parts).toString('utf8') || '{}') as IDataObject);
			const answer = answers.length > 1 ? answers.shift()! : answers[0];
			response.writeHead(200, { 'content-type': answer.contentType ?? 'application/json' });
			response.end(answer.body);
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => await new Promise((resolve) => server.close(resolve)));
beforeEach(() => {
	answers = [];
	received.length = 0;
});

const answer = (...list: Answer[]) => {
	answers = list;
};
const json = (value: unknown): Answer => ({ body: JSON.stringify(value) });
const events = (...data: unknown[]): Answer => ({
	body: data.map((entry) => `data: ${typeof entry === 'string' ? entry : JSON.stringify(entry)}\n\n`).join(''),
	contentType: 'text/event-stream',
});
const namedEvents = (...list: Array<[string, unknown]>): Answer => ({
	body: list.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join(''),
	contentType: 'text/event-stream',
});

function completion(content: string | null, extra: IDataObject = {}): IDataObject {
	return { id: 'c1', object: 'chat.completion', model: 'chat-sonnet-5', choices: [{ index: 0, message: { role: 'assistant', content, ...extra }, finish_reason: 'stop' }] };
}

/** The same completion as a stream: one content chunk, the finish, [DONE]. */
function streamedCompletion(content: string): Answer {
	return events(
		{ id: 'c1', model: 'chat-sonnet-5', choices: [{ index: 0, delta: { role: 'assistant', content } }] },
		{ id: 'c1', model: 'chat-sonnet-5', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
		'[DONE]',
	);
}

function nativeMessage(content: IDataObject[]): IDataObject {
	return { id: 'm1', type: 'message', role: 'assistant', model: 'chat-sonnet-5', content, stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } };
}

/** A native message as its event stream. */
function streamedMessage(content: IDataObject[]): Answer {
	const list: Array<[string, unknown]> = [['message_start', { type: 'message_start', message: { ...nativeMessage([]), content: [] } }]];
	content.forEach((block, index) => {
		if (block.type === 'tool_use') {
			list.push(['content_block_start', { type: 'content_block_start', index, content_block: { ...block, input: {} } }]);
			list.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } }]);
		} else {
			list.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
			list.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } }]);
		}
		list.push(['content_block_stop', { type: 'content_block_stop', index }]);
	});
	list.push(['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } }]);
	list.push(['message_stop', { type: 'message_stop' }]);
	return namedEvents(...list);
}

async function runNode(node: 'chat' | 'messages', parameters: IDataObject): Promise<IDataObject> {
	const { ctx } = createExecuteContext({
		parameters: { model: { __rl: true, mode: 'list', value: 'chat-sonnet-5' }, messages: { values: [{ role: 'user', content: 'Hello' }] }, maxTokens: 4096, stream: false, options: {}, ...parameters },
		credentials: { apiKey: KEY, baseUrl },
		nodeType: `n8n-nodes-model-gateway.${node === 'chat' ? 'gatewayChat' : 'gatewayMessages'}`,
	});
	const [output] = await (node === 'chat' ? complete : createMessage).call(ctx);
	return output[0].json;
}

async function failureOf(work: Promise<unknown>): Promise<Error & { description?: string }> {
	return (await work.then(
		(value) => {
			throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
		},
		(error: unknown) => error,
	)) as Error & { description?: string };
}

const JSON_OBJECT = { responseFormat: 'jsonObject' };

describe('JSON Response Format: an object, or the top-level type the schema asks for', () => {
	describe.each([false, true])('Gateway Chat, stream %s', (stream) => {
		const reply = (text: string) => (stream ? streamedCompletion(text) : json(completion(text)));

		it.each([
			['null', 'null'],
			['"just words"', 'a JSON string'],
			['[1,2,3]', 'a list'],
			['42', 'a JSON number'],
		])('refuses %s when JSON Object was asked for', async (text, what) => {
			answer(reply(text));
			const error = await failureOf(runNode('chat', { stream, options: JSON_OBJECT }));
			expect(error.message).toContain(`The chat request failed: the model's answer is ${what}, not a JSON object`);
			expect(error.message).toContain(text);
		});

		it('takes a list when the schema asks for one, and refuses an object then', async () => {
			const options = { responseFormat: 'jsonSchema', jsonSchema: '{"type": "array", "items": {"type": "number"}}' };
			answer(reply('[1,2,3]'));
			expect((await runNode('chat', { stream, options })).data).toEqual([1, 2, 3]);
			answer(reply('{"a": 1}'));
			expect((await failureOf(runNode('chat', { stream, options }))).message).toContain("the model's answer is a JSON object, not a list");
		});

		it('still takes an object', async () => {
			answer(reply('{"total": 3}'));
			expect((await runNode('chat', { stream, options: JSON_OBJECT })).data).toEqual({ total: 3 });
		});
	});

	describe.each([false, true])('Gateway Messages, stream %s', (stream) => {
		const reply = (content: IDataObject[]) => (stream ? streamedMessage(content) : json(nativeMessage(content)));

		it.each([
			[[1, 2, 3], 'a list'],
			['words', 'a JSON string'],
			[null, 'null'],
		])('refuses a respond tool input of %j', async (input, what) => {
			answer(reply([{ type: 'tool_use', id: 'toolu_1', name: 'respond', input }]));
			const error = await failureOf(runNode('messages', { stream, options: JSON_OBJECT }));
			expect(error.message).toContain(`The messages request failed: the model's answer is ${what}, not a JSON object`);
		});

		it('refuses an answer in words that is a JSON list (thinking on, so the tool is offered, not forced)', async () => {
			answer(reply([{ type: 'text', text: '[1,2,3]' }]));
			const error = await failureOf(runNode('messages', { stream, options: { ...JSON_OBJECT, thinking: 'adaptive' } }));
			expect(error.message).toContain("the model's answer is a list, not a JSON object");
		});

		it('takes an object', async () => {
			answer(reply([{ type: 'tool_use', id: 'toolu_1', name: 'respond', input: { total: 3 } }]));
			expect((await runNode('messages', { stream, options: JSON_OBJECT })).data).toEqual({ total: 3 });
		});
	});
});

describe('an empty stream is the same error as an empty answer', () => {
	it('Gateway Chat: only `data: [DONE]` fails as `{"choices": []}` does without Stream', async () => {
		answer(json({ id: 'c1', object: 'chat.completion', choices: [] }));
		const plain = await failureOf(runNode('chat', { stream: false }));
		answer(events('[DONE]'));
		const streamed = await failureOf(runNode('chat', { stream: true }));
		const headline = (message: string) => message.split(':').slice(0, 2).join(':');
		expect(headline(plain.message)).toBe("The chat request failed: the gateway's answer has no choices");
		expect(headline(streamed.message)).toBe(headline(plain.message));
		expect(streamed.message).not.toContain('stream ended');
	});

	it('Gateway Messages: a stream with no message (only its end) fails as an answer without content does', async () => {
		answer(json({ type: 'message' }));
		const plain = await failureOf(runNode('messages', { stream: false }));
		const headline = (message: string) => message.split(':').slice(0, 2).join(':');
		expect(headline(plain.message)).toBe("The messages request failed: the gateway's answer has no content");
		for (const empty of [namedEvents(['message_stop', { type: 'message_stop' }]), events('[DONE]')]) {
			answer(empty);
			expect(headline((await failureOf(runNode('messages', { stream: true }))).message)).toBe(headline(plain.message));
		}
	});
});

describe('with Stream on, a 200 that is not a stream is quoted as it is without Stream', () => {
	it.each([
		['null', 'null'],
		['[]', 'a list'],
		['"hello there"', 'a JSON string'],
	])('%s', async (body, what) => {
		for (const node of ['chat', 'messages'] as const) {
			answer({ body });
			const plain = await failureOf(runNode(node, { stream: false }));
			answer({ body, contentType: 'text/event-stream' });
			const streamed = await failureOf(runNode(node, { stream: true }));
			expect(plain.message).toContain(`answered HTTP 200 with ${what} instead of a JSON object`);
			expect(streamed.message).toBe(plain.message);
			expect(streamed.message).not.toContain('stream ended');
		}
	});

	it('an HTML page', async () => {
		const body = '<!DOCTYPE html><html><head><title>Blocked</title></head><body>Request blocked by the firewall</body></html>';
		for (const node of ['chat', 'messages'] as const) {
			answer({ body, contentType: 'text/html' });
			const plain = await failureOf(runNode(node, { stream: false }));
			const streamed = await failureOf(runNode(node, { stream: true }));
			expect(plain.message).toContain('with a page instead of JSON');
			expect(plain.message).toContain('Request blocked by the firewall');
			expect(streamed.message).toBe(plain.message);
		}
	});
});

// ---------------------------------------------------------------------------------------------
// The Gateway Chat Model


const WEATHER: FunctionTool = { type: 'function', name: 'weather', description: 'The weather', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } };

async function chatModel(options: IDataObject = {}, model = 'chat-sonnet-5'): Promise<ChatModel> {
	const { ctx } = createExecuteContext({
		parameters: { model: { __rl: true, mode: 'id', value: model }, options },
		credentials: { apiKey: KEY, baseUrl },
		nodeName: 'Gateway Chat Model',
	});
	const supplied = await supplyGatewayChatModel(ctx as unknown as ISupplyDataFunctions, 0, async () => standInSdk);
	return (supplied.response as ChatModel).withTools([WEATHER]);
}

const ask = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'Weather in Paris?' }] }];

async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
	const chunks: StreamChunk[] = [];
	for await (const chunk of stream) chunks.push(chunk);
	return chunks;
}

function toolCallAnswer(args: string): IDataObject {
	return {
		id: 'c1',
		model: 'chat-sonnet-5',
		choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: args } }] }, finish_reason: 'tool_calls' }],
	};
}

function streamedToolCall(pieces: string[]): Answer {
	return events(
		{ id: 'c1', choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'weather', arguments: '' } }] } }] },
		...pieces.map((piece) => ({ id: 'c1', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] } }] })),
		{ id: 'c1', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
		'[DONE]',
	);
}

describe('Gateway Chat Model: malformed tool arguments fail the model call, never run and never an empty answer', () => {
	// The key in the arguments: the error quotes them, masked.
	const cases: Array<[string, string, RegExp]> = [
		['not JSON', `city=Paris&key=${KEY}`, /not JSON/],
		['cut off', '{"city": "Par', /not JSON/],
		['a list', '["Paris"]', /not a JSON object \(a list\)/],
		['a string', '"Paris"', /not a JSON object \(a JSON string\)/],
		['null', 'null', /not a JSON object \(null\)/],
	];
	const expectNamed = (error: Error & { description?: string }, args: string, problem: RegExp) => {
		expect(error.message).toMatch(/^The chat model request failed: the model called the tool weather with arguments that are /);
		expect(error.message).toMatch(problem);
		expect(error.message).toContain(`"${args.slice(0, 4)}`);
		expect(`${error.message} ${error.description}`).not.toContain(KEY.slice(3));
		expect(error.description).toMatch(/tool was not run/);
	};

	it.each(cases)('generate: %s', async (_what, args, problem) => {
		answer(json(toolCallAnswer(args)));
		expectNamed(await failureOf((await chatModel()).generate(ask)), args, problem);
	});

	it.each(cases)('stream: %s, its pieces streamed', async (_what, args, problem) => {
		answer(streamedToolCall([args.slice(0, 5), args.slice(5)]));
		const chunks: StreamChunk[] = [];
		const error = await failureOf(
			(async () => {
				for await (const chunk of (await chatModel()).stream(ask)) chunks.push(chunk);
			})(),
		);
		expectNamed(error, args, problem);
		expect(chunks.filter((chunk) => chunk.type === 'tool-call-delta')).toEqual([]);
	});

	it('a valid call beside a malformed one is not run either: the answer as a whole fails', async () => {
		const calls = [
			{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city": "Paris"}' } },
			{ id: 'call_2', type: 'function', function: { name: 'clock', arguments: 'now' } },
		];
		answer(json({ id: 'c1', model: 'chat-sonnet-5', choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: calls }, finish_reason: 'tool_calls' }] }));
		const error = await failureOf((await chatModel()).generate(ask));
		expect(error.message).toMatch(/called the tool clock with arguments that are not JSON \(malformed, or cut off\): "now"/);
	});

	it('well-formed arguments still run', async () => {
		answer(json(toolCallAnswer('{"city": "Paris"}')));
		const result = await (await chatModel()).generate(ask);
		expect(result.message.content).toEqual([{ type: 'tool-call', toolCallId: 'call_1', toolName: 'weather', input: '{"city": "Paris"}' }]);
	});
});

describe('Gateway Chat Model: empty and non-stream answers', () => {
	it('a stream of only `data: [DONE]` fails as `{"choices": []}` does', async () => {
		answer(json({ choices: [] }));
		const plain = await failureOf((await chatModel()).generate(ask));
		answer(events('[DONE]'));
		const streamed = await failureOf(collect((await chatModel()).stream(ask)));
		const headline = (message: string) => message.split(':').slice(0, 2).join(':');
		expect(headline(plain.message)).toBe("The chat model request failed: the gateway's answer has no choices");
		expect(headline(streamed.message)).toBe(headline(plain.message));
	});

	it.each([
		['null', 'null'],
		['[]', 'a list'],
	])('a streamed 200 of %s is quoted as without streaming', async (body, what) => {
		answer({ body });
		const plain = await failureOf((await chatModel()).generate(ask));
		answer({ body, contentType: 'text/event-stream' });
		const streamed = await failureOf(collect((await chatModel()).stream(ask)));
		expect(plain.message).toContain(`answered HTTP 200 with ${what} instead of a JSON object`);
		expect(streamed.message).toBe(plain.message);
	});
});

describe('Gateway Chat Model: max_tokens', () => {
	it('sends 4096 when Max Tokens is not set, as Gateway Chat does', async () => {
		answer(json(completion('Sunny')));
		await (await chatModel()).generate(ask);
		expect(received[0].max_tokens).toBe(4096);
	});

	it('sends the Max Tokens the user set', async () => {
		answer(json(completion('Sunny')));
		await (await chatModel({ maxTokens: 300 })).generate(ask);
		expect(received[0].max_tokens).toBe(300);
	});
});

// n8n's real AI node SDK (from the n8n 2.41.1 the e2e suite installs): what the agent gets

interface LcMessage {
	concat(other: LcMessage): LcMessage;
	tool_calls?: Array<{ id?: string; name: string; args: unknown }>;
}
interface LcModel {
	bindTools(tools: unknown[]): LcModel;
	invoke(input: string): Promise<LcMessage>;
	stream(input: string): Promise<AsyncIterable<LcMessage>>;
}

describeWithSdk("with n8n's AI node SDK: malformed arguments fail the call the agent makes", () => {
	const sdk = useRealSdk();

	async function lcModel(): Promise<LcModel> {
		const { ctx } = createExecuteContext({
			parameters: { model: { __rl: true, mode: 'id', value: 'chat-sonnet-5' }, options: {} },
			credentials: { apiKey: KEY, baseUrl },
			nodeName: 'Gateway Chat Model',
		});
		Object.assign(ctx, { addInputData: () => ({ index: 0 }), addOutputData: () => undefined, getNextRunIndex: () => 0, logAiEvent: () => undefined });
		const supplied = await supplyGatewayChatModel(ctx as unknown as ISupplyDataFunctions, 0, sdk);
		return (supplied.response as unknown as LcModel).bindTools([{ type: 'function', function: { name: 'weather', description: 'The weather', parameters: WEATHER.inputSchema } }]);
	}

	const named = /the model called the tool weather with arguments that are not JSON \(malformed, or cut off\): "\{"city": "Par"/;

	it('without streaming', async () => {
		answer(json(toolCallAnswer('{"city": "Par')));
		await expect((await lcModel()).invoke('Weather in Paris?')).rejects.toThrow(named);
	});

	it('streamed, cut off (LangChain would repair the pieces and run the tool)', async () => {
		answer(streamedToolCall(['{"city": ', '"Par']));
		const read = async () => {
			for await (const chunk of await (await lcModel()).stream('Weather in Paris?')) void chunk;
		};
		await expect(read()).rejects.toThrow(named);
	});

	it('well-formed calls are still tool calls, streamed or not', async () => {
		answer(json(toolCallAnswer('{"city": "Paris"}')));
		expect((await (await lcModel()).invoke('Weather?')).tool_calls).toEqual([{ type: 'tool_call', id: 'call_1', name: 'weather', args: { city: 'Paris' } }]);
		answer(streamedToolCall(['{"city": ', '"Paris"}']));
		let whole: LcMessage | undefined;
		for await (const chunk of await (await lcModel()).stream('Weather?')) whole = whole ? whole.concat(chunk) : chunk;
		expect(whole?.tool_calls).toEqual([{ type: 'tool_call', id: 'call_1', name: 'weather', args: { city: 'Paris' } }]);
	});
});

describe('Gateway Chat Model: tool calls as relays really stream them (review of issue 26)', () => {
	const weatherCall = (id: string, city: string, index?: number) => ({ ...(index === undefined ? {} : { index }), id, type: 'function', function: { name: 'weather', arguments: JSON.stringify({ city }) } });
	const calls = (chunks: StreamChunk[]) => chunks.filter((chunk) => chunk.type === 'tool-call-delta').map((chunk) => chunk.type === 'tool-call-delta' && [chunk.id, chunk.argumentsDelta]);

	// Gemini's OpenAI endpoint sends no index; new-api before PR #2701 sent index 0 for every Gemini call: each call has its own id.
	it.each([
		['every call at index 0', 0],
		['no index at all', undefined],
	])('parallel calls with their own ids, %s, are two calls, not one glued call that fails', async (_what, index) => {
		answer(
			events(
				{ id: 'c1', choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [weatherCall('call_a', 'Paris', index)] } }] },
				{ id: 'c1', choices: [{ index: 0, delta: { tool_calls: [weatherCall('call_b', 'Rome', index)] } }] },
				{ id: 'c1', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
				'[DONE]',
			),
		);
		expect(calls(await collect((await chatModel()).stream(ask)))).toEqual([
			['call_a', '{"city":"Paris"}'],
			['call_b', '{"city":"Rome"}'],
		]);
	});

	it('the pieces of one call at index 0 that repeat its id stay one call', async () => {
		const piece = (args: string) => ({ id: 'c1', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_a', function: { arguments: args } }] } }] });
		answer(events({ id: 'c1', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } }] } }] }, piece('{"city": '), piece('"Paris"}'), '[DONE]'));
		expect(calls(await collect((await chatModel()).stream(ask)))).toEqual([['call_a', '{"city": "Paris"}']]);
	});

	it.each([' ', '\n', ' \t '])('arguments of only whitespace (%j) are no arguments, as "" is: the no-parameter tool runs', async (args) => {
		answer(json(toolCallAnswer(args)));
		const result = await (await chatModel()).generate(ask);
		expect(result.message.content).toEqual([{ type: 'tool-call', toolCallId: 'call_1', toolName: 'weather', input: '{}' }]);
	});
});
