/**
 * Request bodies that carry files. A file goes into a JSON body as Base64 text (a data URL or a
 * bare `data` field). Built the plain way, one 10 MB file becomes a 13 MB Base64 string, a 13 MB
 * data URL, 13 MB of JSON text and the 13 MB of bytes n8n's request helper sends: five copies per
 * request in flight, which V8 frees only at its next full collection, so a run with Concurrency
 * 10 rose about 50 MB per request in flight (issue 19, row 11c). Here the file stays a reference
 * (`Base64Text`) until the body is sent:
 * - a file n8n keeps outside the item (filesystem, database, S3 mode) is streamed: the body is the
 *   JSON text around it and its Base64, encoded chunk by chunk as the file is read, so neither the
 *   file nor the body is ever whole in memory (`StreamedJsonBody`, opened afresh for each attempt);
 * - bytes already in memory (n8n's default mode keeps them in the item) are written once, as the
 *   bytes n8n sends, with the Base64 encoded straight into them in small pieces.
 */
import type { IExecuteFunctions } from 'n8n-workflow';

import type { LargestField } from '../failures/errors';
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

/** Set while a body is cut into its pieces (planBody): files are then written by the body, not by toJSON. */
let planning = false;

/** Bytes to be sent as Base64 text after `prefix` (e.g. `data:image/png;base64,`). */
export class Base64Text {
	constructor(
		/** The bytes, or the file to stream them from when the request is sent. */
		readonly source: Buffer | FileStreamSource,
		readonly prefix = '',
	) {}

	/** Bytes of the file. */
	get size(): number {
		return Buffer.isBuffer(this.source) ? this.source.length : this.source.size;
	}

	/** Characters of the text (all ASCII, so also its bytes in JSON). */
	get length(): number {
		return this.prefix.length + 4 * Math.ceil(this.size / 3);
	}

	/** The whole text, for code that needs it as a string (small files, tests); a streamed file has none. */
	toString(): string {
		if (!Buffer.isBuffer(this.source)) throw new Error('A streamed file is written only into the request body that sends it');
		return `${this.prefix}${this.source.toString('base64')}`;
	}

	/**
	 * JSON.stringify of a body holding this writes the text, as if it had been a string. JSON.stringify
	 * calls this before a replacer sees the value: while a body is cut into its pieces, nothing.
	 */
	toJSON(): string {
		return planning ? '' : this.toString();
	}
}

// Whole groups of three bytes: each piece encodes to 64 KiB of text without padding, a string
// small enough for V8's young generation (freed at once, not left for a full collection).
const PIECE_BYTES = 3 * 16 * 1024;
/** How much of a streamed file's start is checked against what was checked before the request. */
const HEAD_BYTES = 64;

/** Writes `bytes`' Base64 into `target` at `offset`, a piece at a time; returns the new offset. */
function writeBase64(target: Buffer, offset: number, bytes: Buffer): number {
	let at = offset;
	for (let start = 0; start < bytes.length; start += PIECE_BYTES) {
		at += target.write(bytes.subarray(start, start + PIECE_BYTES).toString('base64'), at, 'latin1');
	}
	return at;
}

/** `bytes`' Base64 as bytes, a piece at a time (`bytes` a whole number of groups of three, or the last piece). */
function* base64Pieces(bytes: Buffer): Generator<Buffer> {
	for (let start = 0; start < bytes.length; start += PIECE_BYTES) yield Buffer.from(bytes.subarray(start, start + PIECE_BYTES).toString('base64'), 'latin1');
}

/** A body's JSON text cut where its files go: text, file, text, …, text. */
interface BodyPlan {
	texts: string[];
	files: Base64Text[];
}

/** Fresh markers tried before a body is given up as one whose text cannot be told from its files. */
const MARKER_TRIES = 8;

function planBody(body: unknown): BodyPlan | string {
	const nonce = Math.random().toString(36).slice(2, 12);
	for (let attempt = 0; attempt < MARKER_TRIES; attempt++) {
		// A marker no JSON text of ours holds; if a value had it (the count check), a fresh one is tried.
		const plan = planWith(body, `mgw-file-${nonce}-${attempt > 0 ? `${attempt}-` : ''}`);
		if (plan !== undefined) return plan;
	}
	// Never toJSON on a streamed file: that has no text to give, only the body that sends it.
	throw new Error('The request body holds text that cannot be told apart from where its files go; change the text and run again');
}

/** The plan with `marker` where the files go, or undefined when the text already held the marker. */
function planWith(body: unknown, marker: string): BodyPlan | string | undefined {
	const files: Base64Text[] = [];
	planning = true;
	let text: string;
	try {
		text = JSON.stringify(body, function (this: Record<string, unknown>, key: string, value: unknown) {
			const original = this[key];
			if (!(original instanceof Base64Text)) return value;
			files.push(original);
			return `${marker}${files.length - 1}`;
		});
	} finally {
		planning = false;
	}
	if (files.length === 0) return text;
	const pieces = text.split(new RegExp(`"${marker}(\\d+)"`));
	// pieces: text, index, text, index, …, text
	if (pieces.length !== 2 * files.length + 1 || text.split(marker).length !== files.length + 1) return undefined;
	return {
		// Each file's quotes and prefix go with the text around it.
		texts: pieces.filter((_, i) => i % 2 === 0).map((piece, i, all) => `${i > 0 ? '"' : ''}${piece}${i < all.length - 1 ? `"${files[Number(pieces[2 * i + 1])].prefix}` : ''}`),
		files: pieces.filter((_, i) => i % 2 === 1).map((index) => files[Number(index)]),
	};
}

/**
 * The body as n8n sends it: JSON text when it holds no `Base64Text` (as before); the JSON's bytes,
 * each file's Base64 written into them without ever being one string, when every file is bytes
 * in memory; a `StreamedJsonBody` when a file is to be streamed from n8n's binary store.
 */
export function encodeJsonBody(body: unknown): string | Buffer | StreamedJsonBody {
	const plan = planBody(body);
	if (typeof plan === 'string') return plan;
	if (plan.files.some((file) => !Buffer.isBuffer(file.source))) return new StreamedJsonBody(plan);
	let size = 0;
	for (const text of plan.texts) size += Buffer.byteLength(text);
	for (const file of plan.files) size += file.length - file.prefix.length;
	const out = Buffer.allocUnsafe(size);
	let at = 0;
	plan.texts.forEach((text, i) => {
		at += out.write(text, at, 'utf8');
		if (i < plan.files.length) at = writeBase64(out, at, plan.files[i].source as Buffer);
	});
	return out.subarray(0, at);
}

/** A request body opened for one attempt: the stream n8n sends, and what ends it. */
export interface OpenedBody {
	/** A Node Readable (or, where n8n's binary stream is no Node Readable, the whole body as bytes). */
	body: NodeReadable | Buffer;
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
export class StreamedJsonBody {
	/** Bytes of the whole body, known before any file is read: its Content-Length. */
	readonly size: number;

	constructor(private readonly plan: BodyPlan) {
		let size = 0;
		for (const text of plan.texts) size += Buffer.byteLength(text);
		for (const file of plan.files) size += file.length - file.prefix.length;
		this.size = size;
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
				const source = plan.files[i].source;
				if (Buffer.isBuffer(source)) yield* base64Pieces(source);
				else yield* streamedBase64(source, await openNext(source), state);
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
		// Node's Readable.from ignores `this`, and every Readable inherits it.
		const from = (firstStream.constructor as { from?: (iterable: AsyncIterable<Buffer>, options: { objectMode: boolean }) => NodeReadable }).from;
		if (typeof from !== 'function') {
			// Not a Node Readable: the body is made whole, with the same checks.
			const parts: Buffer[] = [];
			try {
				for await (const chunk of chunks()) parts.push(chunk);
			} finally {
				close();
			}
			state.ended = true;
			return { body: Buffer.concat(parts), failure: state.failure, ended: true, stalled, close };
		}
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
 * One streamed file's Base64, encoded as it is read (0 to 2 bytes carried to the next chunk, so
 * the text is the file's in one piece); a file that is not the one checked (longer or shorter
 * than its recorded size, another type at its start) fails the body with the source's error.
 */
async function* streamedBase64(source: FileStreamSource, stream: NodeReadable, state: BodyState): AsyncGenerator<Buffer> {
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
			const bytes = carry.length > 0 ? Buffer.concat([carry, part]) : part;
			const whole = bytes.length - (bytes.length % 3);
			// A copy: the carry must not keep the whole chunk alive.
			carry = Buffer.from(bytes.subarray(whole));
			yield* base64Pieces(bytes.subarray(0, whole));
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

/** Bytes a value takes in a JSON body (a file by its Base64 text), without writing it. */
function jsonBytes(value: unknown): number {
	if (value instanceof Base64Text) return value.length + 2;
	if (Array.isArray(value)) return value.reduce((sum: number, entry) => sum + jsonBytes(entry) + 1, 1);
	if (typeof value === 'object' && value !== null) return Object.entries(value).reduce((sum, [key, entry]) => sum + key.length + 4 + jsonBytes(entry), 1);
	return Buffer.byteLength(JSON.stringify(value) ?? '');
}

/** Whether a value holds a file: one the node attached (Base64Text), or a `data:` URL. */
function holdsFile(value: unknown): boolean {
	if (value instanceof Base64Text) return true;
	if (typeof value === 'string') return value.startsWith('data:');
	if (typeof value === 'object' && value !== null) return Object.values(value).some(holdsFile);
	return false;
}

/** The body's largest field as sent, for a gateway that refuses the request as too large (413). */
export function largestField(body: unknown): LargestField | undefined {
	if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
	let largest: { name: string; bytes: number; value: unknown } | undefined;
	for (const [name, value] of Object.entries(body)) {
		const bytes = jsonBytes(value);
		if (!largest || bytes > largest.bytes) largest = { name, bytes, value };
	}
	return largest && { name: largest.name, bytes: largest.bytes, file: holdsFile(largest.value) };
}
