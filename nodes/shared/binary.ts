/**
 * Files into n8n binary data. The type comes from the bytes themselves (gateways and CDNs often
 * say `application/octet-stream`), and downloads are handed to n8n as streams, so that in n8n's
 * filesystem binary mode a large video never sits whole in memory.
 */
import type { IBinaryData, IExecuteFunctions } from 'n8n-workflow';

import type { ByteStream } from './transport';

export interface FileType {
	mimeType: string;
	extension: string;
}

const ascii = (bytes: Buffer, start: number, end: number) => bytes.subarray(start, end).toString('latin1');

/** The file type from its first bytes; undefined when it is none we know. */
export function sniffFileType(bytes: Buffer): FileType | undefined {
	if (bytes.length >= 8 && bytes.readUInt32BE(0) === 0x89504e47 && bytes.readUInt32BE(4) === 0x0d0a1a0a) {
		return { mimeType: 'image/png', extension: 'png' };
	}
	if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return { mimeType: 'image/jpeg', extension: 'jpg' };
	if (bytes.length >= 12 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return { mimeType: 'image/webp', extension: 'webp' };
	if (bytes.length >= 6 && /^GIF8[79]a$/.test(ascii(bytes, 0, 6))) return { mimeType: 'image/gif', extension: 'gif' };
	if (bytes.length >= 12 && ascii(bytes, 4, 8) === 'ftyp') {
		const brand = ascii(bytes, 8, 12);
		if (brand === 'qt  ') return { mimeType: 'video/quicktime', extension: 'mov' };
		if (/^(avif|avis)$/.test(brand)) return { mimeType: 'image/avif', extension: 'avif' };
		return { mimeType: 'video/mp4', extension: 'mp4' };
	}
	if (bytes.length >= 4 && bytes.readUInt32BE(0) === 0x1a45dfa3) return { mimeType: 'video/webm', extension: 'webm' };
	return undefined;
}

export interface FileNaming {
	/** File name without extension, e.g. `image-0` or `video-<task id>`. */
	baseName: string;
	/** Used when the bytes are of no type we recognise. */
	fallback: FileType;
}

function fileName(naming: FileNaming, type: FileType): string {
	const safe = naming.baseName.replace(/[^A-Za-z0-9_.-]+/g, '-').slice(0, 100) || 'file';
	return `${safe}.${type.extension}`;
}

export async function bufferToBinary(ctx: IExecuteFunctions, bytes: Buffer, naming: FileNaming): Promise<IBinaryData> {
	const type = sniffFileType(bytes) ?? naming.fallback;
	return await ctx.helpers.prepareBinaryData(bytes, fileName(naming, type), type.mimeType);
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
			const onReadable = () => settle('readable');
			const onEnd = () => settle('end');
			const onError = (error: unknown) => {
				cleanup();
				reject(error);
			};
			const cleanup = () => {
				stream.removeListener('readable', onReadable);
				stream.removeListener('end', onEnd);
				stream.removeListener('error', onError);
			};
			const settle = (name: string) => {
				cleanup();
				resolve(name);
			};
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

/**
 * Streams a download into n8n's binary data, typed from its first bytes. `check` sees the type
 * found in those bytes before anything is stored, and may throw to refuse the file.
 */
export async function streamToBinary(
	ctx: IExecuteFunctions,
	stream: ByteStream,
	naming: FileNaming,
	check?: (sniffed: FileType | undefined, head: Buffer) => void,
): Promise<IBinaryData> {
	const head = await peekStream(stream);
	const sniffed = sniffFileType(head);
	check?.(sniffed, head);
	const type = sniffed ?? naming.fallback;
	// A file shorter than the peek was read whole, and an ended stream cannot take it back.
	if (stream.readableEnded) return await ctx.helpers.prepareBinaryData(head, fileName(naming, type), type.mimeType);
	// n8n's types name Node's Readable, which node code may not import; the object is one.
	const readable = stream as unknown as Parameters<IExecuteFunctions['helpers']['prepareBinaryData']>[0];
	return await ctx.helpers.prepareBinaryData(readable, fileName(naming, type), type.mimeType);
}
