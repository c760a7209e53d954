/**
 * Error bodies: every shape relays send, in an error status or inside a 200, read into a message,
 * a code and a type. The gateway's words are kept whole here (folded, not shortened): they are
 * masked and then shortened where they are shown (errors.ts `shownMessage`, the edge).
 */

export interface ParsedErrorBody {
	message?: string;
	code?: string | number;
	type?: string;
	/** The body was an HTML page (a proxy's error page), summarised in `message`. */
	html?: boolean;
	/** The body did not arrive whole: its words are quoted, never read for what the failure is. */
	cut?: boolean;
}

const QUOTE_LIMIT = 300;
/** A gateway's words are kept whole up to this (error bodies are read up to 64 KiB anyway). */
const QUOTE_BOUND = 64 * 1024;

function summariseHtml(html: string): string {
	const pick = (tag: string) => {
		const match = new RegExp(`<${tag}[^>]*>([\\s\\S]*?)</${tag}>`, 'i').exec(html);
		return match ? match[1].replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim() : '';
	};
	const summary = pick('title') || pick('h1');
	return summary ? `an HTML page ("${quoteStart(summary, 120)}")` : 'an HTML page';
}

const asText = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);

/** A character a secret's forms are written with: its own, base64's, URL and JSON escapes. */
const TOKEN_CHAR = /[\w+/=%.~\\-]/;
const TOKEN_AT_END = new RegExp(`${TOKEN_CHAR.source}+$`);
/** Text cut at its end, without the token the cut may have split: no part of one shows (a key's base64, cut before it is masked). */
export const withoutSplitToken = (start: string) => start.replace(TOKEN_AT_END, '');

/**
 * The start of a text, for quoting: at most `limit` characters, whitespace folded; a cut leaves out
 * the token it would split.
 */
export function quoteStart(text: string, limit = QUOTE_LIMIT): string {
	const folded = String(text ?? '').replace(/\s+/g, ' ').trim();
	if (folded.length <= limit) return folded;
	const start = folded.slice(0, limit);
	return `${(TOKEN_CHAR.test(folded[limit]) ? withoutSplitToken(start) : start).trimEnd()}…`;
}

/**
 * A gateway's words as a GatewayError keeps them: whitespace folded, not shortened. They are
 * masked and then shortened where they are shown (`shownMessage`, the edge).
 */
export function gatewayQuote(text: string): string {
	return quoteStart(text, QUOTE_BOUND);
}

/** Reads the message, code and type from a parsed error body of any known shape. */
export function readErrorFields(body: unknown): ParsedErrorBody {
	if (typeof body !== 'object' || body === null || Array.isArray(body)) {
		return body === undefined ? {} : { message: gatewayQuote(JSON.stringify(body)) };
	}
	const record = body as Record<string, unknown>;
	const nested = record.error;
	if (typeof nested === 'object' && nested !== null) {
		// {"error":{"message","type","code"}} and {"type":"error","error":{"type","message"}}
		const error = nested as Record<string, unknown>;
		return {
			message: asText(error.message) ?? asText(record.message) ?? asText(error.msg),
			code: (error.code as string | number | undefined) ?? undefined,
			type: asText(error.type) ?? (record.type !== 'error' ? asText(record.type) : undefined),
		};
	}
	if (typeof nested === 'string' && nested.trim() !== '') return { message: asText(record.message) ?? nested.trim() };
	// {"error":<int>,"message"} (plant store), {"code","message"|"msg"} (task endpoints), {"success":false,…}
	const code = typeof nested === 'number' ? nested : (record.code as string | number | undefined);
	return {
		message: asText(record.message) ?? asText(record.msg) ?? asText(record.detail) ?? asText(record.error_msg),
		code: code ?? undefined,
		type: asText(record.type),
	};
}

/** Reads an error answer's text (JSON of any shape, an HTML page, or plain text). */
export function parseErrorBody(bodyText: string, contentType = '', cut = false): ParsedErrorBody {
	if (cut) {
		const parsed = parseErrorBody(withoutSplitToken(bodyText ?? ''), contentType);
		return parsed.message ? { message: parsed.html ? parsed.message : `${parsed.message} …`, html: parsed.html, cut } : { cut };
	}
	const text = (bodyText ?? '').trim();
	if (text === '') return {};
	if (/html/i.test(contentType) || /^\s*<(!doctype|html|head|body)/i.test(text)) return { message: summariseHtml(text), html: true };
	try {
		return readErrorFields(JSON.parse(text));
	} catch {
		return { message: gatewayQuote(text) };
	}
}

const SUCCESS_CODES = new Set(['success', 'ok', '0', '200']);

/**
 * Whether a parsed 200 answer is an error the gateway reported in place of a result. Relays do
 * this: `{"error":{…}}`, `{"type":"error",…}`, `{"success":false,…}`, `{"code":500,"msg":…}`,
 * `{"code":"invalid_token","message":…}`. A body that is not a JSON object at all is a protocol
 * error (see `notAnObjectError`), not this.
 */
export function isErrorShape(body: unknown): boolean {
	if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
	const record = body as Record<string, unknown>;
	const error = record.error;
	if (typeof error === 'object' && error !== null && !Array.isArray(error) && Object.keys(error).length > 0) return true;
	if (typeof error === 'string' && error.trim() !== '') return true;
	if (typeof error === 'number' && error !== 0) return true;
	if (record.type === 'error') return true;
	if (record.success === false) return true;
	const code = record.code;
	const said = asText(record.message) ?? asText(record.msg);
	if (code !== undefined && code !== null && !SUCCESS_CODES.has(String(code).toLowerCase())) {
		// A failure code with words, and no result beside it.
		const hasResult = record.data !== undefined && record.data !== null;
		if (said !== undefined && !hasResult) return true;
		if (typeof code === 'number' && code >= 400) return true;
	}
	return false;
}

/** What a storage service (S3 and its kin) says in its XML error page, if anything. */
export function storageMessage(text: string): string | undefined {
	return /<Message>([^<]{1,200})<\/Message>/.exec(text)?.[1];
}
