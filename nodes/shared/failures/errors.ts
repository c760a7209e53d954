/**
 * Every failure of a gateway call as typed data: one `GatewayError` from the transport, the
 * stream readers and the task API up to the item runner, where edge.ts turns it into an n8n error
 * (or an error item) and masks it, once.
 *
 * A GatewayError's own `message` is our headline only: whatever the gateway said travels in
 * `gatewayMessage`, unmasked, and is quoted (masked) at the edge. So a GatewayError that escapes
 * anywhere else never carries a key in its message or stack.
 */
export type GatewayErrorKind =
	| 'auth'
	| 'quota'
	| 'rate_limit'
	| 'unknown_model'
	| 'bad_request'
	| 'too_large'
	| 'not_found'
	| 'redirect'
	| 'server'
	| 'network'
	| 'timeout'
	| 'protocol'
	| 'task_failed'
	| 'cancelled'
	| 'storage';

export interface GatewayErrorInit {
	kind: GatewayErrorKind;
	/** What failed, in our words, e.g. "Creating the plant failed: the gateway refused the API key". */
	headline: string;
	/** What the user can do; our words (it may name task ids and links, never gateway text). */
	hint?: string;
	status?: number;
	/** What the gateway said, as it said it (masked only at the edge). */
	gatewayMessage?: string;
	gatewayCode?: string | number;
	/** The gateway may already have done (and billed) the work the request asked for. */
	mayHaveActed?: boolean;
	/** Fields an error item keeps (task id, image index, url, …). */
	fields?: Record<string, unknown>;
	itemIndex?: number;
	/** Milliseconds the gateway asked us to wait (Retry-After). */
	retryAfterMs?: number;
}

export class GatewayError extends Error {
	readonly kind: GatewayErrorKind;
	readonly headline: string;
	readonly hint?: string;
	readonly status?: number;
	readonly gatewayMessage?: string;
	readonly gatewayCode?: string | number;
	readonly mayHaveActed: boolean;
	readonly fields: Readonly<Record<string, unknown>>;
	readonly itemIndex?: number;
	readonly retryAfterMs?: number;

	/** Read-only once built: what a caller knows more is added by a copy (`with`, `within`). */
	constructor(init: GatewayErrorInit) {
		super(init.headline);
		this.name = 'GatewayError';
		this.kind = init.kind;
		this.headline = init.headline;
		this.hint = init.hint;
		this.status = init.status;
		this.gatewayMessage = init.gatewayMessage;
		this.gatewayCode = init.gatewayCode;
		this.mayHaveActed = init.mayHaveActed ?? false;
		this.fields = Object.freeze({ ...(init.fields ?? {}) });
		this.itemIndex = init.itemIndex;
		this.retryAfterMs = init.retryAfterMs;
	}

	/** The facts this error was built from. */
	get init(): GatewayErrorInit {
		const { kind, headline, hint, status, gatewayMessage, gatewayCode, mayHaveActed, fields, itemIndex, retryAfterMs } = this;
		return { kind, headline, hint, status, gatewayMessage, gatewayCode, mayHaveActed, fields: { ...fields }, itemIndex, retryAfterMs };
	}

	/** A copy with some facts changed (this error stays as it is). */
	with(changes: Partial<GatewayErrorInit>): GatewayError {
		const copy = new GatewayError({ ...this.init, ...changes });
		// Where the failure happened, not where it was retold.
		// A function, so that `$&` or `$'` in a headline (a Location, a task id) is not read as a pattern.
		if (this.stack) copy.stack = this.stack.replace(this.message, () => copy.message);
		return copy;
	}

	/** The same failure, said about a wider step: "Checking video task x failed: …" (a copy). */
	within(headlinePrefix: string, extra: Partial<Pick<GatewayErrorInit, 'hint' | 'fields' | 'itemIndex'>> = {}): GatewayError {
		return this.with({
			headline: this.headline.startsWith(headlinePrefix) ? this.headline : `${headlinePrefix}: ${lowerFirst(this.headline)}`,
			hint: extra.hint ?? this.hint,
			fields: extra.fields ? { ...this.fields, ...extra.fields } : this.fields,
			itemIndex: this.itemIndex ?? extra.itemIndex,
		});
	}

	/** The whole message (unmasked): our headline, then the gateway's words, shortened. */
	get fullMessage(): string {
		return this.shownMessage((text) => text);
	}

	/**
	 * The message as shown: `mask` is applied to the gateway's words while they are whole, and only
	 * then are they shortened, so a cut can never leave part of a secret that masking would not find.
	 */
	shownMessage(mask: (text: string) => string): string {
		const code = this.gatewayCode !== undefined && this.gatewayCode !== '' ? ` (code ${this.gatewayCode})` : '';
		// A 2xx status says nothing: the error was in the body.
		const status = this.status !== undefined && this.status >= 300 && !this.headline.includes(`HTTP ${this.status}`) ? ` (HTTP ${this.status})` : '';
		if (this.gatewayMessage === undefined || this.gatewayMessage === '') return mask(`${this.headline}${status}${code}`);
		return `${mask(`${this.headline}${status}`)}: "${quoteStart(mask(this.gatewayMessage))}"${mask(code)}`;
	}
}

/**
 * Kinds that say the gateway refused the request and did nothing, whatever the status (a 503
 * "no channel for this model" too): such a request created nothing, and repeating it pays nothing twice.
 */
export const REFUSAL_KINDS: ReadonlySet<GatewayErrorKind> = new Set(['auth', 'quota', 'rate_limit', 'unknown_model', 'bad_request', 'too_large', 'not_found', 'redirect']);

export function isRefusal(kind: GatewayErrorKind): boolean {
	return REFUSAL_KINDS.has(kind);
}

/** A file link (a generated image or video) answering one of these has expired or is gone. */
export function isExpiredLinkStatus(status: number | undefined): boolean {
	return status === 403 || status === 404 || status === 410;
}

/** What a storage service (S3 and its kin) says in its XML error page, if anything. */
export function storageMessage(text: string): string | undefined {
	return /<Message>([^<]{1,200})<\/Message>/.exec(text)?.[1];
}

const lowerFirst = (text: string) => (/^[A-Z][a-z]/.test(text) ? text[0].toLowerCase() + text.slice(1) : text);

export function isGatewayError(error: unknown): error is GatewayError {
	return error instanceof GatewayError;
}

// ---------------------------------------------------------------------------------------------
// Error bodies: every shape relays send, in an error status or inside a 200

export interface ParsedErrorBody {
	message?: string;
	code?: string | number;
	type?: string;
	/** The body was an HTML page (a proxy's error page), summarised in `message`. */
	html?: boolean;
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
	return summary ? `an HTML page ("${summary.slice(0, 120)}")` : 'an HTML page';
}

function asText(value: unknown): string | undefined {
	if (typeof value === 'string' && value.trim() !== '') return value.trim();
	return undefined;
}

/** The start of a text, for quoting: at most `limit` characters, whitespace folded. */
export function quoteStart(text: string, limit = QUOTE_LIMIT): string {
	const folded = String(text ?? '').replace(/\s+/g, ' ').trim();
	return folded.length > limit ? `${folded.slice(0, limit)}…` : folded;
}

/**
 * A gateway's words as a GatewayError keeps them: whitespace folded, not shortened. They are
 * masked and then shortened where they are shown (`shownMessage`, the edge).
 */
export function gatewayQuote(text: string): string {
	return quoteStart(text, QUOTE_BOUND);
}

export function looksLikeHtml(text: string, contentType = ''): boolean {
	return /html/i.test(contentType) || /^\s*<(!doctype|html|head|body)/i.test(text);
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
export function parseErrorBody(bodyText: string, contentType = ''): ParsedErrorBody {
	const text = (bodyText ?? '').trim();
	if (text === '') return {};
	if (looksLikeHtml(text, contentType)) return { message: summariseHtml(text), html: true };
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

// ---------------------------------------------------------------------------------------------
// Classification: the words of the answer first (they are more specific), then the status

const UNKNOWN_MODEL_WORDS = /model_not_found|no available channel|unknown model|model .{0,60}(not found|does not exist|not exist|not supported)|无可用渠道/;
const AUTH_WORDS = /authentication_error|invalid_api_key|invalid[ _]token|unauthori[sz]ed|无效的令牌|令牌.{0,10}(无效|过期|不存在)|token (is )?(expired|invalid|disabled)/;
const QUOTA_WORDS = /quota|insufficient[ _](user[ _])?(balance|funds|credit)|balance|billing|payment required|额度|余额/;
const PERMISSION_WORDS = /forbidden|permission|not allowed|no access|access denied|无权/;
const RATE_WORDS = /rate[ _-]?limit|too many requests|请求过于频繁/;
const NOT_FOUND_WORDS = /not[_ ]exists?|not[_ ]found|no such/;
/**
 * An error code that names a missing item (new-api's 400 `task_not_exist`), below 500: a 5xx says
 * the gateway may have acted, whatever its code names.
 */
const NOT_FOUND_CODE = /^[a-z_]*(not_exists?|not_found)$/;
const OVERLOAD_WORDS = /overload|server_error|internal error|upstream|temporarily|unavailable|timeout/;

export function classifyError(status: number | undefined, parsed: ParsedErrorBody): GatewayErrorKind {
	const code = String(parsed.code ?? '').toLowerCase();
	const words = `${code} ${parsed.type ?? ''} ${parsed.message ?? ''}`.toLowerCase();
	if (UNKNOWN_MODEL_WORDS.test(words)) return 'unknown_model';
	if (status === 401 || AUTH_WORDS.test(words)) return 'auth';
	// Before the 429: a used-up quota comes as a 429 too (`insufficient_quota`), and waiting will not help.
	if (status === 402 || QUOTA_WORDS.test(words)) return 'quota';
	if (status === 429 || RATE_WORDS.test(words)) return 'rate_limit';
	// A 403 is the key's group or permissions: "quota or group".
	if (status === 403 || ((status === undefined || status < 400) && PERMISSION_WORDS.test(words))) return 'quota';
	if (status === 404 || ((status === undefined || status < 500) && NOT_FOUND_CODE.test(code)) || ((status === undefined || status < 400) && NOT_FOUND_WORDS.test(words))) return 'not_found';
	if (status === 408) return 'timeout';
	if (status === 413) return 'too_large';
	if (status !== undefined && status >= 500) return 'server';
	if (status !== undefined && status >= 400) return 'bad_request';
	// An error inside a 200 without telling words: the gateway failed the request.
	if (OVERLOAD_WORDS.test(words)) return 'server';
	return 'server';
}

const HEADLINES: Record<GatewayErrorKind, string> = {
	auth: 'the gateway refused the API key',
	quota: 'the gateway refused the request for lack of quota or permission',
	rate_limit: 'the gateway asked to slow down (rate limit)',
	unknown_model: 'the gateway has no channel for this model',
	bad_request: 'the gateway refused the request',
	too_large: 'the request is too large for this gateway',
	not_found: 'the gateway does not know this address or item',
	redirect: 'the gateway answered with a redirect',
	server: 'the gateway reported a failure',
	network: 'the connection failed',
	timeout: 'the gateway did not answer in time',
	protocol: 'the gateway sent an answer this node cannot use',
	task_failed: 'the task failed',
	cancelled: 'it was cancelled',
	storage: "n8n could not store the file",
};

const HINTS: Partial<Record<GatewayErrorKind, string>> = {
	auth: 'Check the API Key of the Model Gateway credential.',
	quota: "Top up the account, or ask the gateway's administrator whether your key's group may use this model.",
	rate_limit: 'Lower the Concurrency option, or run again later.',
	unknown_model: 'Pick a model from the list, or check the model id for typos.',
	bad_request: 'Check the fields the gateway names in its message.',
	not_found: 'Check the Base URL of the credential and the model id.',
};

/** The largest field of a request body and its size in bytes, as sent. */
export interface LargestField {
	name: string;
	bytes: number;
	/** Whether the field holds a file (then a smaller file, or a link to it, is the way out). */
	file: boolean;
}

const MB = 1024 * 1024;

export function formatSize(bytes: number): string {
	if (bytes >= MB) return `${(bytes / MB).toFixed(1)} MB`;
	if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KB`;
	return `${bytes} B`;
}

/** Hint for a 413: what made the request large, and what to do about it. */
function tooLargeHint(largest: LargestField | undefined): string {
	const what = largest ? `Its largest part is the field ${largest.name} (${formatSize(largest.bytes)}). ` : '';
	const smaller = largest && !largest.file ? 'Send less in it' : 'Send a smaller file (or a link to it instead of the file)';
	return `${what}${smaller}, or ask the gateway's administrator to raise its request size limit.`;
}

/** Hint for a server failure: the gateway's own error, or a proxy/overload that may pass. */
function serverHint(status: number | undefined, parsed: ParsedErrorBody): string {
	if (parsed.html || status === 502 || status === 503 || status === 504) {
		return 'A proxy in front of the gateway answered instead of the gateway; this usually passes. Try again in a few minutes.';
	}
	return 'The gateway says the request failed on its side. If it keeps happening with the same input, the message above is the gateway\'s reason: check it with the gateway\'s administrator.';
}

export function headlineOf(kind: GatewayErrorKind): string {
	return HEADLINES[kind];
}

/** An HTTP error answer (status >= 400), or an error body inside a 200; `largest`: the request's largest field. */
export function httpError(what: string, status: number, bodyText: string, contentType: string, extra: Partial<GatewayErrorInit> = {}, largest?: LargestField): GatewayError {
	const parsed = parseErrorBody(bodyText, contentType);
	return errorFromParsed(what, status, parsed, extra, largest);
}

export function errorFromParsed(what: string, status: number | undefined, parsed: ParsedErrorBody, extra: Partial<GatewayErrorInit> = {}, largest?: LargestField): GatewayError {
	const kind = classifyError(status !== undefined && status >= 400 ? status : undefined, parsed);
	const headline = `${what} failed: ${HEADLINES[kind]}`;
	const hint = kind === 'server' ? serverHint(status, parsed) : kind === 'too_large' ? tooLargeHint(largest) : HINTS[kind];
	return new GatewayError({
		kind,
		headline,
		hint,
		status,
		gatewayMessage: parsed.html ? undefined : parsed.message,
		gatewayCode: parsed.code,
		...extra,
		...(parsed.html ? { headline: `${headline}: it answered with ${parsed.message}` } : {}),
	});
}

/** An answer that is JSON but not an object (`[]`, `"text"`, `null`, a number). */
export function notAnObjectError(what: string, status: number, body: unknown, extra: Partial<GatewayErrorInit> = {}): GatewayError {
	return new GatewayError({
		kind: 'protocol',
		headline: `${what} failed: the gateway answered HTTP ${status} with ${body === null ? 'null' : Array.isArray(body) ? 'a list' : `a JSON ${typeof body}`} instead of a JSON object`,
		gatewayMessage: gatewayQuote(JSON.stringify(body) ?? String(body)),
		status,
		...extra,
	});
}

/** An answer without what the operation needs (no choices, no task id, no image). */
export function missingResultError(what: string, missing: string, sent: unknown, extra: Partial<GatewayErrorInit> = {}): GatewayError {
	return new GatewayError({
		kind: 'protocol',
		headline: `${what} failed: the gateway's answer has no ${missing}`,
		hint: 'The gateway sent something else than the result; its answer is quoted above. Check the model and the gateway.',
		gatewayMessage: gatewayQuote(typeof sent === 'string' ? sent : (JSON.stringify(sent) ?? String(sent))),
		...extra,
	});
}

// ---------------------------------------------------------------------------------------------
// Network failures: only the cause is kept (n8n's error carries the request, headers included)

const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EADDRNOTAVAIL', 'ENETUNREACH', 'EHOSTUNREACH', 'ERR_INVALID_URL', 'ERR_TLS_CERT_ALTNAME_INVALID', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE']);

/** n8n wraps network failures; the code that says what happened is on a cause. */
export function rootCause(error: unknown): { code?: string; message?: string; name?: string } {
	let current = error as { cause?: unknown; code?: string; message?: string; name?: string } | undefined;
	for (let depth = 0; depth < 5 && current?.cause && !current.code; depth++) {
		current = current.cause as typeof current;
	}
	return current ?? {};
}

export function isAbortError(error: unknown): boolean {
	const err = error as { code?: string; name?: string };
	return err?.name === 'AbortError' || err?.code === 'ERR_CANCELED' || err?.name === 'CanceledError' || err?.code === 'ABORT_ERR';
}

/**
 * A failure without an HTTP answer. `host` names where the request went (for the hint), and
 * `sentBody` says whether the request carried work the gateway could have started.
 */
export function networkError(what: string, error: unknown, host: string, extra: Partial<GatewayErrorInit> = {}): GatewayError {
	const cause = rootCause(error);
	const code = cause.code ?? '';
	const neverSent = NEVER_SENT.has(code);
	let reason: string;
	let hint: string | undefined;
	if (code === 'ECONNREFUSED') {
		reason = `the connection to ${host} was refused`;
		hint = `Nothing answers at ${host}. Check the address and that the server is running.`;
	} else if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
		reason = `the host name ${host} could not be resolved`;
		hint = `Check the host name ${host}.`;
	} else if (/CERT|TLS|SSL/i.test(code)) {
		reason = `the TLS certificate of ${host} was not accepted (${code})`;
	} else if (code === 'ECONNRESET' || code === 'EPIPE' || /socket hang up|aborted|premature close/i.test(cause.message ?? '')) {
		reason = `the connection to ${host} was dropped before the answer was complete`;
	} else if (code === 'ECONNABORTED' || code === 'ETIMEDOUT' || /timeout/i.test(cause.message ?? '')) {
		return new GatewayError({ kind: 'timeout', headline: `${what} failed: ${host} did not answer in time`, mayHaveActed: true, ...extra });
	} else {
		reason = `the connection to ${host} failed (${code || 'no answer'})`;
	}
	return new GatewayError({ kind: 'network', headline: `${what} failed: ${reason}`, hint, mayHaveActed: !neverSent, ...extra });
}

// ---------------------------------------------------------------------------------------------
// Helpers for callers that add what they know to an error on its way up

/** Adds fields an error item keeps (a task id, an image index): a GatewayError as a copy. */
export function withFields<E>(error: E, fields: Record<string, unknown>): E {
	if (error instanceof GatewayError) return error.with({ fields: { ...error.fields, ...fields } }) as E;
	const target = error as unknown as { context?: Record<string, unknown> };
	if (target && typeof target === 'object') {
		target.context = { ...(target.context ?? {}), itemFields: { ...itemFieldsOf(error), ...fields } };
	}
	return error;
}

export function itemFieldsOf(error: unknown): Record<string, unknown> {
	if (error instanceof GatewayError) return { ...error.fields };
	const context = (error as { context?: { itemFields?: Record<string, unknown> } })?.context;
	return context?.itemFields ?? {};
}
