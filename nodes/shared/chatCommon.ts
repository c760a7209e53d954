/**
 * What Gateway Chat and Gateway Messages share: reading the conversation rows, the output-token
 * limit of the model, the effort levels, calling the gateway with or without a stream, and
 * passing the answer on to n8n's streaming API while it is being written.
 */
import { NodeApiError } from 'n8n-workflow';
import type { ChunkType, IDataObject, IExecuteFunctions, JsonObject } from 'n8n-workflow';

import { DEFAULT_MAX_TOKENS, EFFORT_LEVELS } from './chatDescriptions';
import { classifyError, describeNetworkError, isAbortError, networkError, parseErrorBody } from './errors';
import { findModel } from './models';
import { readServerSentEvents } from './sse';
import type { ServerSentEvent } from './sse';
import type { ByteStream, GatewayClient } from './transport';
import { fieldError, readInteger } from './validate';

export interface ChatMessage {
	role: string;
	content: string;
}

/** The rows of the `messages` fixedCollection, checked: known roles, no empty content. */
export function readMessages(ctx: IExecuteFunctions, itemIndex: number, roles: readonly string[]): ChatMessage[] {
	const rows = ctx.getNodeParameter('messages.values', itemIndex, []) as unknown;
	const list = Array.isArray(rows) ? (rows as IDataObject[]) : [];
	if (list.length === 0) {
		throw fieldError(ctx, itemIndex, 'Messages', 'must contain at least one message', 'Add a message with the role "User".');
	}
	return list.map((row, position) => {
		const role = String(row?.role ?? 'user');
		if (!roles.includes(role)) {
			throw fieldError(ctx, itemIndex, 'Messages', `row ${position + 1} has the role "${role}"; use one of: ${roles.join(', ')}`);
		}
		const raw = row?.content;
		const content = raw === undefined || raw === null ? '' : typeof raw === 'string' ? raw : JSON.stringify(raw);
		if (content.trim() === '') {
			throw fieldError(ctx, itemIndex, 'Messages', `row ${position + 1} (${role}) has no content`, 'Write the message text, or remove the row.');
		}
		return { role, content };
	});
}

/** `maxTokens`: a whole number from 1 to the model's output limit where the catalogue knows it. */
export function readMaxTokens(ctx: IExecuteFunctions, itemIndex: number, modelId: string): number {
	const value = readInteger(ctx, itemIndex, ctx.getNodeParameter('maxTokens', itemIndex, DEFAULT_MAX_TOKENS), 'Max Tokens', { min: 1 });
	const limit = findModel(modelId)?.maxOutputTokens;
	if (limit !== undefined && value > limit) {
		throw fieldError(ctx, itemIndex, 'Max Tokens', `must be at most ${limit} for ${modelId}, not ${value}`, `${modelId} writes at most ${limit} tokens per answer.`);
	}
	return value;
}

/** An optional number option within [min, max]; undefined when the option was not added. */
export function readOptionalNumber(
	ctx: IExecuteFunctions,
	itemIndex: number,
	value: unknown,
	field: string,
	range: { min: number; max: number },
): number | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	const number = typeof value === 'number' ? value : Number(String(value).trim());
	if (!Number.isFinite(number) || number < range.min || number > range.max) {
		throw fieldError(ctx, itemIndex, field, `must be a number from ${range.min} to ${range.max}, not ${JSON.stringify(value)}`);
	}
	return number;
}

/** Stop sequences given as a list or one text; empty entries dropped. */
export function readStopSequences(ctx: IExecuteFunctions, itemIndex: number, value: unknown, field: string, max?: number): string[] | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	const list = (Array.isArray(value) ? value : [value]).map((entry) => (typeof entry === 'string' ? entry : String(entry ?? ''))).filter((entry) => entry !== '');
	if (list.length === 0) return undefined;
	if (max !== undefined && list.length > max) throw fieldError(ctx, itemIndex, field, `may hold at most ${max} sequences, not ${list.length}`);
	return list;
}

export function readEffort(ctx: IExecuteFunctions, itemIndex: number, value: unknown): string | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	const effort = String(value);
	if (!EFFORT_LEVELS.some((level) => level.value === effort)) {
		throw fieldError(ctx, itemIndex, 'Effort', `must be one of ${EFFORT_LEVELS.map((level) => level.value).join(', ')}, not "${effort}"`);
	}
	return effort;
}

/**
 * Fields the node sets win over the same fields in Extra Body Fields. The objects named in
 * `mergedObjects` (e.g. `output_config`) are merged key by key instead, so extra keys in them
 * survive.
 */
export function mergeBody(extraBody: IDataObject, fields: IDataObject, mergedObjects: readonly string[] = []): IDataObject {
	const body: IDataObject = { ...extraBody };
	for (const [key, value] of Object.entries(fields)) {
		if (value === undefined) continue;
		const extra = body[key];
		const merge = mergedObjects.includes(key) && isPlainObject(value) && isPlainObject(extra);
		body[key] = merge ? { ...(extra as IDataObject), ...(value as IDataObject) } : value;
	}
	return body;
}

function isPlainObject(value: unknown): boolean {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------
// Replies, streamed or not

/** An `error` the gateway sent inside a stream (or in a 200 answer). */
export class GatewayReplyError extends Error {
	constructor(
		readonly gatewayMessage: string | undefined,
		readonly gatewayType: string | undefined,
		readonly gatewayCode: string | number | undefined,
	) {
		super(gatewayMessage ?? 'the gateway reported an error');
		this.name = 'GatewayReplyError';
	}

	/** From any of the error shapes (`{"error":{...}}`, `{"type":"error","error":{...}}`). */
	static from(payload: unknown): GatewayReplyError {
		const parsed = parseErrorBody(typeof payload === 'string' ? payload : JSON.stringify(payload));
		return new GatewayReplyError(parsed.message, parsed.type, parsed.code);
	}
}

/** The stream broke the format: an event that is not JSON, or no end mark. */
export class BrokenStreamError extends Error {
	constructor(message: string) {
		super(message);
		this.name = 'BrokenStreamError';
	}
}

/** Parses an event's data, or says plainly that it was not JSON. */
export function eventJson(event: ServerSentEvent): IDataObject {
	try {
		const value = JSON.parse(event.data) as unknown;
		if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as IDataObject;
	} catch {
		// reported below
	}
	throw new BrokenStreamError(`The gateway sent a stream event that is not a JSON object: ${event.data.slice(0, 120)}`);
}

/**
 * Turns one wire format's events back into the reply the gateway gives without streaming, so
 * both paths produce the same output. Text parts are kept and joined once, at the end.
 */
export interface ReplyStream<R> {
	/** Takes one event; returns the answer text it carried (to show at once), if any. Throws on `error` events. */
	take(event: ServerSentEvent): string | undefined;
	/** The stream's own end mark arrived (`[DONE]`, `message_stop`). */
	readonly finished: boolean;
	/** What the end mark is called, for the message when it never comes. */
	readonly endMark: string;
	/** The reply in the shape of the non-streamed answer. */
	reply(): R;
}

export interface ChatCall<R> {
	path: string;
	body: IDataObject;
	stream: boolean;
	itemIndex: number;
	what: string;
	newReplyStream: () => ReplyStream<R>;
	/** The answer text of a whole reply, for n8n streaming when the gateway did not stream. */
	answerText: (reply: R) => string;
	/** Whether a whole (200) reply is really an error body. */
	isErrorReply: (reply: R) => boolean;
}

/** n8n's streaming API for one item, or undefined when n8n is not streaming this run. */
export interface LiveText {
	begin(): Promise<void>;
	write(text: string): Promise<void>;
	end(): Promise<void>;
	fail(message: string): Promise<void>;
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
	// n8n's sendChunk returns a promise although it is typed void; awaiting it keeps the order.
	const send = async (type: ChunkType, content?: string) => await Promise.resolve(ctx.sendChunk(type, itemIndex, content));
	return {
		begin: async () => await send('begin'),
		write: async (text) => await send('item', text),
		end: async () => await send('end'),
		fail: async (message) => await send('error', message),
	};
}

const STREAM_HINT = 'The partial answer was discarded. Try again; if it keeps happening, turn off Stream.';

/** Sends a chat request and returns the whole reply, reading and aggregating the stream if asked. */
export async function callChat<R>(ctx: IExecuteFunctions, client: GatewayClient, call: ChatCall<R>): Promise<R> {
	const live = liveTextFor(ctx, call.itemIndex);
	const request = { path: call.path, body: call.body, itemIndex: call.itemIndex, what: call.what };
	if (!call.stream) {
		const reply = await client.json<R>(request);
		if (call.isErrorReply(reply)) throw replyError(ctx, client, GatewayReplyError.from(reply), call.itemIndex, false);
		if (live) await passWhole(live, call.answerText(reply));
		return reply;
	}

	const response = await client.stream(request);
	const contentType = String(response.headers?.['content-type'] ?? '');
	if (!/event-stream/i.test(contentType)) {
		// Some relays ignore `stream` and answer with one JSON body.
		const reply = await readWholeJson<R>(ctx, client, response.body, call);
		if (live) await passWhole(live, call.answerText(reply));
		return reply;
	}

	const replyStream = call.newReplyStream();
	let begun = false;
	try {
		if (live) {
			await live.begin();
			begun = true;
		}
		for await (const events of readServerSentEvents(response.body)) {
			for (const event of events) {
				const text = replyStream.take(event);
				if (text && live) await live.write(text);
				if (replyStream.finished) break;
			}
			if (replyStream.finished) break;
		}
		if (!replyStream.finished) {
			throw new BrokenStreamError(`The answer stream ended before the gateway finished the answer (no ${replyStream.endMark})`);
		}
	} catch (error) {
		const failure = streamError(ctx, client, error, call);
		if (begun && live) await live.fail(failure.message).catch(() => undefined);
		throw failure;
	}
	if (live) await live.end();
	return replyStream.reply();
}

async function passWhole(live: LiveText, text: string): Promise<void> {
	await live.begin();
	if (text !== '') await live.write(text);
	await live.end();
}

async function readWholeJson<R>(ctx: IExecuteFunctions, client: GatewayClient, stream: ByteStream, call: ChatCall<R>): Promise<R> {
	const parts: Buffer[] = [];
	try {
		for await (const chunk of stream) parts.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
	} catch (error) {
		throw streamError(ctx, client, error, call);
	}
	const text = Buffer.concat(parts).toString('utf8');
	let reply: R;
	try {
		reply = JSON.parse(text) as R;
	} catch {
		throw replyError(ctx, client, new BrokenStreamError(`The gateway answered with neither an event stream nor JSON: ${text.slice(0, 200)}`), call.itemIndex, true);
	}
	if (call.isErrorReply(reply)) throw replyError(ctx, client, GatewayReplyError.from(reply), call.itemIndex, false);
	return reply;
}

function streamError<R>(ctx: IExecuteFunctions, client: GatewayClient, error: unknown, call: ChatCall<R>): Error {
	if (error instanceof GatewayReplyError || error instanceof BrokenStreamError) return replyError(ctx, client, error, call.itemIndex, true);
	if (error instanceof NodeApiError) return error;
	if (isAbortError(error) || client.cancelSignal?.aborted) return networkError(ctx.getNode(), `${call.what} was cancelled`, call.itemIndex);
	// The open answer stream fails with the socket's own error (ECONNRESET, "aborted"), unwrapped.
	const failure = networkError(ctx.getNode(), client.scrub(describeNetworkError(error, 'Reading the answer stream')), call.itemIndex);
	failure.description = STREAM_HINT;
	return failure;
}

/** An error reported inside a reply (or a reply that broke the format), in plain words. */
function replyError(
	ctx: IExecuteFunctions,
	client: GatewayClient,
	error: GatewayReplyError | BrokenStreamError,
	itemIndex: number,
	midStream: boolean,
): NodeApiError {
	if (error instanceof BrokenStreamError) {
		return new NodeApiError(ctx.getNode(), { kind: 'broken_stream' } as JsonObject, {
			message: client.scrub(error.message),
			description: STREAM_HINT,
			itemIndex,
		});
	}
	const quoted = error.gatewayMessage ? client.scrub(error.gatewayMessage) : undefined;
	const kind = classifyError(undefined, { message: quoted, type: error.gatewayType, code: error.gatewayCode });
	const where = midStream ? 'The gateway reported an error in the middle of the answer' : 'The gateway reported an error';
	const details = [error.gatewayType, error.gatewayCode !== undefined ? `code ${error.gatewayCode}` : undefined].filter(Boolean).join(', ');
	const message = `${where}: "${quoted ?? 'no details'}"${details ? ` (${details})` : ''}`;
	return new NodeApiError(
		ctx.getNode(),
		{ kind, gatewayMessage: quoted ?? null, gatewayType: error.gatewayType ?? null, gatewayCode: error.gatewayCode ?? null } as JsonObject,
		{ message, description: midStream ? STREAM_HINT : undefined, itemIndex },
	);
}
