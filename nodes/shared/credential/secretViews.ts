/**
 * Decoded views of a text, so a secret is looked for once in every form a relay or a log may
 * write it: as written, and after each of a chain of passes, JSON-unescaping (`\/`, `\"`,
 * `\uXXXX` of any character, any hex case) and percent-decoding in turn (any encoder: `%2F` or
 * `%2f`, `/` kept or not, UTF-8 bytes). Each view maps its characters back to where they start
 * in the text, so a span found in a view masks exactly the characters that wrote it. Each pass
 * is one linear scan, made only when the view holds a `\` or a `%`.
 */
export interface TextView {
	text: string;
	/** Where each character starts in the original text; `starts[text.length]` is its end. */
	starts: Uint32Array;
	/** From here on the view may end inside an escape whose rest has not arrived (a stream). */
	open: number;
}

type Decoded = { length: number; char: string } | 'open' | undefined;

const hexValue = (code: number): number => {
	if (code >= 0x30 && code <= 0x39) return code - 0x30;
	const lower = code | 0x20;
	return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
};

/** The value of `count` hex digits at `at`, -1 if one is no hex digit, -2 if the text ends first. */
function hexAt(text: string, at: number, count: number): number {
	let value = 0;
	for (let i = 0; i < count; i++) {
		if (at + i >= text.length) return -2;
		const digit = hexValue(text.charCodeAt(at + i));
		if (digit < 0) return -1;
		value = value * 16 + digit;
	}
	return value;
}

const JSON_SIMPLE: Record<string, string> = { '/': '/', '"': '"', '\\': '\\', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

function jsonEscape(text: string, at: number): Decoded {
	if (at + 1 >= text.length) return 'open';
	const next = text[at + 1];
	if (next !== 'u') return JSON_SIMPLE[next] === undefined ? undefined : { length: 2, char: JSON_SIMPLE[next] };
	const code = hexAt(text, at + 2, 4);
	if (code === -2) return 'open';
	return code < 0 ? undefined : { length: 6, char: String.fromCharCode(code) };
}

/** A `%XX` escape, or the `%XX` bytes of one UTF-8 character. */
function percentEscape(text: string, at: number): Decoded {
	const lead = hexAt(text, at + 1, 2);
	if (lead === -2) return 'open';
	if (lead < 0) return undefined;
	if (lead < 0x80) return { length: 3, char: String.fromCharCode(lead) };
	const extra = lead >= 0xf0 && lead <= 0xf4 ? 3 : lead >= 0xe0 ? 2 : lead >= 0xc2 && lead < 0xe0 ? 1 : -1;
	if (extra < 0) return undefined;
	let code = lead & (0x3f >> extra);
	for (let i = 1; i <= extra; i++) {
		const pos = at + 3 * i;
		if (pos >= text.length) return 'open';
		if (text.charCodeAt(pos) !== 0x25) return undefined;
		const byte = hexAt(text, pos + 1, 2);
		if (byte === -2) return 'open';
		if (byte < 0x80 || byte > 0xbf) return undefined;
		code = code * 64 + (byte & 0x3f);
	}
	return { length: 3 * (extra + 1), char: String.fromCodePoint(code) };
}

/** The longest escape: `%F0%9F%98%80`, the UTF-8 bytes of one character. */
const LONGEST_ESCAPE = 12;

/** `view` with its escapes decoded by `escapeAt` (called at each `mark` character). */
function decoded(view: TextView, mark: string, escapeAt: (text: string, at: number) => Decoded): TextView {
	const { text } = view;
	const parts: string[] = [];
	const starts: number[] = [];
	let open = -1;
	let copied = 0;
	const copy = (until: number) => {
		parts.push(text.slice(copied, until));
		for (let i = copied; i < until; i++) starts.push(view.starts[i]);
	};
	for (let at = text.indexOf(mark); at >= 0; at = text.indexOf(mark, at + 1)) {
		// What the view before left open has not arrived yet: no escape may read into it.
		const escape = at + LONGEST_ESCAPE < view.open ? escapeAt(text, at) : escapeAt(text.slice(0, view.open), at);
		if (escape === 'open') {
			if (open < 0) open = at;
			continue;
		}
		if (!escape) continue;
		copy(at);
		parts.push(escape.char);
		for (let i = 0; i < escape.char.length; i++) starts.push(view.starts[at]);
		copied = at + escape.length;
		at = copied - 1;
	}
	copy(text.length);
	const decodedText = parts.join('');
	const map = new Uint32Array(decodedText.length + 1);
	map.set(starts);
	map[decodedText.length] = view.starts[text.length];
	// The view opens where this pass or the one before found an unfinished escape.
	const openAt = Math.min(open < 0 ? Infinity : view.starts[open], view.open < view.text.length ? view.starts[view.open] : Infinity);
	let openIndex = decodedText.length;
	if (openAt !== Infinity) for (openIndex = 0; openIndex < decodedText.length && map[openIndex] < openAt; openIndex++);
	return { text: decodedText, starts: map, open: openIndex };
}

/** The text as written. */
export function plainView(text: string): TextView {
	const starts = new Uint32Array(text.length + 1);
	for (let i = 0; i <= text.length; i++) starts[i] = i;
	return { text, starts, open: text.length };
}

const DECODERS: Array<[mark: string, escapeAt: (text: string, at: number) => Decoded]> = [
	['\\', jsonEscape],
	['%', percentEscape],
];

/**
 * The passes in their order, each made only where its mark is and kept only where it changed the
 * view: so JSON-escaped, URL-encoded, either inside the other, either twice, and JSON-escaped
 * then URL-encoded twice are all views, with at most as many views as passes.
 */
const PASSES = [DECODERS[0], DECODERS[1], DECODERS[0], DECODERS[1]];

/** The text as written and the views the passes make of it, one after another. */
export function viewsOf(text: string): TextView[] {
	const views = [plainView(text)];
	let last = views[0];
	for (const [mark, escapeAt] of PASSES) {
		if (!last.text.includes(mark)) continue;
		const next = decoded(last, mark, escapeAt);
		if (next.text === last.text && next.open === last.open) continue;
		views.push((last = next));
	}
	return views;
}
