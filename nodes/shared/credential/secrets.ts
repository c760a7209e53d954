/**
 * The one secret policy of a credential, and the one function that removes its secrets from
 * anything shown (errors, output items, streamed text, log lines, custom data). The secrets are
 * known by value: the API key and the Custom Header values that are credentials (decided by the
 * header's name; settings such as `x-portkey-provider: openai` never change any text). Each is
 * hidden with the forms a relay or a log may write it in:
 * - whole, the key also without `sk-`, an auth value `Bearer <token>` also without its scheme,
 *   and its base64 (at every byte alignment);
 * - cut: any prefix of FRAGMENT_LENGTH characters or more, and for the key any such run of its
 *   part after `sk-` (a quote cut short, a key split by a cut), in any ASCII case; a cut must mix
 *   letters and digits or cases, as cuts of a random secret do, so words stay;
 * - encoded: each of the above JSON-escaped or URL-encoded once or twice (secretViews.ts).
 * Nothing is masked by its shape: `task-sk-9f8e7d6c5b` or another `Bearer` token is no secret.
 *
 * Short secrets (under SHORT_SECRET characters: in practice a Custom Header value) are masked,
 * whole or cut, where they stand as a token of their own, in any ASCII case: no letter, digit,
 * `_` or `-` next to them, nor a `.` inside a name. Glued to such characters they
 * are part of another token, which keeps every character: text alone cannot tell a quote glued to
 * a word (`QUEUED_Qk7v9`) from an id that holds the value (`task_Qk7v9_1`, `file-Qk7v9.png`), and
 * a paid task id must stay whole. So code that reshapes gateway text never joins its words into
 * one token (a task state: normaliseStatus); a gateway that glues a short value to a word itself
 * shows it (docs/errors.md, Limits). A value of SHORT_SECRET characters or more is masked wherever
 * it appears, ids included: the secret comes first.
 */
import { viewsOf } from './secretViews';

const KEY_PREFIX = 'sk-';
/** Shorter secrets are masked as whole tokens only: inside a longer word they would garble it. */
export const SHORT_SECRET = 12;
/** The shortest cut of a secret (a prefix, or a run of the key) that is masked wherever it appears. */
export const FRAGMENT_LENGTH = 8;
const MASK = '***';
/** `<scheme> <credentials>`: a scheme word of letters, then the credentials. */
const AUTH_SCHEME = /^[A-Za-z]+\s+(\S.*)$/;
/** Context kept from what a stream showed: the character before a short secret, even escaped. */
const STREAM_CONTEXT = 32;
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

type Span = [start: number, end: number];

function regexOf(forms: Iterable<string>, wholeToken: boolean): RegExp | undefined {
	// Longest first, so the whole key is found before its tail.
	const list = [...new Set(forms)].filter((form) => form !== '').sort((a, b) => b.length - a.length);
	if (list.length === 0) return undefined;
	const alternation = list.map(escapeRegExp).join('|');
	// A whole token in any case, as cuts are: a node may change the case of gateway text.
	return wholeToken ? new RegExp(`${TOKEN_BEFORE}(?:${alternation})${TOKEN_AFTER}`, 'gi') : new RegExp(alternation, 'g');
}

/** Adds where `pattern` matches. */
function matchSpans(text: string, pattern: RegExp | undefined, spans: Span[]): void {
	if (!pattern) return;
	pattern.lastIndex = 0;
	for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
		spans.push([match.index, match.index + match[0].length]);
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

/** A secret whose cuts are masked: from its start only, or (the key's part after `sk-`) from anywhere. */
interface RunSource {
	original: string;
	/** ASCII letters in lower case: a node may change the case of gateway text (a task status). */
	folded: string;
	anyStart: boolean;
	/** A short secret: its cuts, like itself, only as whole tokens. */
	asToken: boolean;
}

const foldCode = (code: number) => (code >= 0x41 && code <= 0x5a ? code + 32 : code);
const fold = (text: string) => text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
const bigramAt = (text: string, at: number) => ((foldCode(text.charCodeAt(at)) & 0xff) << 8) | (foldCode(text.charCodeAt(at + 1)) & 0xff);

export interface Scan {
	/** Where the secrets are: sorted, merged [start, end) spans of the text. */
	spans: Span[];
	/** From here on the text may be the start of a secret still to come (for a stream). */
	holdFrom: number;
}

export class SecretMasker {
	/** Whole forms masked wherever they appear, and the short ones masked as whole tokens. */
	private readonly anywhere?: RegExp;
	private readonly asToken?: RegExp;
	private readonly needles: string[];
	private readonly sources: RunSource[] = [];
	/** Every FRAGMENT_LENGTH-character window a cut may begin with: its source and offset. */
	private readonly windows = new Map<string, Array<[number, number]>>();
	/** The first two characters of those windows: a cheap test before a window is looked up. */
	private readonly bigrams = new Uint8Array(1 << 16);
	/** The longest form: how far back a secret may still be growing at the end of a text. */
	readonly longestForm: number;

	/**
	 * `secrets`: values that are secrets whoever reads them. One that begins with `sk-` is taken as a
	 * key (its part after `sk-` too, cut anywhere). Prefer `SecretMasker.of(settings)`.
	 */
	constructor(secrets: ReadonlyArray<string | undefined> = []) {
		const needles = new Set<string>();
		for (const raw of secrets) {
			const secret = String(raw ?? '').trim();
			if (secret === '') continue;
			const isKey = secret.startsWith(KEY_PREFIX);
			// Python's quote_plus writes a space as `+`.
			const values = secret.includes(' ') ? [secret, secret.replace(/ /g, '+')] : [secret];
			if (isKey) values.push(secret.slice(KEY_PREFIX.length));
			// An HTTP auth value (`Bearer <token>`): relays quote the token without its scheme.
			const credentials = AUTH_SCHEME.exec(secret)?.[1];
			if (credentials) values.push(credentials);
			for (const value of values) {
				needles.add(value);
				// Base64 (a relay quoting its own Basic header): where it is long enough to tell, the key's always.
				for (const form of base64Forms(value)) if (isKey || form.length >= FRAGMENT_LENGTH) needles.add(form);
				this.addSource(value, isKey && value !== secret);
			}
		}
		this.needles = [...needles].filter((needle) => needle.length > 0);
		this.anywhere = regexOf(
			this.needles.filter((needle) => needle.length >= SHORT_SECRET),
			false,
		);
		this.asToken = regexOf(
			this.needles.filter((needle) => needle.length < SHORT_SECRET),
			true,
		);
		this.longestForm = Math.max(FRAGMENT_LENGTH, ...this.needles.map((needle) => needle.length));
	}

	private addSource(original: string, anyStart: boolean): void {
		if (original.length < FRAGMENT_LENGTH) return;
		const index = this.sources.push({ original, folded: fold(original), anyStart, asToken: original.length < SHORT_SECRET }) - 1;
		const folded = this.sources[index].folded;
		for (let offset = 0; offset + FRAGMENT_LENGTH <= folded.length && (anyStart || offset === 0); offset++) {
			const window = folded.slice(offset, offset + FRAGMENT_LENGTH);
			this.windows.set(window, [...(this.windows.get(window) ?? []), [index, offset]]);
			this.bigrams[bigramAt(window, 0)] = 1;
		}
	}

	/** The policy of one credential: the key and the Custom Header values that are credentials. */
	static of(sources: SecretSources): SecretMasker {
		const headerSecrets = Object.entries(sources.customHeaders ?? {})
			.filter(([name]) => isSecretHeader(name))
			.map(([, value]) => value);
		return new SecretMasker([sources.apiKey, ...headerSecrets]);
	}

	/** Where the secrets are in `text`, in any of its views, and where one may be starting at its end. */
	scan(text: string): Scan {
		const spans: Span[] = [];
		let holdFrom = text.length;
		if (this.needles.length === 0) return { spans, holdFrom };
		for (const view of viewsOf(text)) {
			const found: Span[] = [];
			matchSpans(view.text, this.anywhere, found);
			matchSpans(view.text, this.asToken, found);
			this.runSpans(view.text, found);
			for (const [start, end] of found) {
				spans.push([view.starts[start], view.starts[end]]);
				// Near the end a secret may go on in what has not arrived yet.
				if (end > view.open - this.longestForm) holdFrom = Math.min(holdFrom, view.starts[start]);
			}
			holdFrom = Math.min(holdFrom, view.starts[view.open - this.openLength(view.text, view.open)]);
		}
		return { spans: mergeSpans(spans), holdFrom };
	}

	/** The maximal cuts of the sources in `text`: FRAGMENT_LENGTH characters or more that mix kinds. */
	private runSpans(text: string, spans: Span[]): void {
		if (this.windows.size === 0) return;
		// Per source, the end of each cut found by its diagonal: the windows inside one need no look
		// (a source of one repeated character has a window at every offset).
		const runEnds = this.sources.map(() => new Map<number, number>());
		for (let at = 0; at + FRAGMENT_LENGTH <= text.length; at++) {
			if (!this.bigrams[bigramAt(text, at)]) continue;
			const hits = this.windows.get(fold(text.slice(at, at + FRAGMENT_LENGTH)));
			for (const [index, offset] of hits ?? []) {
				const ends = runEnds[index];
				if ((ends.get(at - offset) ?? -1) > at) continue;
				const source = this.sources[index];
				let length = FRAGMENT_LENGTH;
				while (at + length < text.length && offset + length < source.folded.length && foldCode(text.charCodeAt(at + length)) === source.folded.charCodeAt(offset + length)) length++;
				if (ends.size > source.folded.length) for (const [diagonal, end] of ends) if (end <= at) ends.delete(diagonal);
				ends.set(at - offset, at + length);
				if (looksRandom(source.original.slice(offset, offset + length)) && (!source.asToken || isWholeToken(text, at, at + length))) spans.push([at, at + length]);
			}
		}
	}

	/** How many characters before `end` could be the start of a secret whose rest has not arrived. */
	private openLength(text: string, end: number): number {
		if (end === 0) return 0;
		let longest = 0;
		const endsWith = (form: string, length: number, folded: boolean) => {
			const tail = text.slice(end - length, end);
			return (folded ? fold(tail) : tail) === form.slice(0, length);
		};
		const lastChar = text.charCodeAt(end - 1);
		for (const needle of this.needles) {
			for (let length = Math.min(needle.length - 1, end); length > longest; length--) if (needle.charCodeAt(length - 1) === lastChar && endsWith(needle, length, false)) longest = length;
		}
		for (const source of this.sources) {
			if (source.anyStart) {
				// A tail that is a run of the key grows one character at a time.
				let length = 0;
				while (length < Math.min(source.folded.length - 1, end) && source.folded.includes(fold(text.slice(end - length - 1, end)))) length++;
				longest = Math.max(longest, length);
			} else {
				for (let length = Math.min(source.folded.length - 1, end); length > longest; length--) if (source.folded.charCodeAt(length - 1) === foldCode(lastChar) && endsWith(source.folded, length, true)) longest = length;
			}
		}
		return longest;
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
		return SecretMasker.render(value, this.scan(value).spans);
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
}

/**
 * A cut of a random secret mixes letters and digits, or cases; one that is one word or one number
 * (`messages`, `01234567`: secrets made by hand have them) would mask ordinary text. For a random
 * key, 8 characters of one kind are rare (about 1 in 500), and then a longer run still has others.
 * The mix must lie within FRAGMENT_LENGTH characters of one run without spaces: a cut `Bearer z`
 * of `Bearer <token>` mixes cases only through its scheme word, which is no secret.
 */
function looksRandom(cut: string): boolean {
	return cut.split(/\s+/).some((run) => run.length >= FRAGMENT_LENGTH && [/[a-z]/, /[A-Z]/, /[0-9]/].filter((kind) => kind.test(run)).length >= 2);
}

const tokenStart = new RegExp(TOKEN_BEFORE, 'y');
const tokenEnd = new RegExp(TOKEN_AFTER, 'y');

/** Whether text[start, end) stands as a whole token (the rule of the short secrets' pattern). */
function isWholeToken(text: string, start: number, end: number): boolean {
	tokenStart.lastIndex = start;
	tokenEnd.lastIndex = end;
	return tokenStart.test(text) && tokenEnd.test(text);
}

function isPlainObject(value: object): boolean {
	const prototype = Object.getPrototypeOf(value) as unknown;
	return prototype === Object.prototype || prototype === null;
}

/**
 * Masks a text that arrives in pieces (a streamed answer), so that a secret split over two pieces
 * is masked too. Each piece goes out at once, but for the characters at its end that could be the
 * start of a secret in any form (and a secret still growing at the end): those wait for the next
 * piece or the end.
 */
export class StreamMasker {
	/** Text not shown yet. */
	private pending = '';
	/** The end of what was shown: context for what follows (the character before a short secret). */
	private shown = '';

	constructor(private readonly masker: SecretMasker) {}

	/** Takes a piece; returns what can be shown now ('' while all of it waits). */
	push(piece: string): string {
		const from = this.shown.length;
		const text = this.shown + this.pending + piece;
		const { spans, holdFrom } = this.masker.scan(text);
		let cut = Math.max(from, holdFrom);
		// A secret across the cut is kept whole.
		for (const [start, end] of spans) if (start < cut && end > cut) cut = Math.max(from, start);
		this.pending = text.slice(cut);
		this.shown = text.slice(0, cut).slice(-Math.max(STREAM_CONTEXT, this.masker.longestForm));
		return SecretMasker.render(text.slice(from, cut), within(spans, from, cut));
	}

	/** The end of the text: whatever waited, masked. */
	flush(): string {
		const from = this.shown.length;
		const text = this.shown + this.pending;
		this.pending = '';
		this.shown = '';
		return SecretMasker.render(text.slice(from), within(this.masker.scan(text).spans, from, text.length));
	}
}

/** The spans that end in (from, to], relative to `from`. */
function within(spans: Span[], from: number, to: number): Span[] {
	return spans.filter(([, end]) => end > from && end <= to).map(([start, end]): Span => [Math.max(start, from) - from, end - from]);
}

/** The masker for errors raised before a credential was read: it knows no secret, so it changes nothing. */
export const noSecretsMasker = new SecretMasker();
