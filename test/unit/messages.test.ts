/**
 * Gateway Messages, the pure parts: reading and checking an item (thinking budget included), the
 * native messages body, the output of a message, and an event stream rebuilt into the same output.
 */
import type { IDataObject } from 'n8n-workflow';

import { GatewayMessages } from '../../nodes/GatewayMessages/GatewayMessages.node';
import { MessageEventStream, messagesOutput, messagesReplyProblem } from '../../nodes/GatewayMessages/reply';
import type { NativeMessage } from '../../nodes/GatewayMessages/reply';
import { MESSAGES_HEADERS, messagesRequestBody, readMessagesRequest } from '../../nodes/GatewayMessages/request';
import type { MessagesRequest } from '../../nodes/GatewayMessages/request';
import { StreamFault } from '../../nodes/shared/chat/chatCall';
import { isErrorShape } from '../../nodes/shared/failures/errorBody';
import { ServerSentEventParser } from '../../nodes/shared/wire/sse';
import { createExecuteContext } from '../helpers/executeContext';

const credentials = { apiKey: 'sk-unit-messages', baseUrl: 'http://127.0.0.1:9' };
const model = (value: string) => ({ __rl: true, mode: 'list', value });

const read = (parameters: IDataObject) => {
	const { ctx } = createExecuteContext({
		parameters: { model: model('chat-sonnet-5'), messages: { values: [{ role: 'user', content: 'Hi' }] }, maxTokens: 4096, stream: false, options: {}, ...parameters },
		credentials,
	});
	return readMessagesRequest(ctx, 0);
};

const input = (overrides: Partial<MessagesRequest> = {}): MessagesRequest => ({
	model: 'chat-sonnet-5',
	messages: [{ role: 'user', content: 'Hi' }],
	maxTokens: 4096,
	stream: false,
	thinking: 'off',
	extraBody: {},
	includeRawResponse: false,
	deadlineMs: 600_000,
	idleMs: 60_000,
	...overrides,
});

const event = (type: string, payload: IDataObject) => `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;
const usage = { input_tokens: 3, output_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
const head = { id: 'msg_1', type: 'message', role: 'assistant', model: 'chat-fable-5' };

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

function aggregate(sse: string): { stream: MessageEventStream; texts: string[] } {
	const stream = new MessageEventStream();
	const texts: string[] = [];
	const parser = new ServerSentEventParser();
	for (const sent of parser.end(parser.push(sse))) {
		const text = stream.take(sent);
		if (text) texts.push(text);
	}
	return { stream, texts };
}

const thinkingThenText =
	event('message_start', { message: { ...head, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } }) +
	event('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }) +
	event('ping', {}) +
	event('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Let me ' } }) +
	event('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'think.' } }) +
	event('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'c2ln' } }) +
	event('content_block_stop', { index: 0 }) +
	event('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }) +
	event('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'Hello' } }) +
	event('content_block_delta', { index: 1, delta: { type: 'text_delta', text: ' there' } }) +
	event('content_block_stop', { index: 1 }) +
	event('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 12 } }) +
	event('message_stop', {});

const wholeMessage: NativeMessage = {
	...head,
	content: [
		{ type: 'thinking', thinking: 'Let me think.', signature: 'c2ln' },
		{ type: 'text', text: 'Hello there' },
	],
	stop_reason: 'end_turn',
	stop_sequence: null,
	usage,
};

describe('Gateway Messages description', () => {
	const { description } = new GatewayMessages();
	// The parameter names, without the notices under Model (the picked model's output limit).
	const names = (props: Array<{ name: string; type?: string }>) => props.filter((p) => p.type !== 'notice').map((p) => p.name);

	it('has the contract names and defaults', () => {
		expect(description.name).toBe('gatewayMessages');
		expect(description.usableAsTool).toBe(true);
		expect(names(description.properties)).toEqual(['model', 'messages', 'maxTokens', 'stream', 'options']);
		const options = description.properties.find((p) => p.name === 'options')?.options as Array<{ name: string; default: unknown; hint?: string }>;
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
			'stopSequences',
			'system',
			'temperature',
			'thinking',
			'thinkingBudget',
			'timeoutSeconds',
		]);
		expect(options.find((o) => o.name === 'thinking')?.default).toBe('off');
		expect(options.find((o) => o.name === 'effort')?.hint).toMatch(/xhigh.*chat-opus-4-8/);
		const roles = (description.properties.find((p) => p.name === 'messages')?.options as Array<{ values: Array<{ options?: Array<{ value: string }> }> }>)[0]
			.values[0].options;
		expect(roles?.map((r) => r.value)).toEqual(['user', 'assistant']);
	});
});

describe('readMessagesRequest', () => {
	it('reads system, effort, thinking and the other options', () => {
		expect(
			read({
				model: model('chat-opus-4-8'),
				maxTokens: 8000,
				stream: true,
				options: {
					system: 'Be brief.',
					effort: 'xhigh',
					thinking: 'enabled',
					thinkingBudget: 4000,
					temperature: 1,
					stopSequences: ['END'],
					extraBody: { top_k: 40 },
					includeRawResponse: true,
				},
			}),
		).toEqual({
			model: 'chat-opus-4-8',
			messages: [{ role: 'user', content: 'Hi' }],
			maxTokens: 8000,
			stream: true,
			system: 'Be brief.',
			effort: 'xhigh',
			thinking: 'enabled',
			thinkingBudget: 4000,
			temperature: 1,
			stopSequences: ['END'],
			extraBody: { top_k: 40 },
			includeRawResponse: true,
			deadlineMs: 600_000,
			idleMs: 60_000,
		});
	});

	it('reads Timeout (Seconds) as the hard limit of the whole answer', () => {
		expect(read({ options: { timeoutSeconds: 45 } }).deadlineMs).toBe(45_000);
		expect(() => read({ options: { timeoutSeconds: 'soon' } })).toThrow('"Timeout (Seconds)" must be a whole number, not "soon" (item 0)');
	});

	it.each([
		[{ messages: { values: [{ role: 'system', content: 'x' }] } }, '"Messages" row 1 has the role "system"; use one of: user, assistant'],
		[{ options: { thinking: 'enabled', thinkingBudget: 1023 } }, '"Thinking Budget" must be at least 1024, not 1023 (item 0)'],
		[{ options: { thinking: 'enabled', thinkingBudget: 4096 } }, '"Thinking Budget" must be below "Max Tokens" (4096), not 4096 (item 0)'],
		[{ options: { thinking: 'sometimes' } }, '"Thinking" must be off, adaptive or enabled'],
		[{ options: { temperature: 1.5 } }, '"Temperature" must be a number from 0 to 1'],
		[{ model: model('chat-haiku-4-5'), maxTokens: 64_001 }, '"Max Tokens" must be at most 64000 for chat-haiku-4-5'],
		[{ options: { effort: 'ultra' } }, '"Effort" must be one of low, medium, high, xhigh, max'],
	])('refuses bad input before sending: %j', (parameters, message) => {
		expect(() => read(parameters as IDataObject)).toThrow(message);
	});

	it('ignores the budget unless thinking is enabled', () => {
		expect(read({ options: { thinking: 'adaptive', thinkingBudget: 10 } })).toMatchObject({ thinking: 'adaptive' });
		expect(read({ options: { thinking: 'adaptive', thinkingBudget: 10 } }).thinkingBudget).toBeUndefined();
	});
});

describe('messagesRequestBody', () => {
	it('sends model, max_tokens and messages, and leaves unset options out', () => {
		expect(messagesRequestBody(input())).toEqual({ model: 'chat-sonnet-5', max_tokens: 4096, messages: [{ role: 'user', content: 'Hi' }], stream: false });
	});

	it('maps thinking, effort and the other options to their gateway fields', () => {
		expect(
			messagesRequestBody(input({ stream: true, system: 'Be brief.', effort: 'max', thinking: 'enabled', thinkingBudget: 2048, temperature: 1, stopSequences: ['END'] })),
		).toEqual({
			model: 'chat-sonnet-5',
			max_tokens: 4096,
			messages: [{ role: 'user', content: 'Hi' }],
			stream: true,
			system: 'Be brief.',
			thinking: { type: 'enabled', budget_tokens: 2048 },
			output_config: { effort: 'max' },
			temperature: 1,
			stop_sequences: ['END'],
		});
		expect(messagesRequestBody(input({ thinking: 'adaptive' })).thinking).toEqual({ type: 'adaptive' });
	});

	it('merges Extra Body Fields: node fields win, output_config keeps extra keys, thinking is replaced whole', () => {
		const body = messagesRequestBody(
			input({
				effort: 'low',
				thinking: 'adaptive',
				extraBody: { top_k: 40, output_config: { format: 'x', effort: 'max' }, thinking: { type: 'enabled', budget_tokens: 9000 } },
			}),
		);
		expect(body).toMatchObject({ top_k: 40, output_config: { format: 'x', effort: 'low' }, thinking: { type: 'adaptive' } });
	});
});

describe('messagesOutput', () => {
	it('gives text, thinking, content, model, stopReason and usage', () => {
		expect(messagesOutput(wholeMessage)).toEqual({
			text: 'Hello there',
			thinking: 'Let me think.',
			content: wholeMessage.content,
			model: 'chat-fable-5',
			stopReason: 'end_turn',
			usage,
		});
	});

	it('joins text blocks and leaves thinking out when there is none', () => {
		const output = messagesOutput({ ...wholeMessage, content: [{ type: 'text', text: 'One, ' }, { type: 'tool_use', id: 't', name: 'x', input: {} }, { type: 'text', text: 'two.' }] });
		expect(output.text).toBe('One, two.');
		expect(output).not.toHaveProperty('thinking');
	});

	it('recognises an error body sent with a 200, and an answer without content', () => {
		const overloaded = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
		expect(isErrorShape(overloaded)).toBe(true);
		expect(isErrorShape(wholeMessage)).toBe(false);
		expect(messagesReplyProblem(overloaded as NativeMessage)).toBe('content');
		expect(messagesReplyProblem(wholeMessage)).toBeUndefined();
	});

	it('sends the version of the native format as a header', () => {
		expect(MESSAGES_HEADERS).toEqual({ 'anthropic-version': '2023-06-01' });
	});
});

describe('MessageEventStream', () => {
	it('rebuilds the message from its events, so the output equals the non-streamed one', () => {
		const { stream, texts } = aggregate(thinkingThenText);
		expect(stream.finished).toBe(true);
		expect(texts).toEqual(['Hello', ' there']);
		expect(stream.reply()).toEqual(wholeMessage);
		expect(messagesOutput(stream.reply())).toEqual(messagesOutput(wholeMessage));
	});

	it('is not finished without message_stop', () => {
		expect(aggregate(thinkingThenText.replace(event('message_stop', {}), '')).stream.finished).toBe(false);
	});

	it('throws the error event', () => {
		const cut = thinkingThenText.slice(0, thinkingThenText.indexOf('event: content_block_stop'));
		const withError = cut + event('error', { error: { type: 'overloaded_error', message: 'Overloaded' } });
		expect(faultOf(() => aggregate(withError)).payload).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
	});

	it('rebuilds tool input from input_json_delta parts', () => {
		const { stream } = aggregate(
			event('message_start', { message: { ...head, content: [], usage } }) +
				event('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} } }) +
				event('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '{"q": "f' } }) +
				event('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: 'ox"}' } }) +
				event('content_block_stop', { index: 0 }) +
				event('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 7 } }) +
				event('message_stop', {}),
		);
		expect(stream.reply().content).toEqual([{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'fox' } }]);
		expect(messagesOutput(stream.reply())).toMatchObject({ stopReason: 'tool_use', usage: { ...usage, output_tokens: 7 } });
	});

	it('refuses a delta for a block that never started', () => {
		const fault = faultOf(() => aggregate(event('content_block_delta', { index: 3, delta: { type: 'text_delta', text: 'x' } })));
		expect(fault.problem).toBe('the gateway sent a content_block_delta for block 3, which was never started');
	});

	it('refuses streamed tool input that is not JSON, keeping what was sent', () => {
		const stream =
			event('message_start', { message: { ...head, content: [], usage } }) +
			event('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} } }) +
			event('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '{"q": "f' } }) +
			event('message_stop', {});
		const { stream: aggregated } = aggregate(stream);
		const fault = faultOf(() => aggregated.reply());
		expect(fault.problem).toBe('the gateway streamed tool input that is not JSON');
		expect(fault.sent).toBe('{"q": "f');
	});
});
