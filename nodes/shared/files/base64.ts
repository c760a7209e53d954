/**
 * Base64 as it arrives from users and gateways, decoded strictly: Node's own decoder skips what
 * is not Base64 and returns whatever is left, so garbage would become a few random bytes.
 */
import { looksLikeText, sniffFileType } from './binary';

/** The Base64 alphabet, standard or URL-safe (Node decodes both), then at most two `=`. */
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/**
 * Base64 text to bytes; undefined when it is not Base64 (a character outside the alphabet, `=`
 * inside, or a length no encoder gives). Line breaks are allowed, as MIME encoders add them.
 */
export function decodeBase64(text: string): Buffer | undefined {
	const compact = /\s/.test(text) ? text.replace(/\s+/g, '') : text;
	if (!BASE64.test(compact) || compact.replace(/=+$/, '').length % 4 === 1) return undefined;
	return Buffer.from(compact, 'base64');
}

/**
 * Base64 that arrives in pieces (one JSON string read chunk by chunk), checked character by
 * character and decoded as it comes, so that the text is never held whole.
 */
export class Base64Decoder {
	private readonly parts: Buffer[] = [];
	/** Up to three characters of the last piece that do not make a whole group of four yet. */
	private carry = '';
	private padded = false;
	private invalid = false;
	/** Bytes decoded so far. */
	size = 0;

	write(text: string): void {
		if (this.invalid || text === '') return;
		// After the first `=`, in this piece or an earlier one, only padding may follow.
		const padAt = this.padded ? 0 : text.indexOf('=');
		if (padAt >= 0) {
			this.padded = true;
			if (!/^=*$/.test(text.slice(padAt))) {
				this.invalid = true;
				return;
			}
		}
		const pending = this.carry + text;
		const whole = pending.length - (pending.length % 4);
		this.carry = pending.slice(whole);
		if (whole > 0) this.decode(pending.slice(0, whole));
	}

	/** The bytes, or undefined when the text was not Base64. */
	end(): Buffer | undefined {
		if (this.invalid || this.carry.replace(/=+$/, '').length === 1 || /={3}$/.test(this.carry)) return undefined;
		if (this.carry !== '') this.decode(this.carry);
		this.carry = '';
		if (this.invalid) return undefined;
		return this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts, this.size);
	}

	/** Marks the text as not Base64 (an escape no encoder writes). */
	fail(): void {
		this.invalid = true;
	}

	/**
	 * Node's decoder skips every character outside the alphabet (and stops at `=`), so text with one
	 * decodes to fewer bytes than its length promises: the check costs no second pass over the text.
	 */
	private decode(text: string): void {
		const bytes = Buffer.from(text, 'base64');
		let data = text.length;
		while (data > 0 && text.charCodeAt(data - 1) === 0x3d) data--;
		if (bytes.length !== Math.floor((data * 3) / 4) || data < text.length - 2) {
			this.invalid = true;
			return;
		}
		this.parts.push(bytes);
		this.size += bytes.length;
	}
}

/** What decoded bytes are, for a message: "text", "application/pdf", "a JPEG image (image/jpeg)". */
export function describeBytes(bytes: Buffer): string {
	const sniffed = sniffFileType(bytes);
	if (sniffed?.mimeType.startsWith('image/')) return `a ${sniffed.extension.toUpperCase().replace('JPG', 'JPEG')} image (${sniffed.mimeType})`;
	if (sniffed) return sniffed.mimeType;
	if (bytes.length === 0) return 'empty';
	return looksLikeText(bytes.subarray(0, 512)) ? 'text' : 'bytes of no type the node knows';
}

const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*),/i;

/**
 * What is wrong with a `data:` URL given where an image is expected, as the rest of a sentence
 * that starts with the field's name; undefined when its Base64 decodes to an image of the type it
 * declares. Links that are not data URLs are not this function's business (undefined).
 */
export function imageDataUrlProblem(link: string): string | undefined {
	if (!/^data:/i.test(link)) return undefined;
	const match = DATA_URL.exec(link);
	if (!match) return 'is a data URL without a comma before its data';
	const declared = match[1].trim().toLowerCase() || 'text/plain';
	const of = `is a data URL of ${declared}`;
	if (!declared.startsWith('image/')) return `${of}, not of an image`;
	if (!/;base64$/i.test(match[2])) return `${of} that is not Base64-encoded (";base64," is missing)`;
	const data = link.slice(match[0].length);
	const bytes = decodeBase64(data);
	if (bytes === undefined) return `${of}, but its data is not valid Base64`;
	if (bytes.length === 0) return `${of}, but it holds no data`;
	const sniffed = sniffFileType(bytes);
	if (!sniffed?.mimeType.startsWith('image/')) return `${of}, but its data is ${describeBytes(bytes)}, not an image`;
	// Gateways compare the two exactly ("image/jpg" for a JPEG is refused too).
	if (declared !== sniffed.mimeType) return `${of}, but its data is ${describeBytes(bytes)}`;
	return undefined;
}
