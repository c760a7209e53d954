/**
 * A `multipart/form-data` request body (RFC 7578), as OpenAI's file endpoints take them
 * (`/v1/images/edits`): text fields and files, each file with its file name and MIME type. The
 * files go in as their own bytes, sent as streamedBody.ts sends every body with files.
 */
import type { LargestField } from '../failures/errors';
import { encodePlan } from './streamedBody';
import type { BodyFile, BodyPlan, FileStreamSource, StreamedBody } from './streamedBody';

export interface TextPart {
	name: string;
	value: string;
}

export interface FilePart {
	name: string;
	fileName: string;
	mimeType: string;
	/** The bytes, or the file to stream them from when the request is sent. */
	source: Buffer | FileStreamSource;
}

export type FormPart = TextPart | FilePart;

const isFile = (part: FormPart): part is FilePart => 'source' in part;

/**
 * Characters of a name or file name that a form parser does not read back as they are: `"` and `\`
 * (a quoted-string's own syntax; Go reads `\` before `"` as an escape, so the closing quote is lost)
 * and control characters (Go's mime/multipart, what new-api reads forms with, refuses the whole form
 * for one in a part header).
 */
function isHeaderUnsafe(char: string): boolean {
	const code = char.charCodeAt(0);
	return code < 0x20 || code === 0x7f || char === '"' || char === '\\';
}

/**
 * A name or file name in a Content-Disposition header, quoted; each unsafe character
 * percent-encoded, as the HTML standard's form encoding does for `"`, CR and LF.
 */
function quoted(text: string): string {
	const encoded = [...text].map((char) => (isHeaderUnsafe(char) ? `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}` : char));
	return `"${encoded.join('')}"`;
}

const CRLF = '\r\n';

/** A body of text fields and files, encoded for each attempt that sends it. */
export class MultipartForm {
	/**
	 * 32 random hex digits after a prefix: a boundary found in no part's text (checked), and in a
	 * file's bytes only by a chance of 2^-128, which no check could lower without reading the file.
	 */
	readonly boundary: string;

	constructor(readonly parts: readonly FormPart[]) {
		const texts = parts.map((part) => (isFile(part) ? `${part.name}${part.fileName}${part.mimeType}` : `${part.name}${part.value}`)).join('\n');
		let boundary: string;
		do boundary = `----mgw-form-${randomHex()}`;
		while (texts.includes(boundary));
		this.boundary = boundary;
	}

	get holdsFiles(): boolean {
		return this.parts.some(isFile);
	}

	get contentType(): string {
		return `multipart/form-data; boundary=${this.boundary}`;
	}

	/** The body as n8n sends it: its bytes when every file is in memory, else a `StreamedBody`. */
	encode(): Buffer | StreamedBody {
		return encodePlan(this.plan());
	}

	/** The largest part, for a gateway that refuses the request as too large (413). */
	get largestPart(): LargestField | undefined {
		let largest: LargestField | undefined;
		for (const part of this.parts) {
			const bytes = !isFile(part) ? Buffer.byteLength(part.value) : Buffer.isBuffer(part.source) ? part.source.length : part.source.size;
			if (!largest || bytes > largest.bytes) largest = { name: part.name, bytes, file: isFile(part) };
		}
		return largest;
	}

	/** Each part's headers (and a text part's value) as text, its file between them: text, file, …, text. */
	private plan(): BodyPlan {
		const texts: string[] = [];
		const files: BodyFile[] = [];
		let text = '';
		for (const part of this.parts) {
			text += `--${this.boundary}${CRLF}Content-Disposition: form-data; name=${quoted(part.name)}`;
			if (!isFile(part)) {
				text += `${CRLF}${CRLF}${part.value}${CRLF}`;
				continue;
			}
			text += `; filename=${quoted(part.fileName)}${CRLF}Content-Type: ${part.mimeType}${CRLF}${CRLF}`;
			texts.push(text);
			files.push({ source: part.source, encoding: 'raw' });
			text = CRLF;
		}
		texts.push(`${text}--${this.boundary}--${CRLF}`);
		return { texts, files };
	}
}

function randomHex(): string {
	let hex = '';
	while (hex.length < 32) hex += Math.floor(Math.random() * 0x100000000).toString(16).padStart(8, '0');
	return hex;
}
