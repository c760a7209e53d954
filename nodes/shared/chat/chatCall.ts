/**
 * Calling a chat endpoint, streamed or not, for Gateway Chat and Gateway Messages: the whole
 * reply either way, the answer passed on to n8n's streaming API while it is written, and every
 * failure as a GatewayError that reads the same with Stream on and off.
 */
import type { ChunkType, IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { peekStream } from '../files/binary';
import { GatewayError, errorFromParsed, failedHeadline, missingResultError } from '../failures/errors';
import { gatewayQuote, quoteStart, readErrorFields } from '../failures/errorBody';
import { liveOrderOf } from './liveOrder';
import { readServerSentEvents } from '../wire/sse';
import type { ServerSentEvent } from '../wire/sse';
import { jsonObjectAnswer } from '../wire/transport';
import type { GatewayClient, OpenAnswer } from '../wire/transport';
import type { IdleLimit } from '../wire/attempt';
import type { ChatParameters } from './chatInput';

/**
 * What a reply stream found wrong: an error the gateway reported in the stream (`payload`), or a
 * stream that broke the format (`problem`, in our words, and what was `sent`). Turned into a
 * GatewayError by callChat, which knows what the call was.
 */
export class StreamFault extends Error {
	private constructor(
		readonly payload: unknown,
		readonly problem: string | undefined,
		readonly sent: string | undefined,
	) {
		super(problem ?? 'the gateway reported an error in the stream');
		this.name = 'StreamFault';
	}

	static reported(payload: unknown): StreamFault {
		return new StreamFault(payload, undefined, undefined);
	}

	static broken(problem: string, sent?: string): StreamFault {
		return new StreamFault(undefined, problem, sent);
	}
}

/** Parses an event's data, or says plainly that it was not a JSON object. */
export function eventJson(event: ServerSentEvent): IDataObject {
	try {
		const value = JSON.parse(event.data) as unknown;
		if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as IDataObject;
	} catch {
		// reported below
	}
	throw StreamFault.broken('the gateway sent a stream event that is not a JSON object', event.data);
}

/**
 * Turns one wire format's events back into the reply the gateway gives without streaming, so
 * both paths produce the same output. Text parts are kept and joined once, at the end. What both
 * formats share is here: every event's data is a JSON object, except `[DONE]`, the end mark of
 * chat-completions streams (which relays that translate into the native format send too); each
 * format reads its own payloads (`takePayload`).
 */
export abstract class ReplyStream<R> {
	/** What the end mark is called, for the message when it never comes. */
	abstract readonly endMark: string;
	/** The stream's own end mark arrived (`[DONE]`, `message_stop`). */
	finished = false;
	/** Tool calls the stream had begun: said when it goes silent, as no answer text comes with them. */
	protected toolCallsBegun = 0;
	private events = 0;
	private answerChars = 0;

	/** What had arrived, for a stream that went silent: "after 1,234 characters of the answer (3 events, 1 tool call begun)". */
	get arrived(): string {
		const calls = this.toolCallsBegun > 0 ? `, ${this.toolCallsBegun} tool ${this.toolCallsBegun === 1 ? 'call' : 'calls'} begun` : '';
		const events = `${this.events.toLocaleString('en-US')} ${this.events === 1 ? 'event' : 'events'}${calls}`;
		if (this.answerChars > 0) return `after ${this.answerChars.toLocaleString('en-US')} characters of the answer (${events})`;
		return this.events > 0 ? `after ${events}, before any text of the answer` : 'after the answer began, before its first event';
	}

	/** Takes one event; returns the answer text it carried (to show at once), if any. Throws StreamFault. */
	take(event: ServerSentEvent): string | undefined {
		this.events++;
		// `data: [DONE] ` with a trailing space is still the end mark.
		if (event.data.trim() === '[DONE]') {
			this.finished = true;
			return undefined;
		}
		const text = this.takePayload(eventJson(event), event);
		if (text) this.answerChars += text.length;
		return text;
	}

	/** One event's payload: the answer text it carried, if any. Throws StreamFault. */
	protected abstract takePayload(payload: IDataObject, event: ServerSentEvent): string | undefined;

	/** The reply in the shape of the non-streamed answer. Throws StreamFault. */
	abstract reply(): R;
}

/** An open answer as its readers take it: the body, and the sign of life each chunk read gives (OpenAnswer). */
export type AnswerBody = Pick<OpenAnswer, 'body' | 'alive'>;

/**
 * The answer text of a reply stream as its events arrive: the pieces of one chunk read at a time
 * (one hand-over per read, not per event: a large answer has hundreds of thousands of events);
 * ends with the stream's end mark (a stream that ends before it is a StreamFault). Every chunk
 * read, a keep-alive comment too, is a sign of life. The reader of both chat nodes and the Chat Model.
 */
export async function* replyTexts<R>(answer: AnswerBody, reader: ReplyStream<R>): AsyncGenerator<string[], void, undefined> {
	for await (const events of readServerSentEvents(answer.body)) {
		answer.alive();
		const texts: string[] = [];
		for (const event of events) {
			const text = reader.take(event);
			if (text) texts.push(text);
			if (reader.finished) break;
		}
		if (texts.length > 0) yield texts;
		if (reader.finished) return;
	}
	throw StreamFault.broken(`the answer stream ended before the gateway finished the answer (no ${reader.endMark})`);
}

/** n8n refused a chunk of live text (its chat client or webhook caller gone): n8n's failure, not the gateway's. */
export class LiveTextRefused extends Error {
	private constructor(readonly said: string) {
		super(`n8n refused the live text: ${said}`);
		this.name = 'LiveTextRefused';
	}

	/** What n8n's sendChunk threw, kept as its words. */
	static of(error: unknown): LiveTextRefused {
		return new LiveTextRefused(error instanceof Error ? error.message : String(error));
	}
}

/** A chat wire format as callChat speaks it: its endpoint and headers, its stream reader, what makes a reply. */
export interface ChatWire<R> {
	path: string;
	/** Headers this format needs (e.g. `anthropic-version`). */
	headers?: Record<string, string>;
	/** The format's stream reader, made afresh for each streamed answer. */
	replyStream: new () => ReplyStream<R>;
	/** The answer text of a whole reply, for n8n streaming when the gateway did not stream. */
	answerText: (reply: R) => string;
	/** What a whole reply lacks to be an answer ("choices"), or undefined. */
	replyProblem: (reply: R) => string | undefined;
}

/** One item's call: its body, and the mode and limits its parameters set (without `idleMs`, no idle limit). */
export type ChatCall = Pick<ChatParameters, 'stream' | 'deadlineMs'> & { body: IDataObject; itemIndex: number; what: string; idleMs?: number };

/** n8n's streaming API for one item, or undefined when n8n is not streaming this run. */
export interface LiveText {
	begin(): Promise<void>;
	write(text: string): Promise<void>;
	end(): Promise<void>;
	fail(message: string): Promise<void>;
	/** The item is done with live text (whatever happened): later items may go on. */
	close(): Promise<void>;
}

/**
 * Live text goes out only when n8n streams the run (a Chat Trigger or a Webhook set to stream),
 * and never while the node runs as an AI Agent's tool: its answer goes to the agent, not to the
 * person chatting (n8n marks a tool run by rewiring the node's output log to the tool
 * connection).
 */
export function liveTextFor(ctx: IExecuteFunctions, itemIndex: number): LiveText | undefined {
	const streaming = typeof ctx.isStreaming === 'function' && ctx.isStreaming();
	if (!streaming || typeof ctx.sendChunk !== 'function') return undefined;
	if ((ctx.getNode() as { rewireOutputLogTo?: string }).rewireOutputLogTo) return undefined;
	// Several items: each reaches the client whole and in item order (liveOrder.ts).
	const slot = liveOrderOf(ctx).enter();
	// n8n's sendChunk returns a promise although it is typed void; awaiting it keeps the order.
	const send = async (type: ChunkType, content?: string) => {
		try {
			await slot.send(async () => await Promise.resolve(ctx.sendChunk(type, itemIndex, content)));
		} catch (error) {
			throw LiveTextRefused.of(error);
		}
	};
	return {
		begin: async () => await send('begin'),
		write: async (text) => await send('item', text),
		end: async () => await send('end'),
		fail: async (message) => await send('error', message),
		close: async () => await slot.end(),
	};
}

/** The chat nodes' item deadline (their Timeout option), as messages name it. */
export const CHAT_LIMIT = 'Timeout (Seconds)';
/** The chat nodes' idle limit of a streamed answer (their Idle Timeout option), as messages name it. */
export const CHAT_IDLE_LIMIT = 'Idle Timeout (Seconds)';

/** A streamed chat call's idle limit, as the transport takes it. */
export function chatIdle(idleMs: number | undefined): IdleLimit | undefined {
	return idleMs === undefined ? undefined : { ms: idleMs, name: CHAT_IDLE_LIMIT };
}

const STREAM_HINT = 'The partial answer was discarded. Try again; if it keeps happening, turn off Stream.';

/** Sends a chat request and returns the whole reply, reading and aggregating the stream if asked. */
export async function callChat<R>(ctx: IExecuteFunctions, client: GatewayClient, wire: ChatWire<R>, call: ChatCall): Promise<R> {
	const live = liveTextFor(ctx, call.itemIndex);
	const request = { path: wire.path, body: call.body, itemIndex: call.itemIndex, what: call.what, deadlineMs: call.deadlineMs, limitName: CHAT_LIMIT, headers: wire.headers };
	const checked = (reply: R) => checkedReply({ what: call.what, itemIndex: call.itemIndex, replyProblem: wire.replyProblem }, reply);
	try {
		if (!call.stream) return await passWhole(live, wire, checked(await client.json<R>(request)));

		const response = await client.stream({ ...request, idle: chatIdle(call.idleMs) });
		const replyStream = new wire.replyStream();
		let reply: R;
		let begun = false;
		try {
			const whole = await wholeAnswerOf<R>(response, call.what, call.itemIndex);
			if (whole !== undefined) return await passWhole(live, wire, checked(whole));
			if (live) {
				await live.begin();
				begun = true;
			}
			for await (const texts of replyTexts(response, replyStream)) if (live) for (const text of texts) await live.write(text);
			// A stream that ended properly but held no answer is the same error as an empty whole answer.
			reply = checked(replyStream.reply());
		} catch (error) {
			// Whatever stopped the reading (n8n's live text too), the answer ends here: its connection closes now.
			response.body.destroy();
			const failure = streamFailure(call.what, error, response.failure, { itemIndex: call.itemIndex, arrived: replyStream.arrived });
			if (begun && live) await live.fail(failure.shownMessage((text) => client.masker.mask(text))).catch(() => undefined);
			throw failure;
		}
		if (live) await live.end();
		return reply;
	} finally {
		await live?.close();
	}
}

/** The reply, when it is one (`replyProblem`); else the error that quotes what came instead. */
export function checkedReply<R>(call: Pick<ChatWire<R>, 'replyProblem'> & { what: string; itemIndex?: number }, reply: R): R {
	const missing = call.replyProblem(reply);
	if (missing) throw missingResultError(call.what, missing, reply, { itemIndex: call.itemIndex });
	return reply;
}

/** A field line (`data:`, `event:`, `id:`, `retry:`) or a comment (`:`) begins an event stream. */
export function startsEventStream(first: string): boolean {
	return first !== '' && ':deir'.includes(first);
}

/**
 * The answer to a streamed request when it is no event stream, read as the same body is read
 * without streaming (GatewayClient.json's words), so `null`, a list, a page or an error in a 200
 * are quoted, not reported as a stream that ended early; undefined for an event stream. A stream
 * is recognised by its body: relays send it as text/plain, or with no type at all, and some
 * ignore `stream` and answer with one JSON object (or with anything else).
 */
export async function wholeAnswerOf<R>(response: OpenAnswer, what: string, itemIndex?: number): Promise<R | undefined> {
	const start = await answerStart(response);
	if (startsEventStream(start.first)) return undefined;
	const body = await readAll(response, start.readWhole);
	return jsonObjectAnswer<R>({ status: response.status, headers: response.headers, body }, what, { itemIndex, status: response.status });
}

/**
 * A failure while reading a chat answer, streamed or whole, as a GatewayError: an error the
 * gateway reported in the stream reads as the same error in a whole answer; a broken stream says
 * what broke; anything else is the attempt's (deadline, Stop, network), classified by the transport
 * (`readFailure`) with this reader's advice (`hint`) for an answer that broke off, and what it had
 * of the answer (`arrived`) when it went silent.
 */
export function streamFailure(
	what: string,
	error: unknown,
	readFailure: OpenAnswer['failure'],
	options: { itemIndex?: number; hint?: string; arrived?: string } = {},
): GatewayError {
	const hint = options.hint ?? STREAM_HINT;
	if (error instanceof GatewayError) return error;
	if (error instanceof LiveTextRefused) {
		return new GatewayError({
			kind: 'live_text',
			headline: `${failedHeadline(what, 'live_text')} (${quoteStart(error.said, 200)})`,
			hint: 'The chat or the webhook caller may have gone while the gateway was answering, so the gateway may have billed the answer. Run again if it is still wanted.',
			mayHaveActed: true,
			itemIndex: options.itemIndex,
		});
	}
	if (error instanceof StreamFault) {
		if (error.payload !== undefined) return errorFromParsed(what, undefined, readErrorFields(error.payload), { itemIndex: options.itemIndex });
		return new GatewayError({
			kind: 'protocol',
			headline: `${what} failed: ${error.problem}`,
			gatewayMessage: error.sent !== undefined ? gatewayQuote(error.sent) : undefined,
			hint,
			itemIndex: options.itemIndex,
		});
	}
	return readFailure(error, hint, options.arrived);
}

/**
 * The answer's first non-blank character (whether it begins an event stream), and, when the peek
 * read a body shorter than it to its end, those bytes: an ended stream cannot take them back, so
 * readAll must be given them.
 */
export async function answerStart(answer: AnswerBody): Promise<{ first: string; readWhole?: Buffer }> {
	const { body, alive } = answer;
	// One byte more at a time, so that each chunk that arrives is a sign of life (a relay's lone "\n" too).
	for (let size = 1; ; ) {
		const head = await peekStream(body, size);
		if (head.length > 0) alive();
		const ended = body.readableEnded === true || head.length < size;
		// At least a UTF-8 byte order mark's 3 bytes: a stream may begin with one (its decoder drops it).
		const text = head.length < 3 && !ended ? '' : head.toString('latin1').replace(/^\xEF\xBB\xBF/, '').trimStart();
		if (text !== '' || ended) return { first: text.charAt(0), readWhole: ended ? head : undefined };
		size = head.length + 1;
	}
}

/** The whole answer as text, each chunk a sign of life; `readWhole`: what answerStart already read of an ended body. */
export async function readAll(answer: AnswerBody, readWhole?: Buffer): Promise<string> {
	if (readWhole !== undefined) return readWhole.toString('utf8');
	const parts: Buffer[] = [];
	for await (const chunk of answer.body) {
		answer.alive();
		parts.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
	}
	return Buffer.concat(parts).toString('utf8');
}

/** A whole reply, its answer text passed on to live text in one piece. */
async function passWhole<R>(live: LiveText | undefined, wire: ChatWire<R>, reply: R): Promise<R> {
	if (!live) return reply;
	const text = wire.answerText(reply);
	await live.begin();
	if (text !== '') await live.write(text);
	await live.end();
	return reply;
}
