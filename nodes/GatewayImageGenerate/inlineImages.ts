/**
 * The answer of POST /v1/images/generations read from its stream, with every `"b64_json"` string
 * decoded into bytes as it arrives. Only the rest of the answer (a few kilobytes) is kept as text
 * and parsed, with each image's data replaced by a short placeholder. So an answer of several
 * large images is never held as text, nor as text and parsed strings at once: its peak is about
 * the decoded images themselves, and its size is not bounded by the longest string JavaScript
 * can hold.
 */
import { Base64Decoder, decodeBase64, describeBytes } from '../shared/files/base64';
import { sniffFileType } from '../shared/files/binary';
import { formatSize } from '../shared/failures/errors';

/** One image of the answer: its bytes, or why they are not an image. */
export type InlineImage = { bytes: Buffer; problem?: undefined } | { bytes?: undefined; problem: string };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const KEY = Buffer.from('b64_json');
/** The first characters of a value, held back to see whether they are a `data:image/…;base64,` prefix. */
const PREFIX_CHARACTERS = 100;
const DATA_URL_PREFIX = /^data:[^,]*;base64,/i;
const isWhitespace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/** Decoded bytes as an image of the answer, or the reason they are none. */
export function inlineImage(bytes: Buffer | undefined): InlineImage {
	if (bytes === undefined) return { problem: 'is not valid Base64' };
	if (bytes.length === 0) return { problem: 'is empty' };
	if (!sniffFileType(bytes)?.mimeType.startsWith('image/')) return { problem: `decodes to ${describeBytes(bytes)}, not an image` };
	return { bytes };
}

/** The images of an answer, by the placeholder that stands for each in the parsed answer. */
export class InlineImages {
	private readonly byPlaceholder = new Map<string, InlineImage>();

	add(placeholder: string, image: InlineImage): void {
		this.byPlaceholder.set(placeholder, image);
	}

	/**
	 * The image a `b64_json` value stands for, handed over once (the reader lets go of it, so
	 * that n8n's copy is the only one left). A value that is no placeholder is Base64 itself.
	 */
	take(value: string): InlineImage {
		const image = this.byPlaceholder.get(value);
		if (image === undefined) return inlineImage(decodeBase64(value.trim().replace(DATA_URL_PREFIX, '')));
		this.byPlaceholder.delete(value);
		return image;
	}
}

/**
 * Reads an answer chunk by chunk. It follows JSON strings only as far as needed: where a string is
 * the key `"b64_json"` and the value after its colon is a string, that value is decoded instead of
 * kept. Whether the rest is JSON at all is JSON.parse's to say, on the text `end` returns.
 */
export class ImageAnswerReader {
	readonly images = new InlineImages();
	private readonly kept: Buffer[] = [];
	private keptBytes = 0;
	private answerBytes = 0;
	private state: 'outside' | 'string' | 'image' = 'outside';
	private escaped = false;
	/** How much of the string being read matches "b64_json" so far; -1 once it does not. */
	private keyMatched = -1;
	/** After the key "b64_json": 1 before its colon, 2 after it. */
	private afterKey = 0;
	private decoder = new Base64Decoder();
	private head: string | undefined;
	private count = 0;

	/**
	 * @param maxAnswerBytes the whole answer, images included
	 * @param maxTextBytes the answer without its images
	 */
	constructor(
		private readonly maxAnswerBytes: number,
		private readonly maxTextBytes: number,
	) {}

	/** Takes the next chunk; false once the answer is larger than the reader takes. */
	write(chunk: Buffer): boolean {
		this.answerBytes += chunk.length;
		if (this.answerBytes > this.maxAnswerBytes) return false;
		// Where the text to keep starts in this chunk; -1 inside an image's data.
		let keepFrom = this.state === 'image' ? -1 : 0;
		let at = 0;
		while (at < chunk.length) {
			if (this.state === 'image') {
				at = this.readImageData(chunk, at);
				if (this.state !== 'image') keepFrom = at;
				continue;
			}
			const byte = chunk[at];
			if (this.state === 'string') this.readStringByte(byte);
			else if (byte === QUOTE && this.afterKey === 2) {
				this.keep(chunk.subarray(keepFrom, at));
				keepFrom = -1;
				this.state = 'image';
				this.head = '';
			} else if (byte === QUOTE) {
				this.state = 'string';
				this.keyMatched = 0;
				this.afterKey = 0;
			} else if (byte === COLON && this.afterKey === 1) this.afterKey = 2;
			else if (!isWhitespace(byte)) this.afterKey = 0;
			at++;
		}
		if (keepFrom !== -1) this.keep(chunk.subarray(keepFrom));
		return this.keptBytes <= this.maxTextBytes;
	}

	/** The answer without its images' data, as text to parse. */
	text(): string {
		return Buffer.concat(this.kept, this.keptBytes).toString('utf8');
	}

	private readStringByte(byte: number): void {
		if (this.escaped) {
			this.escaped = false;
			this.keyMatched = -1;
		} else if (byte === BACKSLASH) {
			this.escaped = true;
			this.keyMatched = -1;
		} else if (byte === QUOTE) {
			this.state = 'outside';
			if (this.keyMatched === KEY.length) this.afterKey = 1;
		} else if (this.keyMatched >= 0 && byte === KEY[this.keyMatched]) this.keyMatched++;
		else this.keyMatched = -1;
	}

	/** Reads image data from `at` up to its closing quote or the chunk's end; returns where it stopped. */
	private readImageData(chunk: Buffer, at: number): number {
		if (this.escaped) {
			this.escaped = false;
			const escape = String.fromCharCode(chunk[at]);
			// `\/` is how some encoders write `/`; `\n` and `\r` are line breaks of MIME Base64.
			if (escape === '/') this.feed('/');
			else if (escape !== 'n' && escape !== 'r') this.decoder.fail();
			return at + 1;
		}
		const quote = chunk.indexOf(QUOTE, at);
		const backslash = chunk.indexOf(BACKSLASH, at);
		const stop = backslash !== -1 && (quote === -1 || backslash < quote) ? backslash : quote;
		this.feed(chunk.toString('latin1', at, stop === -1 ? chunk.length : stop));
		if (stop === -1) return chunk.length;
		if (stop === backslash) this.escaped = true;
		else this.finishImage();
		return stop + 1;
	}

	private feed(text: string): void {
		if (this.head === undefined) return this.decoder.write(text);
		this.head += text;
		if (this.head.length < PREFIX_CHARACTERS && !this.head.includes(',')) return;
		this.flushHead();
	}

	private flushHead(): void {
		const head = this.head ?? '';
		this.head = undefined;
		this.decoder.write(head.replace(DATA_URL_PREFIX, ''));
	}

	private finishImage(): void {
		this.state = 'outside';
		this.afterKey = 0;
		// An empty value stays as it is: no image, the answer says so (or has a url beside it).
		if (this.head !== undefined && this.head.trim() === '') {
			this.keep(Buffer.from(JSON.stringify(this.head)));
			this.head = undefined;
			return;
		}
		this.flushHead();
		const image = inlineImage(this.decoder.end());
		this.decoder = new Base64Decoder();
		const placeholder = `[image data ${this.count++}: ${image.bytes ? formatSize(image.bytes.length) : image.problem}]`;
		this.images.add(placeholder, image);
		this.keep(Buffer.from(JSON.stringify(placeholder)));
	}

	private keep(bytes: Buffer): void {
		if (bytes.length === 0) return;
		// A copy: a slice would hold on to the whole chunk it came from.
		this.kept.push(Buffer.from(bytes));
		this.keptBytes += bytes.length;
	}
}
