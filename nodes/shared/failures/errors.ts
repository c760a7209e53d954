/**
 * Every failure of a gateway call as typed data: one `GatewayError` from the transport, the
 * stream readers and the task API up to the item runner, where edge.ts turns it into an n8n error
 * (or an error item) and masks it, once.
 *
 * A GatewayError's own `message` is our headline only: whatever the gateway said travels in
 * `gatewayMessage`, unmasked, and is quoted (masked) at the edge. So a GatewayError that escapes
 * anywhere else never carries a key in its message or stack.
 *
 * Each fact of a failure is written once, where it is classified: its kind, whether the gateway
 * may have acted (the attempt's rule; a refusal did nothing), and its one hint. A copy (`with`,
 * `within`, `withFields`) adds only what a wider step knows: its task id, its fields, its step.
 */
import { gatewayQuote, parseErrorBody, quoteStart, storageMessage } from './errorBody';
import type { ParsedErrorBody } from './errorBody';

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
	| 'storage'
	| 'live_text';

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

	/** A copy with some facts changed (this error stays as it is). */
	with(changes: Partial<GatewayErrorInit>): GatewayError {
		const { kind, headline, hint, status, gatewayMessage, gatewayCode, mayHaveActed, fields, itemIndex, retryAfterMs } = this;
		const copy = new GatewayError({ kind, headline, hint, status, gatewayMessage, gatewayCode, mayHaveActed, fields, itemIndex, retryAfterMs, ...changes });
		// Where the failure happened, not where it was retold.
		// A function, so that `$&` or `$'` in a headline (a Location, a task id) is not read as a pattern.
		if (this.stack) copy.stack = this.stack.replace(this.message, () => copy.message);
		return copy;
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
const REFUSAL_KINDS: ReadonlySet<GatewayErrorKind> = new Set(['auth', 'quota', 'rate_limit', 'unknown_model', 'bad_request', 'too_large', 'not_found', 'redirect']);

/** A file link (a generated image or video) answering one of these has expired or is gone. */
export function isExpiredLinkStatus(status: number | undefined): boolean {
	return status === 403 || status === 404 || status === 410;
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

export function classifyError(status: number | undefined, parsed: ParsedErrorBody): GatewayErrorKind {
	const code = String(parsed.code ?? '').toLowerCase();
	// Words of a body cut short are no evidence (a refusal word from a field the whole body's reading
	// passes over would make a 5xx a refusal, sent again): the status alone decides.
	const words = parsed.cut ? '' : `${code} ${parsed.type ?? ''} ${parsed.message ?? ''}`.toLowerCase();
	if (UNKNOWN_MODEL_WORDS.test(words)) return 'unknown_model';
	if (status === 401 || AUTH_WORDS.test(words)) return 'auth';
	// A 404 is a path or an item the gateway does not have, whatever words its message quotes (a path
	// such as /dashboard/billing/usage holds "billing").
	if (status === 404) return 'not_found';
	// Before the 429: a used-up quota comes as a 429 too (`insufficient_quota`), and waiting will not help.
	if (status === 402 || QUOTA_WORDS.test(words)) return 'quota';
	if (status === 429 || RATE_WORDS.test(words)) return 'rate_limit';
	// A 403 is the key's group or permissions: "quota or group".
	if (status === 403 || ((status === undefined || status < 400) && PERMISSION_WORDS.test(words))) return 'quota';
	if (((status === undefined || status < 500) && NOT_FOUND_CODE.test(code)) || ((status === undefined || status < 400) && NOT_FOUND_WORDS.test(words))) return 'not_found';
	if (status === 408) return 'timeout';
	if (status === 413) return 'too_large';
	if (status !== undefined && status >= 500) return 'server';
	if (status !== undefined && status >= 400) return 'bad_request';
	// An error inside a 200 without telling words: the gateway failed the request.
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
	live_text: 'n8n could not pass the answer on',
};

/** "<what> failed: <what this kind of failure is>", the headline every failure of that kind starts with. */
export function failedHeadline(what: string, kind: GatewayErrorKind): string {
	return `${what} failed: ${HEADLINES[kind]}`;
}

/** A page or text where the gateway's JSON should be: the address leads elsewhere. */
export const NOT_THE_GATEWAY_HINT = 'Check the Base URL of the credential: it must be the gateway itself, not a web page in front of it.';

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

/**
 * Where a request's streamed body (of exact Content-Length) was when its attempt ended or its answer
 * came: `sent` whole (or no streamed body), `cutHere` (this side ended it before its end: the file,
 * the deadline, a Stop, with no answer), `cutThere` (the gateway closed the connection mid-body, no
 * answer seen), `answeredEarly` (the status line came before the body was sent whole).
 */
export type Upload = 'sent' | 'cutHere' | 'cutThere' | 'answeredEarly';

/** What a request's hint may say about work it started. */
export interface PaidFacts {
	/** It carried a body the gateway could act on (not a GET). */
	sentBody: boolean;
	/** Paid or state-changing (`idempotent: false`): never sent again once it may have acted. */
	paid: boolean;
	/** A paid request's own words for when it may have acted: what may exist, and where to check. */
	ifActed?: string;
}

/** What the classifier is given of a request and its attempt (wire/attempt.ts's AttemptSignal). */
export interface SentRequest extends PaidFacts {
	attempt: {
		readonly upload: Upload;
		/** The one rule of whether the gateway may have acted on the attempt, given the answer's status when one came. */
		mayHaveActed(sentBody: boolean, status?: number): boolean;
	};
}

const MAY_HAVE_GONE_THROUGH = 'The request may have gone through even so.';
const NOT_SENT_AGAIN = 'The request may have gone through even so: it was not sent again, so as not to pay twice.';

/** What the upload says of a failure, when it says something: the hint's reason, before the kind's advice. */
function uploadWords(upload: Upload, answered: boolean): string | undefined {
	// An error status that came before the body was sent whole: the gateway refused a request it never had whole.
	if (answered) return upload === 'answeredEarly' ? 'The gateway answered before it had the whole request, so it did not act on it.' : undefined;
	if (upload === 'cutHere') return 'The gateway did not get the whole request (it was cut before its end), so it did not act on it.';
	// Node's HTTP client drops an answer that came just before the close.
	if (upload === 'cutThere') return 'The gateway closed the connection before it had read the whole request; it may have answered (and acted) first, and that answer was lost with the connection.';
	return undefined;
}

/**
 * The one hint of a failure, composed where it is classified and never edited afterwards: that the
 * request may have gone through (and, when paid, that it was not sent again: in the call's own
 * words when it has them), then what the upload says, else the advice of the failure's kind. A
 * paid call's own words say what to do: advice to try again would pay twice.
 */
function composeHint(mayHaveActed: boolean, request: PaidFacts | undefined, upload: string | undefined, advice?: string): string | undefined {
	const acted = mayHaveActed && request?.sentBody ? (request.paid ? (request.ifActed ?? NOT_SENT_AGAIN) : MAY_HAVE_GONE_THROUGH) : undefined;
	const own = upload ?? (acted !== undefined && request?.paid && request.ifActed !== undefined ? undefined : advice);
	return [acted, own].filter(Boolean).join(' ') || undefined;
}

/**
 * A Stop or the end of the run, while a request was in flight (`mayHaveActed`) or waited for its
 * turn. Only paid work that may exist is worth a word after a Stop.
 */
export function cancelledError(headline: string, mayHaveActed: boolean, request: PaidFacts, extra: Partial<GatewayErrorInit> = {}): GatewayError {
	return new GatewayError({ kind: 'cancelled', headline, hint: request.paid ? composeHint(mayHaveActed, request, undefined) : undefined, mayHaveActed, ...extra });
}

/** A failure of a kind this side decided (a rate limit's turn that came too late), with that kind's advice. */
export function failureOf(kind: GatewayErrorKind, init: Omit<GatewayErrorInit, 'kind'>): GatewayError {
	return new GatewayError({ kind, hint: HINTS[kind], ...init });
}

/** An HTTP error answer (status >= 400), or an error body inside a 200; `largest`: the request's largest field. */
export function httpError(what: string, status: number, bodyText: string, contentType: string, extra: Partial<GatewayErrorInit> = {}, largest?: LargestField, request?: SentRequest, cut = false): GatewayError {
	return errorFromParsed(what, status, parseErrorBody(bodyText, contentType, cut), extra, largest, request);
}

/**
 * An error answer classified: its kind from the words first, then the status; whether the gateway
 * may have acted (the attempt's rule, `request`; a refusal did nothing, whatever its status: a 503
 * "no channel for this model"); and its one hint.
 */
export function errorFromParsed(what: string, status: number | undefined, parsed: ParsedErrorBody, extra: Partial<GatewayErrorInit> = {}, largest?: LargestField, request?: SentRequest): GatewayError {
	const kind = classifyError(status !== undefined && status >= 400 ? status : undefined, parsed);
	const refusal = REFUSAL_KINDS.has(kind);
	const mayHaveActed = !refusal && (request ? request.attempt.mayHaveActed(request.sentBody, status) : (extra.mayHaveActed ?? false));
	const advice = kind === 'server' ? serverHint(status, parsed) : kind === 'too_large' ? tooLargeHint(largest) : HINTS[kind];
	const upload = request && !refusal ? uploadWords(request.attempt.upload, true) : undefined;
	const headline = failedHeadline(what, kind);
	return new GatewayError({
		kind,
		headline: parsed.html ? `${headline}: it answered with ${parsed.message}` : headline,
		hint: composeHint(mayHaveActed, request, upload, advice),
		status,
		gatewayMessage: parsed.html ? undefined : parsed.message,
		gatewayCode: parsed.code,
		...extra,
		mayHaveActed,
	});
}

/**
 * A file link (a generated image or video) that answers 403, 404 or 410: it has expired or is
 * gone, whatever the host says. `nextStep`: what the user can do to get a fresh link.
 */
export function expiredLinkError(what: string, host: string, status: number, bodyText: string, nextStep: string | undefined, extra: Partial<GatewayErrorInit> = {}): GatewayError {
	const said = storageMessage(bodyText) ?? (bodyText.trim().startsWith('<') ? undefined : gatewayQuote(bodyText) || undefined);
	const hint = 'Links to generated files are temporary: download them soon after they are generated.';
	return new GatewayError({
		kind: 'not_found',
		headline: `${what} failed: the link has expired or is gone (${host} answered HTTP ${status})`,
		hint: nextStep ? `${hint} ${nextStep}` : hint,
		gatewayMessage: said,
		status,
		...extra,
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
 * A failure without an HTTP answer, or while reading one. `host` names where the request went;
 * `request` (the attempt's facts) says whether the gateway may have acted and what its upload says.
 * `readerAdvice`: an answer came and broke off, and its reader says what to do (a download: how to
 * try again; a chat stream: that the partial answer was discarded); whether the gateway acted is
 * then no question (it answered), so that is the hint.
 */
export function networkError(what: string, error: unknown, host: string, extra: Partial<GatewayErrorInit> = {}, request?: SentRequest, readerAdvice?: string): GatewayError {
	const cause = rootCause(error);
	const code = cause.code ?? '';
	const [kind, reason, advice] = networkReason(code, cause.message ?? '', host);
	// Never sent (refused, unresolved, a certificate): nothing reached the gateway.
	const mayHaveActed = !NEVER_SENT.has(code) && (request ? request.attempt.mayHaveActed(request.sentBody) : true);
	const upload = request ? uploadWords(request.attempt.upload, false) : undefined;
	return new GatewayError({ kind, headline: `${what} failed: ${reason}`, hint: readerAdvice ?? composeHint(mayHaveActed, request, upload, advice), mayHaveActed, ...extra });
}

/** What a connection failure's code says: its kind, the reason in words, and the advice, if any. */
function networkReason(code: string, message: string, host: string): [GatewayErrorKind, string, string | undefined] {
	if (code === 'ECONNREFUSED') return ['network', `the connection to ${host} was refused`, `Nothing answers at ${host}. Check the address and that the server is running.`];
	if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return ['network', `the host name ${host} could not be resolved`, `Check the host name ${host}.`];
	if (/CERT|TLS|SSL/i.test(code)) return ['network', `the TLS certificate of ${host} was not accepted (${code})`, undefined];
	if (code === 'ECONNRESET' || code === 'EPIPE' || /socket hang up|aborted|premature close/i.test(message)) return ['network', `the connection to ${host} was dropped before the answer was complete`, undefined];
	if (code === 'ECONNABORTED' || code === 'ETIMEDOUT' || /timeout/i.test(message)) return ['timeout', `${host} did not answer in time`, undefined];
	return ['network', `the connection to ${host} failed (${code || 'no answer'})`, undefined];
}

/**
 * The attempt's own deadline (or a limit set from outside the call) ended it with no complete
 * answer; `headline` names the limit.
 */
export function deadlineError(headline: string, request: SentRequest, extra: Partial<GatewayErrorInit> = {}, readerAdvice?: string): GatewayError {
	const mayHaveActed = request.attempt.mayHaveActed(request.sentBody);
	return new GatewayError({ kind: 'timeout', headline, hint: readerAdvice ?? composeHint(mayHaveActed, request, uploadWords(request.attempt.upload, false)), mayHaveActed, ...extra });
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
