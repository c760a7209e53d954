/**
 * Request bodies that carry files. A file goes into a JSON body as Base64 text (a data URL or a
 * bare `data` field). Built the plain way, one 10 MB file becomes a 13 MB Base64 string, a 13 MB
 * data URL, 13 MB of JSON text and the 13 MB of bytes n8n's request helper sends: five copies per
 * request in flight, which V8 frees only at its next full collection, so a run with Concurrency
 * 10 rose about 50 MB per request in flight (issue 19, row 11c). Here the file stays bytes
 * (`Base64Text`) until the body is sent, and the body is written once, as the bytes n8n sends,
 * with the Base64 encoded straight into them in small pieces.
 */

/** Bytes to be sent as Base64 text after `prefix` (e.g. `data:image/png;base64,`). */
export class Base64Text {
	constructor(
		readonly bytes: Buffer,
		readonly prefix = '',
	) {}

	/** Characters of the text (all ASCII, so also its bytes in JSON). */
	get length(): number {
		return this.prefix.length + 4 * Math.ceil(this.bytes.length / 3);
	}

	/** The whole text, for code that needs it as a string (small files, tests). */
	toString(): string {
		return `${this.prefix}${this.bytes.toString('base64')}`;
	}

	/** JSON.stringify of a body holding this writes the text, as if it had been a string. */
	toJSON(): string {
		return this.toString();
	}
}

// Whole groups of three bytes: each piece encodes to 64 KiB of text without padding, a string
// small enough for V8's young generation (freed at once, not left for a full collection).
const PIECE_BYTES = 3 * 16 * 1024;

/** Writes `text`'s Base64 into `target` at `offset`, a piece at a time; returns the new offset. */
function writeBase64(target: Buffer, offset: number, bytes: Buffer): number {
	let at = offset;
	for (let start = 0; start < bytes.length; start += PIECE_BYTES) {
		at += target.write(bytes.subarray(start, start + PIECE_BYTES).toString('base64'), at, 'latin1');
	}
	return at;
}

/**
 * The body as n8n sends it: JSON text when it holds no `Base64Text` (as before), else the JSON's
 * bytes, each file's Base64 written into them without ever being one string.
 */
export function encodeJsonBody(body: unknown): string | Buffer {
	const files: Base64Text[] = [];
	// A marker no JSON text of ours holds: the count check below falls back if a value had it.
	const marker = `mgw-file-${Math.random().toString(36).slice(2, 12)}-`;
	const text = JSON.stringify(body, function (this: Record<string, unknown>, key: string, value: unknown) {
		const original = this[key];
		if (!(original instanceof Base64Text)) return value;
		files.push(original);
		return `${marker}${files.length - 1}`;
	});
	if (files.length === 0) return text;
	const pieces = text.split(new RegExp(`"${marker}(\\d+)"`));
	// pieces: text, index, text, index, …, text
	if (pieces.length !== 2 * files.length + 1) return JSON.stringify(body);
	let size = 0;
	for (let i = 0; i < pieces.length; i++) size += i % 2 === 0 ? Buffer.byteLength(pieces[i]) : files[Number(pieces[i])].length + 2;
	const out = Buffer.allocUnsafe(size);
	let at = 0;
	for (let i = 0; i < pieces.length; i++) {
		if (i % 2 === 0) {
			at += out.write(pieces[i], at, 'utf8');
			continue;
		}
		const file = files[Number(pieces[i])];
		at += out.write(`"${file.prefix}`, at, 'latin1');
		at = writeBase64(out, at, file.bytes);
		at += out.write('"', at, 'latin1');
	}
	return out.subarray(0, at);
}
