/**
 * The call plumbing both chat nodes share (`callChat`): streamed or whole replies, what goes to
 * n8n's streaming API (recorded), and streams that break or carry an error.
 */
import type { IDataObject } from 'n8n-workflow';

import { ChatCompletionStream, chatAnswerText, chatOutput, isChatErrorReply } from '../../nodes/GatewayChat/reply';
import type { ChatCompletion } from '../../nodes/GatewayChat/reply';
import { callChat, liveTextFor } from '../../nodes/shared/chatCommon';
import type { GatewayClient } from '../../nodes/shared/transport';
import { createExecuteContext } from '../helpers/executeContext';

const credentials = { apiKey: 'sk-unit-stream', baseUrl: 'http://127.0.0.1:9' };
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

function fakeClient(answer: { frames?: Array<string | Error>; json?: unknown; contentType?: string }) {
	const sent: IDataObject[] = [];
	async function* body() {
		for (const piece of answer.frames ?? []) {
			if (piece instanceof Error) throw piece;
			yield Buffer.from(piece);
		}
	}
	const client = {
		json: async (call: IDataObject) => {
			sent.push(call);
			return answer.json;
		},
		stream: async (call: IDataObject) => {
			sent.push(call);
			return { status: 200, headers: { 'content-type': answer.contentType ?? 'text/event-stream; charset=utf-8' }, body: body() };
		},
		scrub: (text: string) => text.replace(/sk-[\w-]+/g, 'sk-***'),
		cancelSignal: undefined,
	};
	return { client: client as unknown as GatewayClient, sent };
}

async function run(options: { stream: boolean; streaming: boolean; frames?: Array<string | Error>; json?: unknown; contentType?: string; asTool?: boolean }) {
	const { ctx, chunks } = createExecuteContext({ parameters: {}, credentials, streaming: options.streaming });
	if (options.asTool) (ctx.getNode() as { rewireOutputLogTo?: string }).rewireOutputLogTo = 'ai_tool';
	const { client, sent } = fakeClient(options);
	const result = callChat<ChatCompletion>(ctx, client, {
		path: '/v1/chat/completions',
		body: { model: 'chat-sonnet-5' },
		stream: options.stream,
		itemIndex: 0,
		what: 'The chat request',
		newReplyStream: () => new ChatCompletionStream(),
		answerText: chatAnswerText,
		isErrorReply: isChatErrorReply,
	});
	return { result, chunks, sent };
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
		expect(sent).toEqual([{ path: '/v1/chat/completions', body: { model: 'chat-sonnet-5' }, itemIndex: 0, what: 'The chat request' }]);
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
		const { result, chunks } = await run({ stream: true, streaming: true, frames: goodStream.slice(0, 2) });
		await expect(result).rejects.toThrow('The answer stream ended before the gateway finished the answer (no data: [DONE])');
		expect(chunks.map((c) => c.type)).toEqual(['begin', 'item', 'error']);
	});

	it('fails on a stream that carries an error, quoting it', async () => {
		const error = frame({ error: { message: 'upstream stream error: the model stopped', type: 'upstream_error', code: 'stream_interrupted' } });
		const { result } = await run({ stream: true, streaming: false, frames: [...goodStream.slice(0, 2), error] });
		await expect(result).rejects.toThrow(
			'The gateway reported an error in the middle of the answer: "upstream stream error: the model stopped" (upstream_error, code stream_interrupted)',
		);
	});

	it('fails in plain words when the connection drops mid-stream', async () => {
		const reset = Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
		const { result } = await run({ stream: true, streaming: false, frames: [...goodStream.slice(0, 2), reset] });
		await expect(result).rejects.toThrow('Reading the answer stream failed: the connection was dropped before the answer was complete');
	});

	it('fails on an error body sent with a 200, without the key', async () => {
		const { result } = await run({ stream: false, streaming: false, json: { error: { message: 'bad key sk-secret-123 used', type: 'auth' } } });
		await expect(result).rejects.toThrow('The gateway reported an error: "bad key sk-*** used" (auth)');
	});
});

describe('liveTextFor', () => {
	it('is off for contexts without n8n streaming support', () => {
		const { ctx } = createExecuteContext({ parameters: {}, credentials });
		const bare = { ...ctx, isStreaming: undefined } as unknown as typeof ctx;
		expect(liveTextFor(bare, 0)).toBeUndefined();
	});
});
