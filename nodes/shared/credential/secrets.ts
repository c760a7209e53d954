/**
 * The one secret policy of a credential, and the one function that removes its secrets from
 * anything shown (errors, output items, streamed text, log lines, custom data):
 * - the API key whole, its part after `sk-` (relays quote it without the prefix), and the
 *   encodings a gateway may echo: URL-encoded, base64 and base64url (at every byte alignment, so
 *   it is found inside a longer base64 such as a Basic `user:key`);
 * - any run of 8 or more characters of the key's secret part (a quote cut short, a key split by
 *   a cut) that mixes letters and digits or cases, as runs of a random key do, also URL-encoded
 *   (a relay that puts a cut of the key into a link);
 * - the Custom Header values that are credentials, decided by the header's name; values of
 *   headers that are settings (`x-portkey-provider: openai`, `anthropic-version`) are never
 *   secrets and never change any text;
 * - anything shaped like a key or a bearer token, known or not.
 * A secret shorter than SHORT_SECRET characters is masked only as a whole token, so task ids,
 * file names and URLs that merely contain it keep their characters.
 */
const KEY_PREFIX = 'sk-';
// Not inside a word: `risk-report`, `task-123` and `flask-app` are no keys.
const KEY_PATTERN = /(?<![A-Za-z0-9])sk-[A-Za-z0-9_\-.]{3,}/g;
const BEARER_PATTERN = /(Bearer\s+)[^\s"',;}\]]+/gi;
const BASIC_PATTERN = /(Basic\s+)[A-Za-z0-9+/=]{6,}/g;
/** Shorter secrets are masked as whole tokens only: inside a longer word they would garble it. */
const SHORT_SECRET = 12;
/** The shortest run of the key's secret part that is masked wherever it appears. */
export const FRAGMENT_LENGTH = 8;
const MASK = '***';
/** The start of a key or token pattern whose rest may follow: `s`, `sk-a`, `Bear`, `Basic `. */
const OPEN_PATTERN = /^(?:s|sk|sk-[A-Za-z0-9_\-.]{0,2}|b|be|bea|bear|beare|bearer\s*|ba|bas|basi|basic\s*)$/i;
const OPEN_PATTERN_LENGTH = 'bearer  '.length;
/** ASCII word characters: a whole token has none of them (nor a `.` inside a name) on either side. */
const TOKEN_BEFORE = '(?<![A-Za-z0-9_\\-]|[A-Za-z0-9][.])';
const TOKEN_AFTER = '(?![A-Za-z0-9_\\-]|[.][A-Za-z0-9])';

/** Header-name words that say the value is a credential. */
const SECRET_NAME_PART = /^(api)?keys?$|token|secret|^auth|passw|^pwd$|^pass$|signature|^sig$|session|cookie|credential|jwt|bearer|private|^sid$|^otp$|csrf|xsrf/;
/** Header-name words that say the value is a setting (checked only when no secret word is there). */
const SETTING_NAME_PART =
	/^(provider|version|beta|betas|region|model|models|mode|route|routing|trace|traceparent|tracestate|locale|language|lang|timeout|retries|retry|priority|tier|debug|format|stream|feature|features|experiment|client|sdk|agent|accept|cache|control|env|environment|stage|deployment|zone|channel|group|project|organization|org|workspace|team|source|origin|app|title|referer|referrer|request|id|idempotency)$/;

export interface SecretSources {
	apiKey?: string;
	/** The credential's Custom Headers: names decide which values are secrets. */
	customHeaders?: Record<string, string>;
}

/** Whether a Custom Header's value is a credential, by the header's name (unknown names: yes). */
export function isSecretHeader(name: string): boolean {
	const parts = name.toLowerCase().split(/[-_.]+/).filter(Boolean);
	if (parts.some((part) => SECRET_NAME_PART.test(part))) return true;
	return !parts.some((part) => SETTING_NAME_PART.test(part));
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Base64 of `text` as it appears inside a longer base64, at each of the 3 byte alignments. */
function base64Forms(text: string): string[] {
	const bytes = Buffer.from(text, 'utf8');
	const forms = [bytes.toString('base64'), bytes.toString('base64').replace(/=+$/, '')];
	for (let offset = 0; offset < 3; offset++) {
		const shifted = Buffer.concat([Buffer.alloc(offset), bytes]);
		const whole = shifted.subarray(0, Math.floor(shifted.length / 3) * 3).toString('base64');
		// The first characters also hold bits of the bytes before; the last group, of the bytes after.
		forms.push(whole.slice(offset === 0 ? 0 : offset + 1));
	}
	return forms.flatMap((form) => [form, form.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')]);
}

function urlEncodedForms(text: string): string[] {
	const encoded = encodeURIComponent(text);
	return encoded === text ? [] : [encoded, encoded.replace(/%[0-9A-F]{2}/g, (code) => code.toLowerCase()), encoded.replace(/%20/g, '+')];
}

type Span = [start: number, end: number];

function regexOf(forms: Iterable<string>, wholeToken: boolean): RegExp | undefined {
	// Longest first, so the whole key is found before its tail.
	const list = [...new Set(forms)].filter((form) => form !== '').sort((a, b) => b.length - a.length);
	if (list.length === 0) return undefined;
	const alternation = list.map(escapeRegExp).join('|');
	return new RegExp(wholeToken ? `${TOKEN_BEFORE}(?:${alternation})${TOKEN_AFTER}` : alternation, 'g');
}

/** Adds where `pattern` matches; `kept` characters at the start of a match stay shown. */
function matchSpans(text: string, pattern: RegExp | undefined, spans: Span[], kept: (match: RegExpExecArray) => number = () => 0): void {
	if (!pattern) return;
	pattern.lastIndex = 0;
	for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
		spans.push([match.index + kept(match), match.index + match[0].length]);
		if (match[0].length === 0) pattern.lastIndex++;
	}
}

function mergeSpans(spans: Span[]): Span[] {
	spans.sort((a, b) => a[0] - b[0]);
	const merged: Span[] = [];
	for (const span of spans) {
		const last = merged[merged.length - 1];
		if (last && span[0] <= last[1]) last[1] = Math.max(last[1], span[1]);
		else merged.push([span[0], span[1]]);
	}
	return merged;
}

export class SecretMasker {
	/** Secret forms masked wherever they appear. */
	private readonly anywhere?: RegExp;
	/** Short secret forms, masked as whole tokens. */
	private readonly asToken?: RegExp;
	/** The FRAGMENT_LENGTH-character runs of the key's secret part. */
	private readonly fragments = new Set<string>();
	/** The key's secret part (after `sk-`). */
	private readonly keyParts: string[] = [];
	/** Every form, for the stream masker: a text ending in the start of one must wait for more. */
	readonly forms: string[];
	/** The longest form: how far back a secret can still be growing at the end of a text. */
	readonly longestForm: number;

	/**
	 * `secrets`: values that are secrets whoever reads them. One that begins with `sk-` is taken as a
	 * key (its part after `sk-`, encodings and fragments too). Prefer `SecretMasker.of(settings)`.
	 */
	constructor(secrets: ReadonlyArray<string | undefined> = []) {
		const forms = new Set<string>();
		for (const raw of secrets) {
			const secret = String(raw ?? '').trim();
			if (secret === '') continue;
			forms.add(secret);
			for (const form of urlEncodedForms(secret)) forms.add(form);
			// A header value's base64 (a relay quoting its own Basic header): where it is long enough to tell.
			for (const form of base64Forms(secret)) if (form.length >= FRAGMENT_LENGTH) forms.add(form);
			if (!secret.startsWith(KEY_PREFIX)) continue;
			const secretPart = secret.slice(KEY_PREFIX.length);
			this.keyParts.push(secretPart);
			for (const text of [secret, secretPart]) for (const form of [text, ...base64Forms(text), ...urlEncodedForms(text)]) forms.add(form);
			for (let start = 0; start + FRAGMENT_LENGTH <= secretPart.length; start++) {
				const fragment = secretPart.slice(start, start + FRAGMENT_LENGTH);
				// Without case: a node that upper-cases gateway text (a task status) must not unmask it.
				if (looksRandom(fragment)) this.fragments.add(fragment.toLowerCase());
			}
		}
		this.forms = [...forms].filter((form) => form.length > 0);
		this.anywhere = regexOf(
			this.forms.filter((form) => form.length >= SHORT_SECRET),
			false,
		);
		this.asToken = regexOf(
			this.forms.filter((form) => form.length < SHORT_SECRET),
			true,
		);
		this.longestForm = Math.max(FRAGMENT_LENGTH, 'Bearer '.length, ...this.forms.map((form) => form.length));
	}

	/** The policy of one credential: the key and the Custom Header values that are credentials. */
	static of(sources: SecretSources): SecretMasker {
		const headerSecrets = Object.entries(sources.customHeaders ?? {})
			.filter(([name]) => isSecretHeader(name))
			.map(([, value]) => value);
		return new SecretMasker([sources.apiKey, ...headerSecrets]);
	}

	/** Where the secrets are in `text`: sorted, merged [start, end) spans. */
	spansOf(text: string): Span[] {
		const spans: Span[] = [];
		matchSpans(text, this.anywhere, spans);
		matchSpans(text, this.asToken, spans);
		this.fragmentSpans(text, spans);
		// `sk-***`, `Bearer ***`: the prefix stays, so a reader sees what was there.
		matchSpans(text, KEY_PATTERN, spans, () => KEY_PREFIX.length);
		matchSpans(text, BEARER_PATTERN, spans, (match) => match[1].length);
		matchSpans(text, BASIC_PATTERN, spans, (match) => match[1].length);
		return mergeSpans(spans);
	}

	/**
	 * The maximal runs of text whose every FRAGMENT_LENGTH characters are a run of the key's secret
	 * part, as written or URL-encoded (`%2F` for `/`: read through a decoded copy of the text).
	 */
	private fragmentSpans(text: string, spans: Span[]): void {
		if (this.fragments.size === 0) return;
		this.plainFragmentSpans(text, spans);
		// Twice at most: a link inside another link's query is encoded twice (`%252F`).
		let view = text;
		let origin: number[] | undefined;
		for (let round = 0; round < 2 && PERCENT_ESCAPE.test(view); round++) {
			const { decoded, starts } = percentDecoded(view);
			const from = origin === undefined ? starts : starts.map((at) => (origin as number[])[at]);
			const decodedSpans: Span[] = [];
			this.plainFragmentSpans(decoded, decodedSpans);
			for (const [start, end] of decodedSpans) spans.push([from[start], from[end]]);
			view = decoded;
			origin = from;
		}
	}

	private plainFragmentSpans(text: string, spans: Span[]): void {
		let runStart = -1;
		let runEnd = -1;
		for (let start = 0; start + FRAGMENT_LENGTH <= text.length; start++) {
			if (!this.fragments.has(text.slice(start, start + FRAGMENT_LENGTH).toLowerCase())) continue;
			if (start <= runEnd) runEnd = start + FRAGMENT_LENGTH;
			else {
				if (runStart >= 0) spans.push([runStart, runEnd]);
				runStart = start;
				runEnd = start + FRAGMENT_LENGTH;
			}
		}
		if (runStart >= 0) spans.push([runStart, runEnd]);
	}

	/** `text` with every span replaced by `***`. */
	static render(text: string, spans: readonly Span[]): string {
		if (spans.length === 0) return text;
		let out = '';
		let at = 0;
		for (const [start, end] of spans) {
			out += text.slice(at, start) + MASK;
			at = end;
		}
		return out + text.slice(at);
	}

	mask(text: string): string {
		const value = String(text ?? '');
		return SecretMasker.render(value, this.spansOf(value));
	}

	/** A copy of a JSON-like value with every string (and object key) masked. */
	maskDeep<T>(value: T): T {
		if (typeof value === 'string') return this.mask(value) as T;
		if (Array.isArray(value)) return value.map((entry) => this.maskDeep(entry)) as T;
		if (value && typeof value === 'object' && isPlainObject(value)) {
			const out: Record<string, unknown> = {};
			for (const [key, entry] of Object.entries(value)) out[this.mask(key)] = this.maskDeep(entry);
			return out as T;
		}
		return value;
	}

	/**
	 * How many characters at the end of `text` could be the start of a secret whose rest has not
	 * arrived yet (for a stream): the start of a form, of a key or token pattern, or a short run of
	 * the key's secret part. Ordinary text ends in a few such characters at most.
	 */
	openTail(text: string): number {
		let tail = 0;
		const last = text.charCodeAt(text.length - 1);
		for (let length = Math.min(OPEN_PATTERN_LENGTH, text.length); length > 0; length--) {
			if (OPEN_PATTERN.test(text.slice(-length))) {
				tail = length;
				break;
			}
		}
		for (const form of this.forms) {
			for (let length = Math.min(form.length - 1, text.length); length > tail; length--) {
				if (form.charCodeAt(length - 1) === last && text.endsWith(form.slice(0, length))) {
					tail = length;
					break;
				}
			}
		}
		for (let length = Math.min(FRAGMENT_LENGTH - 1, text.length); length > tail; length--) {
			if (this.isKeyRun(text.slice(-length))) {
				tail = length;
				break;
			}
		}
		return Math.max(tail, this.encodedOpenTail(text));
	}

	private isKeyRun(text: string): boolean {
		return this.keyParts.some((part) => part.toLowerCase().includes(text.toLowerCase()));
	}

	/** The same for a URL-encoded run: `%2` or `%` may be the start of an escape still to come. */
	private encodedOpenTail(text: string): number {
		if (this.keyParts.length === 0 || !text.includes('%')) return 0;
		const window = text.slice(-3 * FRAGMENT_LENGTH);
		const unfinished = /%[0-9A-Fa-f]?$/.exec(window)?.[0].length ?? 0;
		const { decoded, starts } = percentDecoded(window.slice(0, window.length - unfinished));
		for (let length = Math.min(FRAGMENT_LENGTH - 1, decoded.length); length > 0; length--) {
			if (this.isKeyRun(decoded.slice(-length))) return window.length - starts[decoded.length - length];
		}
		return unfinished;
	}
}

/**
 * A run of a random key mixes letters and digits, or cases; a run that is one word or one number
 * (`messages`, `01234567`: keys made by hand have them) would mask ordinary text. For a random
 * key, 8 characters of one kind are rare (about 1 in 500), and then a longer run still has others.
 */
function looksRandom(fragment: string): boolean {
	return [/[a-z]/, /[A-Z]/, /[0-9]/].filter((kind) => kind.test(fragment)).length >= 2;
}

const PERCENT_ESCAPE = /%[0-9A-Fa-f]{2}/;

/**
 * `text` with its ASCII `%XX` escapes decoded, and where each decoded character starts in `text`
 * (`starts[decoded.length]` is `text.length`), so spans found in the copy map back.
 */
function percentDecoded(text: string): { decoded: string; starts: number[] } {
	let decoded = '';
	const starts: number[] = [];
	for (let at = 0; at < text.length; ) {
		starts.push(at);
		const code = text.charCodeAt(at) === 0x25 ? asciiEscape(text, at) : -1;
		if (code >= 0) {
			decoded += String.fromCharCode(code);
			at += 3;
		} else {
			decoded += text[at];
			at += 1;
		}
	}
	starts.push(text.length);
	return { decoded, starts };
}

/** The ASCII character a `%XX` at `at` stands for, or -1. */
function asciiEscape(text: string, at: number): number {
	const high = hexDigit(text.charCodeAt(at + 1));
	const low = hexDigit(text.charCodeAt(at + 2));
	return high >= 0 && high < 8 && low >= 0 ? high * 16 + low : -1;
}

function hexDigit(code: number): number {
	if (code >= 0x30 && code <= 0x39) return code - 0x30;
	const lower = code | 0x20;
	return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

function isPlainObject(value: object): boolean {
	const prototype = Object.getPrototypeOf(value) as unknown;
	return prototype === Object.prototype || prototype === null;
}

/**
 * Masks a text that arrives in pieces (a streamed answer), so that a secret split over two pieces
 * is masked too. Each piece goes out at once, but for the few characters at its end that could be
 * the start of a secret (and a secret still growing at the end): those wait for the next piece or
 * the end.
 */
export class StreamMasker {
	/** Text not shown yet. */
	private pending = '';
	/** The end of what was shown: context for what follows (`Bearer ` before a token, a word before a short secret). */
	private shown = '';

	constructor(private readonly masker: SecretMasker) {}

	/** Takes a piece; returns what can be shown now ('' while all of it waits). */
	push(piece: string): string {
		const from = this.shown.length;
		const text = this.shown + this.pending + piece;
		let cut = Math.max(from, text.length - this.masker.openTail(text));
		const spans = this.masker.spansOf(text);
		for (const [start, end] of spans) {
			// A secret near the end may go on in the next piece; one across the cut is kept whole.
			if (end > from && (end > text.length - this.masker.longestForm || (start < cut && end > cut))) cut = Math.max(from, Math.min(cut, start));
		}
		this.pending = text.slice(cut);
		this.shown = text.slice(0, cut).slice(-this.masker.longestForm);
		const within = spans.filter(([, end]) => end > from && end <= cut).map(([start, end]): Span => [Math.max(start, from) - from, end - from]);
		return SecretMasker.render(text.slice(from, cut), within);
	}

	/** The end of the text: whatever waited, masked. */
	flush(): string {
		const from = this.shown.length;
		const text = this.shown + this.pending;
		const within = this.masker
			.spansOf(text)
			.filter(([, end]) => end > from)
			.map(([start, end]): Span => [Math.max(start, from) - from, end - from]);
		this.pending = '';
		this.shown = '';
		return SecretMasker.render(text.slice(from), within);
	}
}

/** The masker for errors raised before a credential was read: pattern-based only. */
export const patternMasker = new SecretMasker();
