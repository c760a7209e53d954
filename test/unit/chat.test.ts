/**
 * Gateway Chat, the pure parts: reading and checking an item, the chat-completions body, the
 * output of a reply, and a streamed reply rebuilt into the same output.
 */
import type { IDataObject } from 'n8n-workflow';

import { GatewayChat } from '../../nodes/GatewayChat/GatewayChat.node';
import { ChatCompletionStream, chatOutput, chatReplyProblem } from '../../nodes/shared/chat/completions';
import type { ChatCompletion } from '../../nodes/shared/chat/completions';
import { chatRequestBody, readChatRequest } from '../../nodes/GatewayChat/request';
import type { ChatRequest } from '../../nodes/GatewayChat/request';
import { StreamFault, startsEventStream } from '../../nodes/shared/chat/chatCall';
import { checkedJsonValue } from '../../nodes/shared/chat/jsonReply';
import type { JsonRequest } from '../../nodes/shared/chat/jsonReply';
import { GatewayError } from '../../nodes/shared/failures/errors';
import { isErrorShape } from '../../nodes/shared/failures/errorBody';
import { ServerSentEventParser } from '../../nodes/shared/wire/sse';
import { createExecuteContext } from '../helpers/executeContext';

const credentials = { apiKey: 'sk-unit-chat', baseUrl: 'http://127.0.0.1:9' };
const model = (value: string) => ({ __rl: true, mode: 'list', value });
const userSays = (content: string) => ({ values: [{ role: 'user', content }] });

const read = (parameters: IDataObject) => {
	const { ctx } = createExecuteContext({
		parameters: { model: model('chat-sonnet-5'), messages: userSays('Hi'), maxTokens: 4096, stream: false, options: {}, ...parameters },
		credentials,
	});
	return readChatRequest(ctx, 0);
};

const input = (overrides: Partial<ChatRequest> = {}): ChatRequest => ({
	model: 'chat-sonnet-5',
	messages: [{ role: 'user', content: 'Hi' }],
	maxTokens: 4096,
	stream: false,
	extraBody: {},
	includeRawResponse: false,
	deadlineMs: 600_000,
	idleMs: 60_000,
	...overrides,
});

/** Parses SSE text with the shared parser and feeds every event to a fresh chat aggregator. */
function aggregate(sse: string): { stream: ChatCompletionStream; texts: string[] } {
	const stream = new ChatCompletionStream();
	const texts: string[] = [];
	const parser = new ServerSentEventParser();
	for (const event of parser.end(parser.push(sse))) {
		const text = stream.take(event);
		if (text) texts.push(text);
	}
	return { stream, texts };
}

const frame = (payload: unknown) => `data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`;
const chunk = (delta: IDataObject, finish: string | null = null) =>
	frame({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'chat-fable-5', choices: [{ index: 0, delta, finish_reason: finish }] });
const usage = { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 };

function faultOf(run: () => unknown): StreamFault {
	try {
		run();
	} catch (error) {
		// A StreamFault and nothing else: callChat turns it into the GatewayError of the call.
		if (error instanceof StreamFault) return error;
		throw error;
	}
	throw new Error('expected a StreamFault');
}

describe('Gateway Chat description', () => {
	const { description } = new GatewayChat();
	// The parameter names, without the notices under Model (the picked model's output limit).
	const names = (props: Array<{ name: string; type?: string }>) => props.filter((p) => p.type !== 'notice').map((p) => p.name);

	it('has the contract names and defaults', () => {
		expect(description.name).toBe('gatewayChat');
		expect(description.usableAsTool).toBe(true);
		expect(names(description.properties)).toEqual(['model', 'messages', 'maxTokens', 'stream', 'options']);
		const byName = Object.fromEntries(description.properties.map((p) => [p.name, p]));
		expect(byName.model.default).toEqual({ mode: 'list', value: 'chat-sonnet-5' });
		expect(byName.maxTokens.default).toBe(4096);
		expect(byName.stream.default).toBe(false);
		expect(byName.messages.default).toEqual({ values: [{ role: 'user', content: '' }] });
		const options = byName.options.options as Array<{ name: string; hint?: string }>;
		expect(names(options)).toEqual([
			'binaryAttachments',
			'concurrency',
			'effort',
			'extraBody',
			'idleTimeoutSeconds',
			'urlAttachments',
			'includeRawResponse',
			'responseFormat',
			'jsonSchema',
			'stop',
			'temperature',
			'timeoutSeconds',
			'topP',
		]);
		expect(options.find((o) => o.name === 'timeoutSeconds')).toMatchObject({ default: 600, type: 'number' });
		expect(options.find((o) => o.name === 'idleTimeoutSeconds')).toMatchObject({ displayName: 'Idle Timeout (Seconds)', default: 60, type: 'number' });
		expect(options.find((o) => o.name === 'effort')?.hint).toMatch(/xhigh.*chat-opus-4-8/);
	});
});

describe('readChatRequest', () => {
	it('reads the messages, model and options', () => {
		expect(
			read({
				model: model('chat-opus-4-8'),
				messages: { values: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }] },
				maxTokens: 100,
				stream: true,
				options: { effort: 'xhigh', temperature: 0.2, topP: 0.9, stop: ['END'], extraBody: '{"seed": 7}', includeRawResponse: true },
			}),
		).toEqual({
			model: 'chat-opus-4-8',
			messages: [
				{ role: 'system', content: 'Be brief.' },
				{ role: 'user', content: 'Hi' },
			],
			maxTokens: 100,
			stream: true,
			effort: 'xhigh',
			temperature: 0.2,
			topP: 0.9,
			stopSequences: ['END'],
			extraBody: { seed: 7 },
			includeRawResponse: true,
			deadlineMs: 600_000,
			idleMs: 60_000,
		});
	});

	it('reads Idle Timeout (Seconds), 60 unless set, and takes one above Timeout as it is (Timeout comes first)', () => {
		expect(read({}).idleMs).toBe(60_000);
		expect(read({ options: { idleTimeoutSeconds: 5 } }).idleMs).toBe(5000);
		expect(read({ options: { idleTimeoutSeconds: 900, timeoutSeconds: 30 } }).idleMs).toBe(900_000);
		expect(() => read({ options: { idleTimeoutSeconds: 0 } })).toThrow('"Idle Timeout (Seconds)" must be from 1 to 86400, not 0 (item 0)');
		expect(() => read({ options: { idleTimeoutSeconds: '={{ $json.x }}x' } })).toThrow(/"Idle Timeout \(Seconds\)" must be a whole number/);
	});

	it('reads Timeout (Seconds) as the hard limit of the whole answer', () => {
		expect(read({ options: { timeoutSeconds: 30 } }).deadlineMs).toBe(30_000);
		expect(() => read({ options: { timeoutSeconds: 0 } })).toThrow('"Timeout (Seconds)" must be from 1 to 86400, not 0 (item 0)');
	});

	it.each([
		[{ messages: { values: [] } }, '"Messages" must contain at least one message (item 0)'],
		[{ messages: userSays('   ') }, '"Messages" row 1 (user) has no content (item 0)'],
		[{ messages: { values: [{ role: 'tool', content: 'x' }] } }, '"Messages" row 1 has the role "tool"; use one of: system, user, assistant (item 0)'],
		[{ maxTokens: 0 }, '"Max Tokens" must be at least 1, not 0 (item 0)'],
		[{ maxTokens: 1.5 }, '"Max Tokens" must be a whole number'],
		[{ maxTokens: 128_001 }, '"Max Tokens" must be at most 128000 for chat-sonnet-5, not 128001 (item 0)'],
		[{ model: model('chat-haiku-4-5'), maxTokens: 64_001 }, '"Max Tokens" must be at most 64000 for chat-haiku-4-5'],
		[{ options: { temperature: 2.5 } }, '"Temperature" must be a number from 0 to 2'],
		[{ options: { topP: -1 } }, '"Top P" must be a number from 0 to 1'],
		[{ options: { stop: ['a', 'b', 'c', 'd', 'e'] } }, '"Stop Sequences" may hold at most 4 sequences, not 5'],
		[{ options: { effort: 'huge' } }, '"Effort" must be one of low, medium, high, xhigh, max, not "huge"'],
		[{ options: { extraBody: '{not json' } }, '"Extra Body Fields" is not valid JSON'],
		[{ model: model('') }, '"Model" must not be empty'],
	])('refuses bad input before sending: %j', (parameters, message) => {
		expect(() => read(parameters as IDataObject)).toThrow(message);
	});

	it('does not limit models the catalogue does not know', () => {
		expect(read({ model: model('chat-sonnet-5-20260501'), maxTokens: 500_000 }).maxTokens).toBe(500_000);
		expect(read({ model: model('chat-opus-4-7'), maxTokens: 200_000 }).maxTokens).toBe(200_000);
	});

	it('accepts one stop text given by an expression', () => {
		expect(read({ options: { stop: 'END' } }).stopSequences).toEqual(['END']);
	});
});

describe('chatRequestBody', () => {
	it('sends the required fields and leaves unset options out', () => {
		expect(chatRequestBody(input())).toEqual({
			model: 'chat-sonnet-5',
			messages: [{ role: 'user', content: 'Hi' }],
			max_tokens: 4096,
			stream: false,
		});
	});

	it('maps every option to its gateway field, and asks for usage when streaming', () => {
		expect(chatRequestBody(input({ stream: true, effort: 'high', temperature: 0, topP: 0.5, stopSequences: ['\n\n'] }))).toEqual({
			model: 'chat-sonnet-5',
			messages: [{ role: 'user', content: 'Hi' }],
			max_tokens: 4096,
			stream: true,
			stream_options: { include_usage: true },
			reasoning_effort: 'high',
			temperature: 0,
			top_p: 0.5,
			stop: ['\n\n'],
		});
	});

	it('merges Extra Body Fields, the node fields winning', () => {
		const body = chatRequestBody(
			input({ stream: true, extraBody: { seed: 7, model: 'other', max_tokens: 1, stream_options: { chunk_size: 3 }, reasoning_effort: 'low' } }),
		);
		expect(body).toMatchObject({ seed: 7, model: 'chat-sonnet-5', max_tokens: 4096, stream_options: { chunk_size: 3, include_usage: true }, reasoning_effort: 'low' });
	});
});

describe('chatOutput', () => {
	const completion: ChatCompletion = {
		id: 'chatcmpl-1',
		object: 'chat.completion',
		model: 'chat-fable-5',
		choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there', reasoning_content: 'Thinking…' }, finish_reason: 'stop' }],
		usage,
	};

	it('gives text, model, finishReason, usage and reasoning', () => {
		expect(chatOutput(completion)).toEqual({ text: 'Hello there', model: 'chat-fable-5', finishReason: 'stop', usage, reasoning: 'Thinking…' });
	});

	it('leaves reasoning out when the gateway sent none', () => {
		const plain = { ...completion, choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'length' }] };
		expect(chatOutput(plain)).toEqual({ text: 'Hi', model: 'chat-fable-5', finishReason: 'length', usage });
	});

	it('recognises an error body sent with a 200, and an answer without a reply', () => {
		expect(isErrorShape({ error: { message: 'upstream failed' } })).toBe(true);
		expect(isErrorShape(completion)).toBe(false);
		expect(chatReplyProblem({ error: { message: 'upstream failed' } })).toBe('choices');
		expect(chatReplyProblem({ choices: [] })).toBe('choices');
		expect(chatReplyProblem({ choices: [{ index: 0, finish_reason: 'stop' }] })).toBe('message in its first choice');
		expect(chatReplyProblem(completion)).toBeUndefined();
	});
});

describe('ChatCompletionStream', () => {
	const full =
		chunk({ role: 'assistant', content: '' }) +
		chunk({ reasoning_content: 'Let me ' }) +
		chunk({ reasoning_content: 'think.' }) +
		chunk({ content: 'Hello' }) +
		chunk({ content: ' there' }) +
		chunk({}, 'stop') +
		frame({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'chat-fable-5', choices: [], usage }) +
		frame('[DONE]');

	it('rebuilds the reply, so the output equals the non-streamed one', () => {
		const { stream, texts } = aggregate(full);
		expect(stream.finished).toBe(true);
		expect(texts).toEqual(['Hello', ' there']);
		expect(chatOutput(stream.reply())).toEqual({ text: 'Hello there', model: 'chat-fable-5', finishReason: 'stop', usage, reasoning: 'Let me think.' });
	});

	it('is not finished without [DONE]', () => {
		expect(aggregate(full.replace(frame('[DONE]'), '')).stream.finished).toBe(false);
	});

	it('throws the error the stream carries', () => {
		const error = { message: 'upstream stream error', type: 'upstream_error', code: 'stream_interrupted' };
		const broken = chunk({ content: 'Hel' }) + frame({ error });
		expect(faultOf(() => aggregate(broken)).payload).toEqual({ error });
	});

	it('throws on an event that is not JSON, keeping what was sent', () => {
		const fault = faultOf(() => aggregate('data: {"choices": [\n\n'));
		expect(fault.problem).toBe('the gateway sent a stream event that is not a JSON object');
		expect(fault.sent).toBe('{"choices": [');
	});

	it('takes `data: [DONE] ` with a trailing space as the end mark', () => {
		expect(aggregate(chunk({ content: 'Hi' }) + 'data: [DONE] \n\n').stream.finished).toBe(true);
	});

	it('rebuilds streamed tool calls', () => {
		const call = (delta: IDataObject) => chunk({ tool_calls: [delta] });
		const { stream } = aggregate(
			call({ index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '' } }) +
				call({ index: 0, function: { arguments: '{"q":' } }) +
				call({ index: 0, function: { arguments: '"fox"}' } }) +
				chunk({}, 'tool_calls') +
				frame('[DONE]'),
		);
		expect(chatOutput(stream.reply())).toMatchObject({
			finishReason: 'tool_calls',
			toolCalls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"fox"}' } }],
		});
	});
});

describe('checkedJsonValue: the top-level type asked for', () => {
	const check = (json: JsonRequest, value: unknown) => () => checkedJsonValue({ what: 'The chat request', itemIndex: 0, json, fields: {} }, value);
	const schema = (type: unknown): JsonRequest => ({ format: 'jsonSchema', schema: { type } as IDataObject });

	it('JSON Object, and a schema without a type: an object only', () => {
		for (const json of [{ format: 'jsonObject' } as JsonRequest, { format: 'jsonSchema', schema: { properties: {} } } as JsonRequest]) {
			expect(check(json, { a: 1 })()).toEqual({ a: 1 });
			for (const value of [null, [], 'x', 1, true]) expect(check(json, value)).toThrow(/not a JSON object$/);
		}
	});

	it('the type or types the schema names; an integer is a whole number', () => {
		expect(check(schema('array'), [1])()).toEqual([1]);
		expect(check(schema(['string', 'null']), null)()).toBeNull();
		expect(check(schema('integer'), 3)()).toBe(3);
		expect(check(schema('integer'), 3.5)).toThrow("The chat request failed: the model's answer is a JSON number, not a whole number");
		expect(check(schema('number'), 3.5)()).toBe(3.5);
		expect(check(schema(['array', 'object']), 'x')).toThrow("the model's answer is a JSON string, not a list or a JSON object");
	});

	it('quotes what arrived', () => {
		let error: GatewayError | undefined;
		try {
			check({ format: 'jsonObject' }, [1, 2, 3])();
		} catch (thrown) {
			error = thrown as GatewayError;
		}
		expect(error?.fullMessage).toMatch(/^The chat request failed: the model's answer is a list, not a JSON object: "\[1,2,3\]"/);
	});
});

describe('startsEventStream: a streamed body is an event stream only when it begins like one', () => {
	it.each([['d', true], ['e', true], [':', true], ['i', true], ['r', true], ['{', false], ['[', false], ['n', false], ['"', false], ['<', false], ['', false]])('%j: %s', (first, expected) => {
		expect(startsEventStream(first)).toBe(expected);
	});
});
