/**
 * Request bodies that carry files. A file goes into a JSON body as Base64 text (a data URL or a
 * bare `data` field). Built the plain way, one 10 MB file becomes a 13 MB Base64 string, a 13 MB
 * data URL, 13 MB of JSON text and the 13 MB of bytes n8n's request helper sends: five copies per
 * request in flight, which V8 frees only at its next full collection. Here the file stays a
 * reference (`Base64Text`) until the body is sent: the body is cut into the JSON text around its
 * files, and sent as streamedBody.ts sends every body with files.
 */
import type { LargestField } from '../failures/errors';
import { encodePlan } from './streamedBody';
import type { BodyFile, BodyPlan, FileStreamSource, StreamedBody } from './streamedBody';

/** Set while a body is cut into its pieces (planBody): files are then written by the body, not by toJSON. */
let planning = false;

/** Bytes to be sent as Base64 text after `prefix` (e.g. `data:image/png;base64,`). */
export class Base64Text implements BodyFile {
	readonly encoding = 'base64';

	constructor(
		/** The bytes, or the file to stream them from when the request is sent. */
		readonly source: Buffer | FileStreamSource,
		readonly prefix = '',
	) {}

	/** The file as a Base64 data URL of type `mimeType`. */
	static dataUrl(source: Buffer | FileStreamSource, mimeType: string): Base64Text {
		return new Base64Text(source, `data:${mimeType};base64,`);
	}

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

/** Fresh markers tried before a body is given up as one whose text cannot be told from its files. */
const MARKER_TRIES = 8;

/** A JSON body's plan: Base64Text files between the text around them (each prefix with the text before). */
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
 * The body as n8n sends it: JSON text when it holds no `Base64Text`; else the body
 * with its files as streamedBody.ts encodes it (its bytes, or a `StreamedBody`).
 */
export function encodeJsonBody(body: unknown): string | Buffer | StreamedBody {
	const plan = planBody(body);
	return typeof plan === 'string' ? plan : encodePlan(plan);
}

/** Bytes a value takes in a JSON body (a file by its Base64 text), without writing it. */
function jsonBytes(value: unknown): number {
	if (value instanceof Base64Text) return value.length + 2;
	if (Array.isArray(value)) return value.reduce((sum: number, entry) => sum + jsonBytes(entry) + 1, 1);
	if (typeof value === 'object' && value !== null) return Object.entries(value).reduce((sum, [key, entry]) => sum + key.length + 4 + jsonBytes(entry), 1);
	return Buffer.byteLength(JSON.stringify(value) ?? '');
}

/** Whether a value holds a file: one the node attached (Base64Text), or, unless `attachedOnly`, a `data:` URL. */
export function holdsFile(value: unknown, attachedOnly = false): boolean {
	if (value instanceof Base64Text) return true;
	if (typeof value === 'string') return !attachedOnly && value.startsWith('data:');
	if (typeof value === 'object' && value !== null) return Object.values(value).some((entry) => holdsFile(entry, attachedOnly));
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
