/**
 * Files into n8n binary data. The type comes from the bytes themselves (gateways and CDNs often
 * say `application/octet-stream`), and downloads are handed to n8n as streams, so that in n8n's
 * filesystem binary mode a large video never sits whole in memory.
 */
import type { IBinaryData, IExecuteFunctions } from 'n8n-workflow';

import { GatewayError, failedHeadline, rootCause } from '../failures/errors';
import { gatewayQuote, quoteStart } from '../failures/errorBody';
import type { GatewayErrorInit } from '../failures/errors';
import { callExtra } from '../wire/transport';
import type { ByteStream, GatewayCall, GatewayClient } from '../wire/transport';
import type { FileStreamSource } from '../wire/streamedBody';
import { closeStream, FileWaitEnded, raceFileWait } from '../wire/fileWait';
import { deadlineSignal } from '../wire/timing';
import type { FileWaitLimit } from '../wire/fileWait';
import { fieldError } from '../items/validate';

export interface FileType {
	mimeType: string;
	extension: string;
}

/** Bytes [start, end) as Latin-1 text: how a format's signature is read. */
export const ascii = (bytes: Buffer, start: number, end: number) => bytes.subarray(start, end).toString('latin1');

/** An ISO media file (MP4, MOV, AVIF) opens with its `ftyp` box: a small size (16 bytes and up, in steps of 4), then "ftyp". */
function isFtypBox(bytes: Buffer): boolean {
	if (bytes.length < 12 || ascii(bytes, 4, 8) !== 'ftyp') return false;
	const size = bytes.readUInt32BE(0);
	return size >= 16 && size <= 4096 && size % 4 === 0;
}

/**
 * The file type from its signature at offset 0, where each format puts it (never from a search in
 * the content: a CSV that quotes "%PDF-1.7" is text); undefined when it is none we know.
 */
export function sniffFileType(bytes: Buffer): FileType | undefined {
	if (bytes.length >= 8 && bytes.readUInt32BE(0) === 0x89504e47 && bytes.readUInt32BE(4) === 0x0d0a1a0a) {
		return { mimeType: 'image/png', extension: 'png' };
	}
	if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return { mimeType: 'image/jpeg', extension: 'jpg' };
	// RIFF, the chunk size, WEBP, then the first chunk: VP8 (lossy), VP8L (lossless) or VP8X (extended).
	if (bytes.length >= 15 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 15) === 'WEBPVP8') return { mimeType: 'image/webp', extension: 'webp' };
	if (bytes.length >= 6 && /^GIF8[79]a$/.test(ascii(bytes, 0, 6))) return { mimeType: 'image/gif', extension: 'gif' };
	if (isFtypBox(bytes)) {
		const brand = ascii(bytes, 8, 12);
		if (brand === 'qt  ') return { mimeType: 'video/quicktime', extension: 'mov' };
		if (/^(avif|avis)$/.test(brand)) return { mimeType: 'image/avif', extension: 'avif' };
		return { mimeType: 'video/mp4', extension: 'mp4' };
	}
	if (bytes.length >= 4 && bytes.readUInt32BE(0) === 0x1a45dfa3) return { mimeType: 'video/webm', extension: 'webm' };
	if (bytes.length >= 8 && /^%PDF-\d\.\d$/.test(ascii(bytes, 0, 8))) return { mimeType: 'application/pdf', extension: 'pdf' };
	return undefined;
}

/** The type of bytes of no type we recognise. */
export const UNKNOWN_FILE: FileType = { mimeType: 'application/octet-stream', extension: 'bin' };

function fileName(baseName: string, type: FileType): string {
	const safe = baseName.replace(/[^A-Za-z0-9_.-]+/g, '-').slice(0, 100) || 'file';
	return `${safe}.${type.extension}`;
}

/** `baseName`: the file name without extension, e.g. `image-0` (the extension comes from the bytes). */
export async function bufferToBinary(ctx: IExecuteFunctions, bytes: Buffer, baseName: string): Promise<IBinaryData> {
	const type = sniffFileType(bytes) ?? UNKNOWN_FILE;
	return await ctx.helpers.prepareBinaryData(bytes, fileName(baseName, type), type.mimeType);
}

/**
 * The file's size as n8n recorded it, without reading the file; undefined when n8n did not. Where
 * n8n recorded no byte count (1.x) the store is asked (S3: a HEAD request with no timeout of its
 * own): `within` ends that wait with the item, as every wait on the store.
 */
export async function recordedSize(ctx: IExecuteFunctions, binary: IBinaryData, within?: { limit: FileWaitLimit; field: FileField }): Promise<number | undefined> {
	if (typeof binary.bytes === 'number') return binary.bytes;
	if (binary.id && typeof ctx.helpers.getBinaryMetadata === 'function') {
		const asked = ctx.helpers.getBinaryMetadata(binary.id);
		const metadata = await (within ? raceFileWait(asked, within.limit.scope) : asked).catch((error: unknown) => {
			if (within && error instanceof FileWaitEnded) throw fileWaitError(ctx, within.field, within.limit, error);
			return undefined;
		});
		if (typeof metadata?.fileSize === 'number') return metadata.fileSize;
	}
	// Default mode keeps the bytes inline, as Base64.
	if (!binary.id && typeof binary.data === 'string') return Math.floor((binary.data.replace(/=+$/, '').length * 3) / 4);
	return undefined;
}

/** Where n8n keeps a file outside the item and can stream it: its id, else undefined. */
export function streamableId(ctx: IExecuteFunctions, binary: IBinaryData | undefined): string | undefined {
	return binary?.id && typeof ctx.helpers.getBinaryStream === 'function' ? binary.id : undefined;
}

/**
 * The first `headBytes` bytes (or fewer, in a shorter file) of a file n8n keeps outside the item,
 * and, when `countPast` is given (n8n recorded no size), the file read on to count its bytes, never
 * whole in memory, until its end or once more than `countPast` bytes were counted; the file is
 * closed. Its open and every read end with the item's `limit` (its deadline, a Stop): then the item
 * fails with its field's error (fileWaitError), as every wait on the binary store does.
 */
export async function scanBinary(ctx: IExecuteFunctions, id: string, headBytes: number, countPast: number | undefined, limit: FileWaitLimit, field: FileField): Promise<{ head: Buffer; size: number }> {
	const { scope } = limit;
	const parts: Buffer[] = [];
	let length = 0;
	try {
		const stream = await raceFileWait(ctx.helpers.getBinaryStream(id, countPast === undefined ? headBytes : undefined), scope, closeStream);
		const reads = (stream as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();
		try {
			while (length < headBytes || (countPast !== undefined && length <= countPast)) {
				const next = await raceFileWait(reads.next(), scope);
				if (next.done) break;
				const part = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value);
				if (length < headBytes) parts.push(part.subarray(0, headBytes - length));
				length += part.length;
			}
		} finally {
			closeStream(stream);
		}
	} catch (error) {
		throw error instanceof FileWaitEnded ? fileWaitError(ctx, field, limit, error) : error;
	}
	return { head: Buffer.concat(parts), size: length };
}

/** A binary field being read for an item, named as the user knows it. */
export interface FileField {
	itemIndex: number;
	/** The parameter that names the binary field ("Image From Binary Field"). */
	parameter: string;
	property: string;
}

/** A wait on the binary store cut by the item's end: a Stop, or the field's error naming the limit. */
export function fileWaitError(ctx: IExecuteFunctions, field: FileField, limit: FileWaitLimit, ended: FileWaitEnded): Error {
	if (ended.reason === 'cancelled') return new GatewayError({ kind: 'cancelled', headline: `Reading field "${field.property}" was cancelled`, itemIndex: field.itemIndex });
	return storeTooSlow(ctx, field, limit.name);
}

/** n8n's binary store did not give a field's bytes within `within` (a limit's name); `progress`: how far it got. */
export function storeTooSlow(ctx: IExecuteFunctions, field: FileField, within: string, progress?: string): Error {
	return fieldError(
		ctx,
		field.itemIndex,
		field.parameter,
		`field "${field.property}" could not be read in time: n8n's binary store did not give its bytes within ${within}${progress ? ` (${progress})` : ''}`,
		'Check the binary data store (its disk, database or S3 bucket), or raise the limit.',
	);
}

/**
 * A file n8n keeps outside the item, to be streamed into a request body when it is sent (each
 * attempt opens it again): `size` is the size checked, `checkHead` what its start must still be,
 * `changed` the item's error when the file read differs (or cannot be opened).
 */
export function binaryFileSource(
	ctx: IExecuteFunctions,
	id: string,
	size: number,
	field: FileField,
	changed: (problem: string) => Error,
	checkHead?: (head: Buffer) => string | undefined,
): FileStreamSource {
	return {
		size,
		slow: (within, progress) => storeTooSlow(ctx, field, within, progress),
		open: async () => {
			try {
				return await ctx.helpers.getBinaryStream(id);
			} catch (error) {
				throw changed(`could not be read (${(error as Error)?.message ?? String(error)})`);
			}
		},
		checkHead,
		changed,
	};
}

/**
 * A binary field's bytes, no more than `limit` + 1 of them where n8n keeps the file outside the
 * item (filesystem, database, S3): the caller checked the size n8n recorded, and a file that holds
 * more (the record lies, or the file changed) is found without holding all of it in memory. More
 * than `limit` bytes back means the file is larger than `limit`.
 */
export async function readBinaryAtMost(ctx: IExecuteFunctions, itemIndex: number, property: string, limit: number): Promise<Buffer> {
	const id = streamableId(ctx, ctx.getInputData()[itemIndex]?.binary?.[property]);
	if (id === undefined) return await ctx.helpers.getBinaryDataBuffer(itemIndex, property);
	const parts: Buffer[] = [];
	let length = 0;
	// Leaving the loop early closes the file.
	for await (const chunk of await ctx.helpers.getBinaryStream(id)) {
		const part = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
		parts.push(part);
		length += part.length;
		if (length > limit) break;
	}
	return Buffer.concat(parts);
}

/**
 * A text type where a file was expected: the host answered 200 with an error or login page.
 * Unknown binary types pass (a format we do not sniff is still a file).
 */
export function isPageContentType(contentType: unknown): boolean {
	return /^(text\/|application\/(json|xml|xhtml\+xml|problem\+json)\b)/i.test(String(contentType ?? '').trim());
}

/**
 * Reads until `size` bytes are buffered (or the stream ends), then puts them back. When the stream
 * ended first, nothing can be put back: the returned bytes are then the whole file.
 */
export async function peekStream(stream: ByteStream, size = 32): Promise<Buffer> {
	const parts: Buffer[] = [];
	let length = 0;
	while (length < size) {
		const chunk = stream.read();
		if (chunk !== null) {
			const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
			parts.push(buffer);
			length += buffer.length;
			continue;
		}
		if (stream.readableEnded) break;
		const event = await new Promise<string>((resolve, reject) => {
			const settle = (name: string, error?: unknown) => {
				stream.removeListener('readable', onReadable);
				stream.removeListener('end', onEnd);
				stream.removeListener('error', onError);
				if (name === 'error') reject(error);
				else resolve(name);
			};
			const onReadable = () => settle('readable');
			const onEnd = () => settle('end');
			const onError = (error: unknown) => settle('error', error);
			stream.once('readable', onReadable);
			stream.once('end', onEnd);
			stream.once('error', onError);
		});
		if (event === 'end') break;
	}
	const head = Buffer.concat(parts);
	if (head.length > 0 && !stream.readableEnded) stream.unshift(head);
	return head;
}

/** Bytes that read as text (no control bytes but tab and line ends, valid UTF-8): a message, not a file. */
export function looksLikeText(bytes: Buffer): boolean {
	for (const byte of bytes) if (byte === 0x7f || (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d)) return false;
	return !bytes.toString('utf8').includes('\uFFFD');
}

/** A download, and the transport call it is: its item, its limits, the fields every error keeps. */
export interface DownloadSpec extends Pick<GatewayCall, 'deadlineMs' | 'notAfter' | 'limitName' | 'errorFields'> {
	link: string;
	/** "Downloading the video of task x": what failed, in messages. */
	what: string;
	/** What the link promised, for messages: "a video", "an image". */
	expected: string;
	/** The MIME type family the file must sniff as to be taken even when its start reads as text. */
	mediaPrefix: 'image/' | 'video/';
	/** File name without extension, e.g. `image-0` or `video-<task id>`. */
	baseName: string;
	itemIndex: number;
	/** What to do next, added to every hint (e.g. "run Download with task ID x"). */
	nextStep?: string;
	/** The type to use when the bytes name none, from the host's Content-Type. */
	fallback?: (contentType: string) => FileType;
	/** The node's option that turns the download off, for the storage hint: "Download Video". */
	downloadOption: string;
}

/** A link that answers with a page: this much of it is read, for at most this long, to quote. */
const QUOTE_BYTES = 2048;
const QUOTE_READ_MS = 3000;
/** Words in n8n's own errors when a file is over its binary-data limits (`database` mode's cap, a string too long). */
const SIZE_WORDS = /exceed|too large|too long|larger than|size|limit|memory/i;

/** Up to QUOTE_BYTES of a refused answer, read for at most QUOTE_READ_MS, then the stream is closed. */
async function readForQuote(stream: ByteStream, head: Buffer = Buffer.alloc(0)): Promise<string> {
	const parts: Buffer[] = [head];
	let size = head.length;
	const timer = deadlineSignal(QUOTE_READ_MS);
	const stop = () => stream.destroy();
	timer.addEventListener('abort', stop, { once: true });
	try {
		if (size < QUOTE_BYTES && !stream.readableEnded) {
			for await (const chunk of stream) {
				const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
				parts.push(buffer);
				size += buffer.length;
				if (size >= QUOTE_BYTES) break;
			}
		}
	} catch {
		// what arrived is quoted
	} finally {
		timer.removeEventListener('abort', stop);
		stream.destroy();
	}
	return Buffer.concat(parts).subarray(0, QUOTE_BYTES).toString('utf8');
}

const withNextStep = (hint: string, spec: DownloadSpec) => (spec.nextStep ? `${hint} ${spec.nextStep}` : hint);

/**
 * Downloads a link into n8n binary data, as a stream. A link that answers with something else
 * than the promised file (an error body, a page, a few bytes of text) is refused, quoting what it
 * sent; a stream that breaks is the connection's failure; n8n's own storage limits are named as such.
 */
export async function downloadToBinary(ctx: IExecuteFunctions, client: GatewayClient, spec: DownloadSpec): Promise<IBinaryData> {
	const response = await client.download(spec.link, spec, spec.nextStep);
	const body = response.body;
	const contentType = String(response.headers['content-type'] ?? '').split(';')[0].trim();
	const extra = callExtra(spec, { status: response.status });
	const refuse = (said: string, sent: string) =>
		new GatewayError({
			kind: 'protocol',
			headline: `${spec.what} failed: the link answered with ${said} instead of ${spec.expected}`,
			hint: withNextStep('The file host sent an error or a page instead of the file; the link may have expired or need a login.', spec),
			gatewayMessage: gatewayQuote(sent) || undefined,
			...extra,
		});
	if (isPageContentType(contentType)) throw refuse(contentType, await readForQuote(body));

	const head = await peekStream(body).catch((error: unknown) => {
		body.destroy();
		throw response.failure(error, withNextStep('The download broke off.', spec));
	});
	const sniffed = sniffFileType(head);
	if (!sniffed?.mimeType.startsWith(spec.mediaPrefix) && looksLikeText(head) && !/svg/i.test(contentType)) {
		// peekStream put the head back, unless the body had already ended.
		const quote = await readForQuote(body, body.readableEnded ? head : undefined);
		throw refuse(head.length === 0 ? 'an empty body' : `text (served as ${contentType || 'no content type'})`, quote);
	}
	const type = sniffed ?? spec.fallback?.(contentType) ?? UNKNOWN_FILE;
	const name = fileName(spec.baseName, type);
	let streamError: unknown;
	const onError = (error: unknown) => {
		streamError ??= error;
	};
	body.on('error', onError);
	try {
		// A file shorter than the peek was read whole, and an ended stream cannot take it back.
		if (body.readableEnded) return await ctx.helpers.prepareBinaryData(head, name, type.mimeType);
		// n8n's types name Node's Readable, which node code may not import; the object is one.
		const readable = body as unknown as Parameters<IExecuteFunctions['helpers']['prepareBinaryData']>[0];
		return await ctx.helpers.prepareBinaryData(readable, name, type.mimeType);
	} catch (error) {
		body.destroy();
		// The stream broke (the host, the deadline, a Stop): the connection's failure, not n8n's.
		if (streamError !== undefined || client.cancelSignal?.aborted === true) {
			throw response.failure(streamError ?? error, withNextStep('The download broke off; the file was not kept.', spec));
		}
		throw storageError(error, spec, extra);
	} finally {
		body.removeListener('error', onError);
	}
}

/** n8n refused to store the file: its binary-data mode's limits, or its storage. */
function storageError(error: unknown, spec: DownloadSpec, extra: Partial<GatewayErrorInit>): GatewayError {
	const cause = rootCause(error);
	const said = (error as Error)?.message ?? cause.message ?? String(error);
	const sizeLimit = SIZE_WORDS.test(said) || cause.code === 'ERR_STRING_TOO_LONG';
	const keepLink = `or turn the ${spec.downloadOption} option off and keep the link`;
	return new GatewayError({
		kind: 'storage',
		headline: `${failedHeadline(spec.what, 'storage')} (${quoteStart(said, 200)})`,
		hint: sizeLimit
			? `This is n8n's own limit for binary data, not the gateway's: in n8n's 'database' binary data mode (queue mode's default) a file is held in memory and capped at 512 MB. Set N8N_DEFAULT_BINARY_DATA_MODE=filesystem (or s3) in n8n's environment, ${keepLink}.`
			: `n8n's binary data storage refused the file (check its disk space and N8N_DEFAULT_BINARY_DATA_MODE), ${keepLink}.`,
		...extra,
	});
}
