/**
 * The call plumbing both chat nodes share (`callChat`): streamed or whole replies, what goes to
 * n8n's streaming API (recorded), and streams that break or carry an error.
 */
import { Readable } from 'node:stream';
import type { IDataObject, IHttpRequestOptions } from 'n8n-workflow';

import { CHAT_COMPLETIONS, ChatCompletionStream, chatOutput } from '../../nodes/shared/chat/completions';
import type { ChatCompletion } from '../../nodes/shared/chat/completions';
import { callChat, liveTextFor } from '../../nodes/shared/chat/chatCall';
import { MessageEventStream } from '../../nodes/GatewayMessages/reply';
import { asNodeError } from '../../nodes/shared/failures/edge';
import { GatewayError } from '../../nodes/shared/failures/errors';
import { GatewayClient } from '../../nodes/shared/wire/transport';
import { createExecuteContext } from '../helpers/executeContext';

const KEY = 'sk-unit-stream';
const credentials = { apiKey: KEY, baseUrl: 'http://127.0.0.1:9' };
const frame = (payload: unknown) => `data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`;
const chunk = (delta: IDataObject, finish: string | null = null) => frame({ id: 'c1', model: 'chat-sonnet-5', choices: [{ index: 0, delta, finish_reason: finish }] });
const usage = { prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 };
const goodStream = [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hello' }), chunk({ content: ' world' }), chunk({}, 'stop'), frame({ id: 'c1', model: 'chat-sonnet-5', choices: [], usage }), frame('[DONE]')];
const whole: ChatCompletion = {
	id: 'c1',
	model: 'chat-sonnet-5',
	choices: [{ index: 0, message: { role: 'assistant', content: 'Hello world' }, finish_reason: 'stop' }],
	usage,
};

interface Answer {
	/** The body, piece by piece; an Error breaks the connection there. */
	frames?: Array<string | Error>;
	/** A whole JSON body (Stream off). */
	json?: unknown;
	contentType?: string;
}

/** The answer's body as the readable stream n8n's httpRequest returns with `encoding: 'stream'`. */
function bodyOf(answer: Answer): Readable {
	const pieces = answer.json !== undefined ? [JSON.stringify(answer.json)] : (answer.frames ?? []);
	async function* body() {
		for (const piece of pieces) {
			if (piece instanceof Error) throw piece;
			yield Buffer.from(piece);
		}
	}
	return Readable.from(body());
}

async function run(options: { stream: boolean; streaming: boolean; asTool?: boolean } & Answer) {
	const { ctx, chunks } = createExecuteContext({ parameters: {}, credentials, streaming: options.streaming });
	if (options.asTool) (ctx.getNode() as { rewireOutputLogTo?: string }).rewireOutputLogTo = 'ai_tool';
	// The real transport, with n8n's httpRequest answering from memory: every request is recorded.
	const sent: IHttpRequestOptions[] = [];
	ctx.helpers.httpRequest = (async (request: IHttpRequestOptions) => {
		sent.push(request);
		const contentType = options.contentType ?? (options.json !== undefined ? 'application/json' : 'text/event-stream; charset=utf-8');
		return { statusCode: 200, headers: { 'content-type': contentType }, body: bodyOf(options) };
	}) as never;
	const client = await GatewayClient.create(ctx);
	const result = callChat<ChatCompletion>(ctx, client, CHAT_COMPLETIONS, {
		body: { model: 'chat-sonnet-5' },
		stream: options.stream,
		itemIndex: 0,
		what: 'The chat request',
		deadlineMs: 600_000,
	});
	// Settled here, so a rejection is never left unhandled while a test awaits something else.
	const failure = result.then(
		() => undefined,
		(error: unknown) => error,
	);
	return { result, failure, chunks, sent, client, node: ctx.getNode() };
}

describe('callChat', () => {
	it('passes text on to n8n as it arrives when n8n streams the run', async () => {
		const { result, chunks } = await run({ stream: true, streaming: true, frames: goodStream });
		expect(chatOutput(await result)).toEqual(chatOutput(whole));
		expect(chunks).toEqual([
			{ type: 'begin', itemIndex: 0, content: undefined },
			{ type: 'item', itemIndex: 0, content: 'Hello' },
			{ type: 'item', itemIndex: 0, content: ' world' },
			{ type: 'end', itemIndex: 0, content: undefined },
		]);
	});

	it('sends nothing to n8n when the run is not streamed', async () => {
		const { result, chunks } = await run({ stream: true, streaming: false, frames: goodStream });
		expect(chatOutput(await result)).toEqual(chatOutput(whole));
		expect(chunks).toEqual([]);
	});

	it('sends nothing to n8n when the node runs as an AI Agent tool', async () => {
		const { result, chunks } = await run({ stream: true, streaming: true, frames: goodStream, asTool: true });
		await result;
		expect(chunks).toEqual([]);
	});

	it('passes a whole reply on as one piece when Stream is off but n8n streams', async () => {
		const { result, chunks, sent } = await run({ stream: false, streaming: true, json: whole });
		expect(await result).toEqual(whole);
		expect(sent).toHaveLength(1);
		expect(sent[0]).toMatchObject({ method: 'POST', url: 'http://127.0.0.1:9/v1/chat/completions', body: '{"model":"chat-sonnet-5"}' });
		expect(sent[0].headers).toMatchObject({ Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' });
		expect(chunks.map((c) => [c.type, c.content])).toEqual([
			['begin', undefined],
			['item', 'Hello world'],
			['end', undefined],
		]);
	});

	it('takes a JSON answer to a stream request (relays that ignore stream) as the whole reply', async () => {
		const { result } = await run({ stream: true, streaming: false, frames: [JSON.stringify(whole)], contentType: 'application/json' });
		expect(await result).toEqual(whole);
	});

	it('fails on a stream that ends without [DONE], never returning the partial answer', async () => {
		const { failure, chunks } = await run({ stream: true, streaming: true, frames: goodStream.slice(0, 2) });
		const error = (await failure) as GatewayError;
		expect(error).toBeInstanceOf(GatewayError);
		expect(error.kind).toBe('protocol');
		expect(error.fullMessage).toBe('The chat request failed: the answer stream ended before the gateway finished the answer (no data: [DONE])');
		expect(chunks.map((c) => c.type)).toEqual(['begin', 'item', 'error']);
	});

	it('fails on a stream that carries an error, quoting it', async () => {
		const error = frame({ error: { message: 'upstream stream error: the model stopped', type: 'upstream_error', code: 'stream_interrupted' } });
		const { failure } = await run({ stream: true, streaming: false, frames: [...goodStream.slice(0, 2), error] });
		expect(((await failure) as GatewayError).fullMessage).toBe(
			'The chat request failed: the gateway reported a failure: "upstream stream error: the model stopped" (code stream_interrupted)',
		);
	});

	it('words an error in a stream as the same error in a whole answer', async () => {
		const said = { error: { message: 'No available channel for model chat-x', type: 'new_api_error', code: 'model_not_found' } };
		const streamed = (await (await run({ stream: true, streaming: false, frames: [frame(said)] })).failure) as GatewayError;
		const inWhole = (await (await run({ stream: true, streaming: false, frames: [JSON.stringify(said)], contentType: 'application/json' })).failure) as GatewayError;
		expect(streamed.kind).toBe('unknown_model');
		expect(streamed.fullMessage).toBe('The chat request failed: the gateway has no channel for this model: "No available channel for model chat-x" (code model_not_found)');
		expect(inWhole.fullMessage).toBe(streamed.fullMessage);
	});

	it('takes an error body in a 200 as the same error, its status included, with Stream on or off', async () => {
		const said = { error: { message: 'No available channel for model chat-x', type: 'new_api_error', code: 'model_not_found' } };
		const unstreamed = (await (await run({ stream: false, streaming: false, json: said })).failure) as GatewayError;
		const streamed = (await (await run({ stream: true, streaming: false, frames: [JSON.stringify(said)], contentType: 'application/json' })).failure) as GatewayError;
		expect(unstreamed.status).toBe(200);
		const facts = ({ kind, headline, hint, status, gatewayMessage, gatewayCode, mayHaveActed, fields, itemIndex, retryAfterMs }: GatewayError) => ({ kind, headline, hint, status, gatewayMessage, gatewayCode, mayHaveActed, fields, itemIndex, retryAfterMs });
		expect(facts(streamed)).toEqual(facts(unstreamed));
	});

	it('fails in plain words when the connection drops mid-stream', async () => {
		const reset = Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
		const { failure } = await run({ stream: true, streaming: false, frames: [...goodStream.slice(0, 2), reset] });
		const error = (await failure) as GatewayError;
		expect(error.kind).toBe('network');
		expect(error.fullMessage).toBe('The chat request failed: the connection to 127.0.0.1:9 was dropped before the answer was complete');
	});

	it('fails on an error body sent with a 200, and the key never reaches the node error', async () => {
		const body = { error: { message: `bad key ${KEY} (also sk-secret-123) used`, type: 'auth' } };
		const { failure, client, node } = await run({ stream: false, streaming: false, json: body });
		const error = (await failure) as GatewayError;
		expect(error.status).toBe(200);
		// The gateway's words travel unmasked inside the GatewayError; its own message never holds them.
		expect(error.message).toBe('The chat request failed: the gateway reported a failure');
		const nodeError = asNodeError(node, error, 0, client.masker);
		expect(nodeError.message).toBe('The chat request failed: the gateway reported a failure: "bad key *** (also sk-secret-123) used"');
		const shown = JSON.stringify({ ...nodeError, message: nodeError.message, description: nodeError.description, stack: nodeError.stack });
		expect(shown).not.toContain('unit-stream');
		// Another key in the gateway's words is not this credential's: it stays (issue 26: nothing is masked by its shape).
		expect(shown).toContain('sk-secret-123');
	});

	it.each([
		[{ choices: [] }, 'The chat request failed: the gateway\'s answer has no choices: "{"choices":[]}"'],
		[{ id: 'c1', object: 'chat.completion' }, 'The chat request failed: the gateway\'s answer has no choices'],
	])('fails on a 200 without a reply (%j), quoting what came', async (json, message) => {
		const { failure } = await run({ stream: false, streaming: false, json });
		const error = (await failure) as GatewayError;
		expect(error.kind).toBe('protocol');
		expect(error.fullMessage).toContain(message);
	});

	it.each([
		[null, 'null'],
		[[], 'a list'],
		['just text', 'a JSON string'],
	])('fails on a 200 whose JSON is not an object (%j)', async (json, said) => {
		const { failure } = await run({ stream: false, streaming: false, json });
		const error = (await failure) as GatewayError;
		expect(error.kind).toBe('protocol');
		expect(error.headline).toBe(`The chat request failed: the gateway answered HTTP 200 with ${said} instead of a JSON object`);
	});

	it('masks the key in the error it passes on to n8n while streaming', async () => {
		const error = frame({ error: { message: `invalid token Bearer ${KEY}` } });
		const { failure, chunks } = await run({ stream: true, streaming: true, frames: [...goodStream.slice(0, 2), error] });
		expect(((await failure) as GatewayError).kind).toBe('auth');
		const sentError = chunks.find((c) => c.type === 'error');
		expect(String(sentError?.content)).toContain('the gateway refused the API key');
		expect(JSON.stringify(chunks)).not.toContain('unit-stream');
	});
});

describe('liveTextFor', () => {
	it('is off for contexts without n8n streaming support', () => {
		const { ctx } = createExecuteContext({ parameters: {}, credentials });
		const bare = { ...ctx, isStreaming: undefined } as unknown as typeof ctx;
		expect(liveTextFor(bare, 0)).toBeUndefined();
	});
});

describe('what a reply stream had when it went silent (Idle Timeout words)', () => {
	const event = (text: string) => ({ event: 'message', data: text.slice(6, -2) });
	it('names the characters of the answer and the events, in thousands as people write them', () => {
		const reader = new ChatCompletionStream();
		expect(reader.arrived).toBe('after the answer began, before its first event');
		reader.take(event(chunk({ role: 'assistant', content: '' })));
		expect(reader.arrived).toBe('after 1 event, before any text of the answer');
		reader.take(event(chunk({ content: 'x'.repeat(1234) })));
		reader.take(event(chunk({ content: 'ok' })));
		expect(reader.arrived).toBe('after 1,236 characters of the answer (3 events)');
	});

	it('says that tool calls had begun, which carry no answer text (Chat Completions)', () => {
		const reader = new ChatCompletionStream();
		const call = (index: number, id?: string, args = '') => chunk({ tool_calls: [{ index, id, function: { name: id ? 'lookup' : undefined, arguments: args } }] });
		reader.take(event(call(0, 'call_1')));
		reader.take(event(call(0, undefined, '{"q":')));
		expect(reader.arrived).toBe('after 2 events, 1 tool call begun, before any text of the answer');
		reader.take(event(call(1, 'call_2')));
		reader.take(event(chunk({ content: 'ok' })));
		expect(reader.arrived).toBe('after 2 characters of the answer (4 events, 2 tool calls begun)');
	});

	it('says that a tool call had begun (Messages: a tool_use block)', () => {
		const reader = new MessageEventStream();
		const message = (payload: IDataObject) => ({ event: String(payload.type), data: JSON.stringify(payload) });
		reader.take(message({ type: 'message_start', message: { id: 'm1', model: 'chat-sonnet-5', content: [] } }));
		reader.take(message({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }));
		reader.take(message({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} } }));
		reader.take(message({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"q":' } }));
		expect(reader.arrived).toBe('after 4 events, 1 tool call begun, before any text of the answer');
	});
});
