/**
 * Request bodies with files in them, JSON (files as Base64 text, jsonBody.ts) or multipart (files
 * as their own bytes, multipart.ts), cut into a plan: text, file, text, …, text. The promises kept
 * here, for both kinds:
 * - the body's length is known before any file is read (its Content-Length), from the sizes the
 *   checks before the request accepted;
 * - a file n8n keeps outside the item (filesystem, database, S3 mode) is streamed: neither the file
 *   nor the body is ever whole in memory (`StreamedBody`, opened afresh for each attempt), and a
 *   file read that is not the file checked (longer, shorter, another type at its start) fails the
 *   request with the file's own error;
 * - bytes already in memory (n8n's default mode keeps them in the item) are written once, into
 *   the bytes n8n sends.
 */
import type { IExecuteFunctions } from 'n8n-workflow';

import { closeStream, FileWaitEnded, raceFileWait } from './fileWait';

/** What n8n's getBinaryStream returns: a Node Readable (node code may not import `stream`). */
export type NodeReadable = Awaited<ReturnType<IExecuteFunctions['helpers']['getBinaryStream']>>;

/** A file read from n8n's binary store when the request goes out, rather than bytes held now. */
export interface FileStreamSource {
	/** Bytes of the file as n8n recorded them (and the checks before the request accepted): the Content-Length counts on it. */
	readonly size: number;
	/** Opens the file at its start; each attempt of a request opens it again. */
	open(): Promise<NodeReadable>;
	/** What the file's first bytes must still be (its type, checked before the request): a problem, or undefined. */
	checkHead?(head: Buffer): string | undefined;
	/** The error that fails the request when the file read is not the file checked ("holds more than …"). */
	changed(problem: string): Error;
	/** The error that fails the request when the store did not give the file `within` a limit (its name): `progress`, how far it got. */
	slow(within: string, progress: string): Error;
}

// Whole groups of three bytes: each piece encodes to 64 KiB of text without padding, a string
// small enough for V8's young generation (freed at once, not left for a full collection).
const PIECE_BYTES = 3 * 16 * 1024;
/** How much of a streamed file's start is checked against what was checked before the request. */
const HEAD_BYTES = 64;

/** `bytes`' Base64 as bytes, a piece at a time (`bytes` a whole number of groups of three, or the last piece). */
function* base64Pieces(bytes: Buffer): Generator<Buffer> {
	for (let start = 0; start < bytes.length; start += PIECE_BYTES) yield Buffer.from(bytes.subarray(start, start + PIECE_BYTES).toString('base64'), 'latin1');
}

/** A file in a body: its bytes, or the file to stream them from; sent as Base64 text or as they are. */
export interface BodyFile {
	readonly source: Buffer | FileStreamSource;
	readonly encoding: 'base64' | 'raw';
}

/** A body cut where its files go: text, file, text, …, text (one text more than files). */
export interface BodyPlan {
	texts: string[];
	files: BodyFile[];
}

/** Bytes a file takes in the body. */
function wireBytes(file: BodyFile): number {
	const size = Buffer.isBuffer(file.source) ? file.source.length : file.source.size;
	return file.encoding === 'base64' ? 4 * Math.ceil(size / 3) : size;
}

/** Bytes of the whole body, known before any file is read. */
function planSize(plan: BodyPlan): number {
	let size = 0;
	for (const text of plan.texts) size += Buffer.byteLength(text);
	for (const file of plan.files) size += wireBytes(file);
	return size;
}

/**
 * The body as n8n sends it: its bytes, each file written into them once (a Base64 file without
 * ever being one string), when every file is in memory; else a `StreamedBody`.
 */
export function encodePlan(plan: BodyPlan): Buffer | StreamedBody {
	if (plan.files.some((file) => !Buffer.isBuffer(file.source))) return new StreamedBody(plan);
	const out = Buffer.allocUnsafe(planSize(plan));
	let at = 0;
	plan.texts.forEach((text, i) => {
		at += out.write(text, at, 'utf8');
		if (i >= plan.files.length) return;
		const file = plan.files[i];
		const bytes = file.source as Buffer;
		for (const piece of file.encoding === 'raw' ? [bytes] : base64Pieces(bytes)) at += piece.copy(out, at);
	});
	return out.subarray(0, at);
}

/** A request body opened for one attempt: the stream n8n sends, and what ends it. */
export interface OpenedBody {
	/** A Node Readable. */
	body: NodeReadable;
	/** Why the body failed (a file read is not the file checked, or could not be read), once it has: the request's error. */
	readonly failure: Error | undefined;
	/**
	 * Whether the body was read to its last byte. With its exact Content-Length, a body that was not
	 * never reached the gateway whole: the gateway cannot have acted on it.
	 */
	readonly ended: boolean;
	/** The file the body is waiting for (to open, or for its next bytes) as that file's error, or undefined: who to blame when the body stalls past `within`. */
	stalled(within: string): Error | undefined;
	/** Ends the body and closes every file it opened (idempotent): after the attempt, or when it fails. */
	close(): void;
}

/** A body with files streamed from n8n's binary store: a description, opened afresh for each attempt. */
export class StreamedBody {
	/** Bytes of the whole body, known before any file is read: its Content-Length. */
	readonly size: number;

	constructor(private readonly plan: BodyPlan) {
		this.size = planSize(plan);
	}

	/**
	 * Opens the files (the first now, the others when the body reaches them) and the body over them.
	 * Every open ends with `signal` (the attempt's deadline, a Stop) or the body's close: a file that
	 * opens after that is closed at once.
	 */
	async open(signal?: AbortSignal): Promise<OpenedBody> {
		const opened: NodeReadable[] = [];
		const closing = new AbortController();
		const state: BodyState = { failure: undefined, closed: false, ended: false, waiting: undefined, ends: signal ? AbortSignal.any([signal, closing.signal]) : closing.signal };
		const first = this.plan.files.find((file) => !Buffer.isBuffer(file.source))?.source as FileStreamSource;
		let firstStream: NodeReadable | undefined = await openSource(first, opened, state);
		const openNext = async (source: FileStreamSource) => {
			if (source === first && firstStream !== undefined) {
				const stream = firstStream;
				firstStream = undefined;
				return stream;
			}
			return await openSource(source, opened, state);
		};
		const plan = this.plan;
		async function* chunks(): AsyncGenerator<Buffer> {
			for (let i = 0; i < plan.texts.length; i++) {
				yield Buffer.from(plan.texts[i], 'utf8');
				if (i === plan.files.length) break;
				const file = plan.files[i];
				const source = file.source;
				if (Buffer.isBuffer(source)) yield* file.encoding === 'raw' ? [source] : base64Pieces(source);
				else yield* streamedFile(file.encoding, source, await openNext(source), state);
			}
		}
		const close = () => {
			if (state.closed) return;
			state.closed = true;
			closing.abort();
			for (const stream of opened) closeStream(stream);
		};
		const stalled = (within: string) => {
			const waiting = state.waiting;
			if (waiting === undefined || state.ended) return undefined;
			return waiting.source.slow(within, waiting.read === undefined ? NOT_OPENED : `${waiting.read} of its ${waiting.source.size} bytes read, then nothing more`);
		};
		// n8n's binary store gives a Node Readable: Readable.from (which ignores `this`) is inherited by every one.
		const from = (firstStream.constructor as unknown as { from: (iterable: AsyncIterable<Buffer>, options: { objectMode: boolean }) => NodeReadable }).from;
		const body = from(chunks(), { objectMode: false });
		// However the body ends (sent, failed, destroyed unread), its files are closed.
		body.once('close', close);
		body.once('end', () => {
			state.ended = true;
		});
		return {
			body,
			get failure() {
				return state.failure;
			},
			get ended() {
				return state.ended;
			},
			stalled,
			close: () => {
				if (!body.destroyed) body.destroy();
				close();
			},
		};
	}
}

interface BodyState {
	failure: Error | undefined;
	closed: boolean;
	/** The body was read to its last byte. */
	ended: boolean;
	/** The file the body waits for: to open (`read` undefined), or for more bytes after `read`. */
	waiting: { source: FileStreamSource; read: number | undefined } | undefined;
	/** Ends every open: the attempt's deadline, a Stop, the body's close. */
	ends: AbortSignal;
}

const NOT_OPENED = 'it did not open';

/** An open that ended (deadline, Stop, body closed) before the file opened. */
class OpenEnded extends Error {
	override readonly name = 'AbortError';

	constructor(readonly source: FileStreamSource) {
		super('The request body was closed before its file opened');
	}
}

/** The error of the file whose open the attempt's end cut (an error of `open`), or undefined: should the deadline have cut it, the file is who to blame. */
export function stalledFileOf(error: unknown, within: string): Error | undefined {
	return error instanceof OpenEnded ? error.source.slow(within, NOT_OPENED) : undefined;
}

/** Opens a file for the body, raced against the body's end: a stream that opens after it is closed at once. */
async function openSource(source: FileStreamSource, opened: NodeReadable[], state: BodyState): Promise<NodeReadable> {
	state.waiting = { source, read: undefined };
	let stream: NodeReadable;
	try {
		stream = await raceFileWait(source.open(), state.ends, closeStream);
	} catch (error) {
		throw error instanceof FileWaitEnded ? new OpenEnded(source) : error;
	}
	if (state.closed || state.ends.aborted) {
		closeStream(stream);
		throw new OpenEnded(source);
	}
	opened.push(stream);
	state.waiting = undefined;
	return stream;
}

/** A read error in a few words: its code and message. */
function readProblem(error: unknown): string {
	const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
	const text = typeof message === 'string' && message !== '' ? message : String(error);
	return typeof code === 'string' && code !== '' && !text.includes(code) ? `${code}: ${text}` : text;
}

/**
 * One streamed file as it is read: its bytes as they are, or its Base64 encoded as they come (0 to
 * 2 bytes carried to the next chunk, so the text is the file's in one piece); a file that is not
 * the one checked (longer or shorter than its recorded size, another type at its start) fails the
 * body with the source's error.
 */
async function* streamedFile(encoding: BodyFile['encoding'], source: FileStreamSource, stream: NodeReadable, state: BodyState): AsyncGenerator<Buffer> {
	const fail = (problem: string) => {
		// A body closed from outside (the request failed, a Stop) cuts its file short: that is no failure of the file.
		if (state.closed) return new Error('The request body was closed');
		state.failure ??= source.changed(problem);
		return state.failure;
	};
	let carry = Buffer.alloc(0);
	let read = 0;
	let head: Buffer | undefined = source.checkHead ? Buffer.alloc(0) : undefined;
	// Set while the body waits for the file's next bytes (not while the request reads what it was given).
	const waitForFile = () => {
		state.waiting = { source, read };
	};
	waitForFile();
	try {
		for await (const chunk of stream as AsyncIterable<Buffer | string>) {
			state.waiting = undefined;
			const part = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
			read += part.length;
			if (read > source.size) throw fail(`holds more than the ${source.size} bytes n8n recorded for it`);
			if (head !== undefined) {
				head = Buffer.concat([head, part.subarray(0, HEAD_BYTES - head.length)]);
				if (head.length >= HEAD_BYTES || read === source.size) {
					const problem = source.checkHead?.(head);
					if (problem) throw fail(problem);
					head = undefined;
				}
			}
			if (encoding === 'raw') yield part;
			else {
				const bytes = carry.length > 0 ? Buffer.concat([carry, part]) : part;
				const whole = bytes.length - (bytes.length % 3);
				// A copy: the carry must not keep the whole chunk alive.
				carry = Buffer.from(bytes.subarray(whole));
				yield* base64Pieces(bytes.subarray(0, whole));
			}
			waitForFile();
		}
	} catch (error) {
		// A failure found above stays; else the file's own read failed part way (EIO, a store's connection
		// reset): the file's error, not the network's.
		throw error === state.failure ? state.failure : fail(`could not be read (${readProblem(error)}, after ${read} of its ${source.size} bytes)`);
	} finally {
		state.waiting = undefined;
		closeStream(stream);
	}
	if (read !== source.size) throw fail(`holds ${read} bytes, not the ${source.size} bytes n8n recorded for it`);
	if (head !== undefined) {
		const problem = source.checkHead?.(head);
		if (problem) throw fail(problem);
	}
	if (carry.length > 0) yield Buffer.from(carry.toString('base64'), 'latin1');
}

