/**
 * The Gateway Chat Model's wire format, pure: n8n's messages and tools (the AI node SDK's shapes)
 * into a chat-completions body, and the gateway's answer back into the SDK's result and chunks.
 */
import type { FunctionTool, Message } from '@n8n/ai-node-sdk';

import { closingChunks, finishReasonOf, generateResultOf, requestBody, toWireMessages, toWireTools, usageOf } from '../../nodes/GatewayChatModel/wire';

const text = (value: string) => ({ type: 'text' as const, text: value });

describe('toWireMessages', () => {
	it('turns a tool round trip into chat-completions messages: the calls on the assistant message, one tool message per result', () => {
		const messages: Message[] = [
			{ role: 'system', content: [text('Use the tools.')] },
			{ role: 'user', content: [text('Work out '), text('2 + 3')] },
			{
				role: 'assistant',
				content: [
					{ type: 'tool-call', toolCallId: 'call_a', toolName: 'Calculator', input: '{"input":"2 + 3"}' },
					{ type: 'tool-call', toolCallId: 'call_b', toolName: 'Calculator', input: '{"input":"6 * 7"}' },
				],
			},
			{
				role: 'tool',
				content: [
					{ type: 'tool-result', toolCallId: 'call_a', result: '5' },
					{ type: 'tool-result', toolCallId: 'call_b', result: [{ type: 'text', text: '4' }, { type: 'text', text: '2' }] },
				],
			},
		];
		expect(toWireMessages(messages)).toEqual([
			{ role: 'system', content: 'Use the tools.' },
			{ role: 'user', content: 'Work out 2 + 3' },
			{
				role: 'assistant',
				content: null,
				tool_calls: [
					{ id: 'call_a', type: 'function', function: { name: 'Calculator', arguments: '{"input":"2 + 3"}' } },
					{ id: 'call_b', type: 'function', function: { name: 'Calculator', arguments: '{"input":"6 * 7"}' } },
				],
			},
			{ role: 'tool', tool_call_id: 'call_a', content: '5' },
			{ role: 'tool', tool_call_id: 'call_b', content: '42' },
		]);
	});

	it('keeps an assistant text beside its calls, and sends results that are not text as JSON', () => {
		const wire = toWireMessages([
			{ role: 'assistant', content: [text('Let me check.'), { type: 'reasoning', text: 'hidden' }, { type: 'tool-call', toolCallId: 'c1', toolName: 'Find', input: '' }] },
			{ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', result: { found: 3 } }] },
		]);
		expect(wire).toEqual([
			{ role: 'assistant', content: 'Let me check.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'Find', arguments: '{}' } }] },
			{ role: 'tool', tool_call_id: 'c1', content: '{"found":3}' },
		]);
	});

	it('sends images of a user message as image_url parts (base64 as a data URL, links as they are)', () => {
		const [user] = toWireMessages([
			{
				role: 'user',
				content: [
					text('What is this?'),
					{ type: 'file', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
					{ type: 'file', mediaType: 'image/jpeg', data: '', providerMetadata: { url: 'https://example.com/a.jpg' } },
					// Bytes, as the SDK's type allows: a view into a larger buffer, only its own bytes sent.
					{ type: 'file', mediaType: 'image/webp', data: new Uint8Array(Buffer.from('xxRIFFyy')).subarray(2, 6) },
					// A data URL keeps its own type.
					{ type: 'file', mediaType: 'image/png', data: 'data:image/gif;base64,R0lGODlh' },
					// Not an image: not sent as one (nor at all, as without images).
					{ type: 'file', mediaType: 'application/pdf', data: 'JVBERi0=' },
				],
			},
		]);
		// As sent (an image goes as a file the body carries, written as its data URL).
		expect(JSON.parse(JSON.stringify(user))).toEqual({
			role: 'user',
			content: [
				{ type: 'text', text: 'What is this?' },
				{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
				{ type: 'image_url', image_url: { url: 'https://example.com/a.jpg' } },
				{ type: 'image_url', image_url: { url: `data:image/webp;base64,${Buffer.from('RIFF').toString('base64')}` } },
				{ type: 'image_url', image_url: { url: 'data:image/gif;base64,R0lGODlh' } },
			],
		});
	});
});

describe('toWireTools', () => {
	it('offers function tools with the JSON schema the SDK gives, and leaves provider tools out', () => {
		const calculator: FunctionTool = { type: 'function', name: 'Calculator', description: 'Does sums', inputSchema: { zod: true } };
		const schemaOf = jest.fn(() => ({ type: 'object', properties: { input: { type: 'string' } } }));
		expect(toWireTools([calculator, { type: 'provider', name: 'web_search' }], schemaOf)).toEqual([
			{ type: 'function', function: { name: 'Calculator', description: 'Does sums', parameters: { type: 'object', properties: { input: { type: 'string' } } } } },
		]);
		expect(schemaOf).toHaveBeenCalledWith(calculator);
	});
});

describe('requestBody', () => {
	const messages = [{ role: 'user', content: 'hi' }];

	it('sends effort as reasoning_effort, max_tokens and temperature only when set', () => {
		expect(requestBody({ model: 'chat-opus-4-8', effort: 'xhigh', maxTokens: 800, temperature: 0.2 }, messages, [], { stream: false })).toEqual({
			model: 'chat-opus-4-8',
			messages,
			max_tokens: 800,
			temperature: 0.2,
			reasoning_effort: 'xhigh',
		});
		expect(requestBody({ model: 'chat-sonnet-5' }, messages, [], { stream: false })).toEqual({ model: 'chat-sonnet-5', messages });
		expect(requestBody({ model: 'chat-sonnet-5', effort: 'max' }, messages, [], { stream: false }).reasoning_effort).toBe('max');
	});

	it('asks a stream for its token usage, and passes the calling chain\'s stop words and the tools', () => {
		const tools = [{ type: 'function' as const, function: { name: 'Calculator', parameters: {} } }];
		expect(requestBody({ model: 'chat-sonnet-5' }, messages, tools, { stream: true, stop: ['Observation:'] })).toEqual({
			model: 'chat-sonnet-5',
			messages,
			stop: ['Observation:'],
			tools,
			stream: true,
			stream_options: { include_usage: true },
		});
	});
});

describe('answers', () => {
	const completion = {
		id: 'chatcmpl-1',
		model: 'chat-sonnet-5',
		choices: [
			{
				index: 0,
				message: {
					role: 'assistant',
					content: null,
					tool_calls: [
						{ id: 'call_1', type: 'function', function: { name: 'Calculator', arguments: '{"input":"2 + 3"}' } },
						{ type: 'function', function: { name: 'Calculator', arguments: '{"input":"6 * 7"}' } },
					],
				},
				finish_reason: 'tool_calls',
			},
		],
		usage: { prompt_tokens: 29, completion_tokens: 8, total_tokens: 37, prompt_tokens_details: { cached_tokens: 3 }, completion_tokens_details: { reasoning_tokens: 2 } },
	};

	it('become the SDK\'s result with the tool calls, the finish reason and the real usage', () => {
		expect(generateResultOf(completion)).toEqual({
			id: 'chatcmpl-1',
			finishReason: 'tool-calls',
			message: {
				id: 'chatcmpl-1',
				role: 'assistant',
				content: [
					{ type: 'tool-call', toolCallId: 'call_1', toolName: 'Calculator', input: '{"input":"2 + 3"}' },
					// A call without an id gets one, so two calls can never be taken for one.
					{ type: 'tool-call', toolCallId: 'call_1_1', toolName: 'Calculator', input: '{"input":"6 * 7"}' },
				],
			},
			providerMetadata: { finish_reason: 'tool_calls', model_name: 'chat-sonnet-5' },
			usage: { promptTokens: 29, completionTokens: 8, totalTokens: 37, inputTokenDetails: { cacheRead: 3 }, outputTokenDetails: { reasoning: 2 } },
		});
	});

	it('keep the text and the reasoning of a plain answer', () => {
		const result = generateResultOf({
			choices: [{ message: { role: 'assistant', content: 'Five.', reasoning_content: 'Adding.' }, finish_reason: 'length' }],
		});
		expect(result.message.content).toEqual([{ type: 'text', text: 'Five.' }]);
		expect(result.finishReason).toBe('length');
		expect(result.providerMetadata).toMatchObject({ reasoning_content: 'Adding.' });
		expect(result.usage).toBeUndefined();
	});

	it('end a stream with each tool call whole under its own id, then the finish with the usage', () => {
		expect(closingChunks(completion)).toEqual([
			{ type: 'tool-call-delta', id: 'call_1', name: 'Calculator', argumentsDelta: '{"input":"2 + 3"}' },
			{ type: 'tool-call-delta', id: 'call_1_1', name: 'Calculator', argumentsDelta: '{"input":"6 * 7"}' },
			{ type: 'finish', finishReason: 'tool-calls', usage: expect.objectContaining({ promptTokens: 29, completionTokens: 8, totalTokens: 37 }) },
		]);
	});

	it('map every finish reason the format has', () => {
		expect(['stop', 'length', 'tool_calls', 'function_call', 'content_filter', null, 'weird'].map(finishReasonOf)).toEqual([
			'stop',
			'length',
			'tool-calls',
			'tool-calls',
			'content-filter',
			'other',
			'other',
		]);
	});

	it('read usage in either spelling, and none when there is none', () => {
		expect(usageOf({ input_tokens: 4, output_tokens: 6 })).toEqual({ promptTokens: 4, completionTokens: 6, totalTokens: 10 });
		expect(usageOf({})).toBeUndefined();
		expect(usageOf(null)).toBeUndefined();
	});
});
