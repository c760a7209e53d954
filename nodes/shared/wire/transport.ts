/**
 * The one way every node talks to the gateway: joins the base URL and the path, authenticates,
 * bounds every request by a hard deadline and the execution's cancel signal, follows redirects
 * itself, retries only what is safe to repeat (one backoff shared by the whole batch), and turns
 * every failure into a typed GatewayError (errors.ts). Nothing here builds an n8n error: that
 * happens once, at the edge (edge.ts), where the text is masked.
 *
 * The item's deadline (GatewayCall.notAfter) owns every wait of a call: attempts, 429 backoffs,
 * Retry-After, the shared hold and the pace slot all end by it, and a wait that would pass it is
 * not begun. The client's run scope (close) ends every wait and request once the run is over.
 *
 * Why n8n's `httpRequest` and not `httpRequestWithAuthentication`: the authenticated helper
 * replaces a request's abort signal with the execution's, so a per-request deadline could not
 * stop a body that drips forever; and its redirect handling keeps the Authorization header on a
 * redirect to a sub-domain (another origin). So this file adds the key itself, to the gateway's
 * own origin only, and follows redirects hop by hop.
 */
import type {
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	ILoadOptionsFunctions,
	INode,
} from 'n8n-workflow';

import { CREDENTIAL_TYPE, readGatewayCredential } from '../credential/settings';
import type { GatewaySettings } from '../credential/settings';
import {
	GatewayError,
	httpError,
	isAbortError,
	isErrorShape,
	isExpiredLinkStatus,
	isRefusal,
	networkError,
	notAnObjectError,
	gatewayQuote,
	readErrorFields,
	errorFromParsed,
	storageMessage,
} from '../failures/errors';
import type { GatewayErrorInit } from '../failures/errors';
import { SecretMasker } from '../credential/secrets';
import { DEFAULT_RETRY_POLICY, decideRetry, giveUpWords, heldTooLongWords, parseRetryAfter, secondsText } from './retry';
import type { RetryCount, RetryDecision, RetryPolicy } from './retry';
import { SendPace } from './pace';
import { CancelledError, PastDeadline, deadlineSignal, pause } from './timing';
import { hostOf, isSameOrigin, joinUrl } from '../credential/url';
import { encodeJsonBody, largestField, StreamedJsonBody, stalledFileOf } from './jsonBody';
import type { OpenedBody } from './jsonBody';
import { fileWaitScope } from './fileWait';
import type { FileWaitScope } from './fileWait';

export { CREDENTIAL_TYPE };

type GatewayContext = IExecuteFunctions | ILoadOptionsFunctions;

/** What a readable HTTP body offers without importing Node's stream module (n8n's rules). */
export interface ByteStream extends AsyncIterable<Buffer | Uint8Array | string> {
	read(size?: number): Buffer | string | null;
	unshift(chunk: Buffer): void;
	once(event: string, listener: (...args: unknown[]) => void): this;
	on(event: string, listener: (...args: unknown[]) => void): this;
	removeListener(event: string, listener: (...args: unknown[]) => void): this;
	destroy(error?: Error): void;
	readonly readableEnded?: boolean;
	readonly destroyed?: boolean;
}

export interface GatewayCall {
	method?: IHttpRequestMethods;
	/** An endpoint path such as `/v1/models`, joined to the base URL, or a whole http(s) link. */
	path: string;
	/** An object is sent as JSON; a string is sent as it is (already-serialised JSON). */
	body?: IDataObject | string;
	/** Headers of this call (e.g. `anthropic-version`); the credential's custom headers win. */
	headers?: Record<string, string>;
	itemIndex?: number;
	/**
	 * Hard limit for one attempt, from sending to the last byte of the answer; and, when `notAfter`
	 * is not given, for the whole call from its start: every retry and every wait included.
	 */
	deadlineMs?: number;
	/**
	 * The item's deadline (epoch ms), the one owner of every wait of this call: no attempt, 429
	 * backoff, Retry-After, shared hold or pace slot may pass it, and a wait that would is not
	 * begun (the call fails at once, saying so). Default: `deadlineMs` from the call's start.
	 */
	notAfter?: number;
	/** The deadline's name as the user knows it, for messages: "Timeout (Seconds)". */
	limitName?: string;
	/** Retry tuning, or false for a single attempt. `idempotent: false` for paid or state-changing requests. */
	retry?: Partial<RetryPolicy> | false;
	/** What the call does, for messages: "Creating the plant". */
	what?: string;
	/**
	 * A 429 with a Retry-After holds only this call: it waits that long in its own slot and is sent
	 * again, while the run's other requests go on, neither held nor slowed (the pace is not cut).
	 * The gateway said when to try this request again; obeying it per request bounds the retries
	 * (a refused request keeps its slot idle for the wait) within Concurrency. For video submits:
	 * a gateway that refuses one submit in seven with a Retry-After of 1-3 s held every submit for
	 * 2 s at each refusal and cut the pace each time, and 1,000 submits took 2.2 times as long
	 * (bench row 11e). A bare 429 still cuts the pace and backs off as for any call.
	 */
	retryAfterHoldsCallOnly?: boolean;
	/** Fields every error of this call keeps (e.g. a task id). */
	errorFields?: Record<string, unknown>;
}

export interface GatewayResponse<B> {
	status: number;
	headers: Record<string, unknown>;
	body: B;
}

interface RawResponse {
	statusCode: number;
	headers: Record<string, unknown>;
	body: ByteStream;
}

export const DEFAULT_DEADLINE_MS = 300_000;

/** An item's deadline as a call takes it: when (this side's time) and its name as the user knows it. */
export type ItemLimit = Required<Pick<GatewayCall, 'notAfter' | 'limitName'>>;

/** The fields of a call bounded by an item's deadline of `ms` from now, named as the user knows it. */
export function itemDeadline(ms: number, limitName: string, now = Date.now()): ItemLimit {
	return { notAfter: now + ms, limitName };
}

/** A call's deadline: when, what it is called, and how long it was at the call's start. */
interface CallLimit {
	notAfter: number;
	name: string;
	ms: number;
}

/** What a paid request's error says when it may have acted; composed once, when the call gives up. */
const MAY_HAVE_GONE_THROUGH = 'The request may have gone through even so.';
const NOT_SENT_AGAIN = 'The request may have gone through even so: it was not sent again, so as not to pay twice.';
/** A streamed body this side cut before its end (its Content-Length exact), with no answer: the gateway cannot have acted on it. */
const NOT_WHOLE = 'The gateway did not get the whole request (it was cut before its end), so it did not act on it.';
/** An error status that came before the body was sent whole: the gateway refused a request it never had whole. */
const ANSWERED_BEFORE_WHOLE = 'The gateway answered before it had the whole request, so it did not act on it.';
/** The gateway closed the connection mid-body: Node's HTTP client drops an answer that came just before the close. */
const CLOSED_MID_BODY = 'The gateway closed the connection before it had read the whole request; it may have answered (and acted) first, and that answer was lost with the connection.';
const ERROR_BODY_LIMIT = 64 * 1024;
/** A JSON answer larger than this is not a gateway answer of any endpoint here. */
const JSON_BODY_LIMIT = 64 * 1024 * 1024;
const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export function headerValue(headers: Record<string, unknown> | undefined, name: string): string {
	const value = headers?.[name] ?? headers?.[name.toLowerCase()];
	if (Array.isArray(value)) return String(value[0] ?? '');
	return value === undefined || value === null ? '' : String(value);
}


function tryParse(text: string, parse: (text: string) => unknown): { ok: true; value: unknown } | { ok: false } {
	try {
		return { ok: true, value: parse(text) };
	} catch {
		return { ok: false };
	}
}

/**
 * A whole answer's text as a JSON object. An empty body, text that is not JSON, a value that is
 * not an object and an error body in a 200 (`{"error":…}`, `{"success":false}`, …) all become
 * GatewayErrors. For answers read some other way than `json` (a stream decoded as it arrives).
 */
export function jsonObjectAnswer<T = IDataObject>(
	response: GatewayResponse<string>,
	what: string,
	extra: Partial<GatewayErrorInit>,
	parse: (text: string) => unknown = JSON.parse,
): T {
	const text = response.body.trim();
	if (text === '') {
		throw new GatewayError({ kind: 'protocol', headline: `${what} failed: the gateway answered HTTP ${response.status} with an empty body`, ...extra });
	}
	const parsed = tryParse(text, parse);
	if (!parsed.ok) {
		const contentType = headerValue(response.headers, 'content-type');
		const page = /html/i.test(contentType) || text.startsWith('<');
		throw new GatewayError({
			kind: 'protocol',
			headline: `${what} failed: the gateway answered HTTP ${response.status} with ${page ? 'a page' : 'text'} instead of JSON`,
			gatewayMessage: gatewayQuote(text),
			hint: 'Check the Base URL of the credential: it must be the gateway itself, not a web page in front of it.',
			...extra,
		});
	}
	const body = parsed.value;
	if (typeof body !== 'object' || body === null || Array.isArray(body)) throw notAnObjectError(what, response.status, body, extra);
	if (isErrorShape(body)) throw errorFromParsed(what, response.status, readErrorFields(body), extra);
	return body as T;
}

/** A redirect's Location as an absolute URL, or undefined when it is none. */
function resolveLocation(location: string, from: string): string | undefined {
	if (location === '') return undefined;
	try {
		return new URL(location, from).toString();
	} catch {
		return undefined;
	}
}

/**
 * The gateway may have done the work before its proxy gave up (502/504) or failed afterwards (500);
 * any other error status is a refusal, whatever its body turns out to say.
 */
function mayHaveActedBy(status: number): boolean {
	return status >= 500 || status === 408;
}

/**
 * One attempt's time limit and the execution's cancel signal as one signal. `reason()` says which
 * ended it, so a timeout and a Stop are told apart.
 */
class AttemptSignal {
	readonly signal: AbortSignal;
	private readonly deadline: AbortSignal;
	/**
	 * Set when the request body's file failed (could not be opened, or is not the file checked):
	 * the call fails with this error as it is (the item's own), never retried nor read as the network's.
	 */
	bodyFailure: Error | undefined;
	/**
	 * Where a streamed body (of exact Content-Length) was when the attempt ended or its answer came:
	 * `sent` whole (or no streamed body), `cutHere` (this side ended it before its end: the file, the
	 * deadline, a Stop, with no answer), `cutThere` (the gateway closed the connection mid-body, with
	 * no answer seen), `answeredEarly` (the status line came before the body was sent whole).
	 * `mayHaveActed` reads it: the one rule of what an attempt's outcome says.
	 */
	upload: 'sent' | 'cutHere' | 'cutThere' | 'answeredEarly' = 'sent';

	/**
	 * `reportedMs`: the limit the messages name (the whole of the item's deadline when that, not
	 * the attempt's own limit, cut the attempt short). `cutBy`: the name of a limit set from outside
	 * the call (an image item's 300 s, Max Wait) when that cut the attempt short.
	 */
	constructor(
		readonly deadlineMs: number,
		private readonly cancel?: AbortSignal,
		readonly reportedMs = deadlineMs,
		readonly cutBy?: string,
		/** The name of the attempt's own limit, when the user set it ("Timeout (Seconds)"). */
		private readonly ownLimitName?: string,
	) {
		this.deadline = deadlineSignal(deadlineMs);
		this.signal = cancel ? AbortSignal.any([this.deadline, cancel]) : this.deadline;
	}

	get cancelled(): boolean {
		return this.cancel?.aborted === true;
	}

	/** The limit that cut this attempt short, as the messages name it. */
	get limitWords(): string {
		return this.cutBy ?? this.ownLimitName ?? `${secondsText(this.reportedMs)} s`;
	}

	get timedOut(): boolean {
		return this.deadline.aborted && !this.cancelled;
	}

	/**
	 * Whether the gateway may have acted on this attempt, the one rule: an answer that came decides
	 * (`status`: an error status, which says "may have acted" for a 5xx or 408, unless it came before
	 * the body was sent whole: then the gateway refused a request it never had whole). With no answer:
	 * a body this side cut before its end was not acted on; a body sent whole, or one whose connection
	 * the gateway closed mid-body (Node's client drops an answer that came just before), may have been.
	 */
	mayHaveActed(sentBody: boolean, status?: number): boolean {
		if (status !== undefined) return mayHaveActedBy(status) && this.upload !== 'answeredEarly';
		return sentBody && this.upload !== 'cutHere';
	}

	/** Destroys the stream when the attempt's time runs out or the run is stopped. */
	bind(stream: ByteStream): void {
		const onAbort = () => stream.destroy(new CancelledError(this.timedOut ? 'deadline' : 'cancelled'));
		if (this.signal.aborted) return onAbort();
		this.signal.addEventListener('abort', onAbort, { once: true });
		const release = () => this.signal.removeEventListener('abort', onAbort);
		stream.once('close', release);
		stream.once('end', release);
	}
}

/**
 * The gateway as one execution sees it: the credential read and checked once, one backoff gate
 * shared by all items, the execution's cancel signal, and the masker of this credential's secrets.
 */
export class GatewayClient {
	/** The execution's sending pace: adapts to the gateway's rate limit (pace.ts). */
	readonly pace = new SendPace();
	readonly masker: SecretMasker;
	/** The run's scope: closed when the node's run is over (close), which ends every wait and request. */
	private readonly run = new AbortController();
	/** Winding down (windDown): no wait goes on and nothing new starts, but requests in flight finish. */
	private readonly ending = new AbortController();
	/** What every wait and every new start ends on: a Stop, the end of the run, or winding down. */
	private readonly waitsEnd: AbortSignal;
	/** A Stop of the execution, or the end of the run: what every wait and attempt ends on. */
	private readonly stop: AbortSignal;

	private constructor(
		private readonly ctx: GatewayContext,
		private readonly settings: GatewaySettings,
		/** Whether requests go through the execution's pace (unpaced: their owner paces them). */
		private readonly paced = true,
		scope?: { run: AbortController; ending: AbortController },
	) {
		if (scope) ({ run: this.run, ending: this.ending } = scope);
		this.masker = SecretMasker.of(settings);
		const cancel = this.cancelSignal;
		this.stop = cancel ? AbortSignal.any([cancel, this.run.signal]) : this.run.signal;
		this.waitsEnd = AbortSignal.any([this.stop, this.ending.signal]);
	}

	/**
	 * Ends the run's scope: every pending wait (backoff, Retry-After, shared hold, pace slot) and
	 * every request in flight ends at once, and no request of this client starts any more. The item
	 * runner calls it when the node's run returns or throws, so no paid request reaches the gateway
	 * after the run that would receive its answer has ended.
	 */
	close(): void {
		this.run.abort();
	}

	/**
	 * The run is failing: every pending wait ends and no request starts any more, but a request
	 * already sent runs to its answer, so a paid task it created is not lost with it (its id reaches
	 * the run's error). close() still ends everything when the run is over.
	 */
	windDown(): void {
		this.ending.abort();
	}

	/** Whether the run's scope was closed (close) or is winding down (windDown). */
	get closed(): boolean {
		return this.run.signal.aborted || this.ending.signal.aborted;
	}

	/**
	 * This client for requests that a caller paces itself (video status checks: checkSchedule.ts):
	 * the same credential and scope, outside the execution's pace, so their 429s neither slow nor
	 * hold the other requests, nor are they held by the others'.
	 */
	unpaced(): GatewayClient {
		return new GatewayClient(this.ctx, this.settings, false, { run: this.run, ending: this.ending });
	}

	/** Reads and checks the credential before any request is sent. */
	static async create(ctx: GatewayContext): Promise<GatewayClient> {
		const credentials = await ctx.getCredentials(CREDENTIAL_TYPE);
		return new GatewayClient(ctx, readGatewayCredential(credentials as IDataObject, ctx.getNode()));
	}

	get node(): INode {
		return this.ctx.getNode();
	}

	get baseUrl(): string {
		return this.settings.baseUrl;
	}

	get groupMultiplier(): number {
		return this.settings.groupMultiplier;
	}

	get cancelSignal(): AbortSignal | undefined {
		const ctx = this.ctx as Partial<IExecuteFunctions>;
		return typeof ctx.getExecutionCancelSignal === 'function' ? ctx.getExecutionCancelSignal() : undefined;
	}

	/**
	 * What an item's waits on n8n's binary store end on (fileWait.ts): its deadline `notAfter`, and
	 * what ends every wait of this client (a Stop, the end of the run, winding down).
	 */
	fileWaits(notAfter: number): FileWaitScope {
		return fileWaitScope(notAfter, this.waitsEnd);
	}

	url(path: string): string {
		return /^https?:\/\//i.test(path) ? path : joinUrl(this.baseUrl, path);
	}

	/**
	 * Sends a request and returns its answer as a JSON object. An error status, an error body in
	 * a 200 (`{"error":…}`, `{"success":false}`, …) and an answer that is not a JSON object all
	 * become GatewayErrors. `parse` replaces JSON.parse (e.g. to keep int64 digits).
	 */
	async json<T = IDataObject>(call: GatewayCall, parse: (text: string) => unknown = JSON.parse): Promise<T> {
		const response = await this.text(call);
		return jsonObjectAnswer<T>(response, call.what ?? 'The gateway request', this.errorExtra(call, { status: response.status }), parse);
	}

	/** Sends a request and returns the whole answer as text (a 2xx; error statuses are thrown). */
	async text(call: GatewayCall): Promise<GatewayResponse<string>> {
		return await this.send(call, async (response, attempt) => ({
			status: response.statusCode,
			headers: response.headers,
			body: (await this.readBody(response.body, attempt, call, JSON_BODY_LIMIT)).toString('utf8'),
		}));
	}

	/**
	 * Sends a request and returns the open answer stream (server-sent events). The stream is
	 * destroyed when the call's deadline passes or the run is stopped; `streamFailure` turns what
	 * then breaks the reading into a GatewayError.
	 */
	async stream(call: GatewayCall): Promise<GatewayResponse<ByteStream> & { failure: (error: unknown) => GatewayError }> {
		return await this.send(call, async (response, attempt) => ({
			status: response.statusCode,
			headers: response.headers,
			body: response.body,
			failure: (error: unknown) => this.readFailure(error, attempt, call, call.what ?? 'Reading the answer'),
		}));
	}

	/**
	 * Opens a download. The key and custom headers go only to links on the gateway's own origin; a
	 * link anywhere else (a CDN) is fetched without them, and so is every redirect to another origin.
	 */
	async download(
		link: string,
		call: Omit<GatewayCall, 'path' | 'method' | 'body'>,
	): Promise<GatewayResponse<ByteStream> & { failure: (error: unknown) => GatewayError }> {
		return await this.stream({ ...call, path: link, method: 'GET' });
	}

	/** The fields an error of this call carries, for callers that raise errors of their own. */
	errorExtra(call: Pick<GatewayCall, 'itemIndex' | 'errorFields'>, more: Partial<GatewayErrorInit> = {}): Partial<GatewayErrorInit> {
		return { itemIndex: call.itemIndex, fields: { ...(call.errorFields ?? {}) }, ...more };
	}

	/** The retry loop around one call; `take` consumes a 2xx answer within the attempt's deadline. */
	private async send<R>(call: GatewayCall, take: (response: RawResponse, attempt: AttemptSignal) => Promise<R>): Promise<R> {
		const policy: RetryPolicy = call.retry === false ? { ...DEFAULT_RETRY_POLICY, maxRetries: 0, maxRateLimitRetries: 0 } : { ...DEFAULT_RETRY_POLICY, ...call.retry };
		const what = call.what ?? 'The gateway request';
		const started = Date.now();
		const limit = this.limitOf(call, started);
		const count: RetryCount = { rateLimit: 0, other: 0 };
		let last: GatewayError | undefined;
		for (let tries = 1; ; tries++) {
			await this.waitForTurn(call, limit, last);
			const attempt = this.newAttempt(call, limit);
			const shared = this.sharedPace();
			const sentAt = this.pace.now();
			let paced = false;
			let failure: GatewayError;
			try {
				const response = await this.attempt(call, attempt);
				// A call that waits alone waits out a Retry-After in its own slot; its pace is not cut
				// either (only a bare 429 cuts it): a gateway that refuses a share of requests at any rate
				// would otherwise cut it at every refusal, to under half the rate it admits (bench row 11e).
				const waitsAlone = call.retryAfterHoldsCallOnly === true && (parseRetryAfter(response.headers?.['retry-after'], Date.now()) ?? 0) > 0;
				if (response.statusCode === 429) paced = waitsAlone ? false : (shared?.rateLimited(sentAt) ?? false);
				else if (response.statusCode < 400) shared?.succeeded();
				if (response.statusCode < 300) return await take(response, attempt);
				failure = await this.statusFailure(response, attempt, call);
			} catch (error) {
				// A request body that could not be read as checked: the item's own error, never retried.
				if (attempt.bodyFailure) throw attempt.bodyFailure;
				if (!(error instanceof GatewayError)) failure = this.readFailure(error, attempt, call, what);
				else failure = error;
			}
			if (failure.kind === 'cancelled') throw failure;
			// A Retry-After is about the account, not this item: the whole batch holds, whether or not
			// this item waits for it (unless the call asked to wait alone, retryAfterHoldsCallOnly).
			const askedToWait = failure.kind === 'rate_limit' && failure.retryAfterMs !== undefined && failure.retryAfterMs > 0;
			const holdsAll = !(askedToWait && call.retryAfterHoldsCallOnly);
			if (askedToWait && holdsAll) shared?.holdFor(failure.retryAfterMs as number);
			const decision = decideRetry(failure, count, policy, { now: Date.now(), notAfter: limit.notAfter, paced });
			if (!decision.retry) throw this.finalFailure(failure, decision, policy, call, limit, tries, Date.now() - started);
			if (failure.kind === 'rate_limit') count.rateLimit++;
			else count.other++;
			// A 429 before anything got through backs the whole batch off, not this item alone.
			if (failure.kind === 'rate_limit' && decision.waitMs > 0 && holdsAll) shared?.holdFor(decision.waitMs);
			last = failure;
			await pause(decision.waitMs, this.waitsEnd).catch((error) => this.rethrowCancel(error, call, failure.mayHaveActed));
		}
	}

	/** The call's deadline: the item's (notAfter), else its own deadlineMs from its start. */
	private limitOf(call: GatewayCall, started: number): CallLimit {
		const notAfter = call.notAfter ?? started + (call.deadlineMs ?? DEFAULT_DEADLINE_MS);
		const ms = Math.max(0, notAfter - started);
		return { notAfter, ms, name: call.limitName ?? `the ${secondsText(ms)} s limit of this request` };
	}

	/** The execution's pace, unless this client's requests are paced by their owner (unpaced). */
	private sharedPace(): SendPace | undefined {
		return this.paced ? this.pace : undefined;
	}

	/**
	 * Waits for the call's turn (the shared hold after a 429, the execution's pace) within its deadline: a turn that would come after it fails the call at once, saying so.
	 * Nothing starts once the run is over.
	 */
	private async waitForTurn(call: GatewayCall, limit: CallLimit, last: GatewayError | undefined): Promise<void> {
		if (this.waitsEnd.aborted) throw this.cancelled(call, last?.mayHaveActed ?? false);
		const deadline = deadlineSignal(limit.notAfter - Date.now());
		const signal = AbortSignal.any([this.waitsEnd, deadline]);
		let waitError: unknown;
		try {
			await this.sharedPace()?.wait(signal, limit.notAfter);
		} catch (error) {
			waitError = error;
		}
		if (this.waitsEnd.aborted) throw this.cancelled(call, last?.mayHaveActed ?? false);
		if (waitError === undefined) {
			// A request begun at its deadline would be cut at once, after the gateway may have started on it.
			if (Date.now() < limit.notAfter) return;
			throw new GatewayError({
				kind: 'timeout',
				headline: `${call.what ?? 'The gateway request'} failed: ${limit.name} ran out before it could be sent`,
				mayHaveActed: last?.mayHaveActed ?? false,
				...this.errorExtra(call),
			});
		}
		if (!(waitError instanceof PastDeadline) && !deadline.aborted) throw waitError;
		// Known at once (the hold or the slot comes too late), or the deadline came while queued.
		const words =
			waitError instanceof PastDeadline
				? heldTooLongWords(waitError.reason, waitError.waitMs, waitError.leftMs, limit.name)
				: `the gateway's rate limit kept this request waiting for its turn until the end of ${limit.name}`;
		throw new GatewayError({
			kind: 'rate_limit',
			headline: `${call.what ?? 'The gateway request'} failed: ${words}`,
			hint: 'Lower the Concurrency option, or run again later.',
			mayHaveActed: last?.mayHaveActed ?? false,
			...this.errorExtra(call),
		});
	}

	/** One attempt's limit: its own deadline, cut to what is left of the call's. */
	private newAttempt(call: GatewayCall, limit: CallLimit): AttemptSignal {
		const own = call.deadlineMs ?? DEFAULT_DEADLINE_MS;
		const left = limit.notAfter - Date.now();
		// Without an item deadline, the call's own limit is the one the user set (its name, if any).
		const ownName = call.notAfter === undefined ? call.limitName : undefined;
		if (left >= own) return new AttemptSignal(own, this.stop, own, undefined, ownName);
		// A limit that began before this call (the item's) is named, not the part of it left now.
		const outer = call.notAfter !== undefined && call.limitName !== undefined ? limit.name : undefined;
		return new AttemptSignal(Math.max(1, left), this.stop, Math.min(own, limit.ms), outer, ownName);
	}

	/**
	 * The error a call gives up with: what was waited (how long, how many tries, or that the gateway
	 * asks for longer than the limit leaves), and, for a request that may have acted, that it may
	 * have gone through (and, when paid, that it was not sent again). Composed here, once.
	 */
	private finalFailure(failure: GatewayError, decision: RetryDecision, policy: RetryPolicy, call: GatewayCall, limit: CallLimit, tries: number, waitedMs: number): GatewayError {
		const what = call.what ?? 'The gateway request';
		const words = decision.retry || (decision.why === 'spent' && tries === 1) ? undefined : giveUpWords(decision, failure, tries, waitedMs, limit.name);
		const sentBody = call.body !== undefined && (call.method ?? 'POST') !== 'GET';
		const said = failure.hint?.replace(MAY_HAVE_GONE_THROUGH, '').trim() || undefined;
		const acted = failure.mayHaveActed && sentBody ? (policy.idempotent === false ? NOT_SENT_AGAIN : MAY_HAVE_GONE_THROUGH) : undefined;
		const hint = [acted, said].filter(Boolean).join(' ') || undefined;
		if (words === undefined && hint === failure.hint) return failure;
		let headline = failure.headline;
		if (words !== undefined) {
			// "The gateway asks to retry after 60 s, more than …" says the rate limit all by itself.
			headline = failure.kind === 'rate_limit' && words.startsWith('the gateway asks') ? `${what} failed: ${words}` : `${failure.headline}; ${words}`;
		}
		return failure.with({ headline, hint });
	}

	/** One attempt, following redirects hop by hop; the answer is a non-redirect status. */
	private async attempt(call: GatewayCall, attempt: AttemptSignal): Promise<RawResponse> {
		const method = call.method ?? (call.body !== undefined ? 'POST' : 'GET');
		let url = this.url(call.path);
		for (let hop = 0; ; hop++) {
			const response = await this.request(url, method, call, attempt);
			if (!REDIRECT_STATUSES.has(response.statusCode)) return response;
			response.body.destroy();
			const location = headerValue(response.headers, 'location');
			const extra = this.errorExtra(call, { status: response.statusCode, mayHaveActed: false });
			const what = call.what ?? 'The gateway request';
			const next = resolveLocation(location, url);
			if (next === undefined) {
				throw new GatewayError({ kind: 'redirect', headline: `${what} failed: the gateway answered HTTP ${response.statusCode} without a usable Location`, ...extra });
			}
			// The gateway itself moved for good to another origin: the Base URL is out of date.
			const movedGateway = (response.statusCode === 301 || response.statusCode === 308) && isSameOrigin(url, this.baseUrl) && !isSameOrigin(next, this.baseUrl);
			// A body is re-sent only as 307/308 ask, and only to the gateway's own origin.
			const keepsBody = response.statusCode === 307 || response.statusCode === 308;
			if (movedGateway || (method !== 'GET' && !(keepsBody && isSameOrigin(next, this.baseUrl)))) {
				throw new GatewayError({
					kind: 'redirect',
					headline: movedGateway
						? `${what} failed: the gateway moved to ${next}`
						: `${what} failed: the gateway redirected the request to ${next}; a request with a body is not sent to another address`,
					hint: movedGateway
						? 'Update the Base URL of the credential to the new address.'
						: 'Check the Base URL of the credential: it should be the address the gateway answers on directly.',
					...extra,
				});
			}
			if (hop >= MAX_REDIRECTS) {
				throw new GatewayError({ kind: 'redirect', headline: `${what} failed: more than ${MAX_REDIRECTS} redirects, the last to ${next}`, ...extra });
			}
			url = next;
		}
	}

	/** The headers of a request to `url`: the key and custom headers only for the gateway's own origin. */
	private headersFor(url: string, call: GatewayCall): Record<string, string> {
		const headers: Record<string, string> = {};
		if (call.body !== undefined) {
			headers['Content-Type'] = 'application/json';
			headers.Accept = 'application/json, text/event-stream';
			// HTTP/1.1's default, which Node's client otherwise replaces with `close`: a server that answers
			// before it has read the whole body then drains the rest instead of resetting the connection,
			// and a reset drops an answer that came before it (the client fails with EPIPE, unread).
			headers.Connection = 'keep-alive';
		}
		if (!isSameOrigin(url, this.baseUrl)) return headers;
		// Later sources win whatever the letter case of the name: the call's, then the credential's.
		for (const source of [call.headers ?? {}, this.settings.customHeaders]) {
			for (const [name, value] of Object.entries(source)) {
				for (const existing of Object.keys(headers)) if (existing.toLowerCase() === name.toLowerCase()) delete headers[existing];
				headers[name] = value;
			}
		}
		headers.Authorization = `Bearer ${this.settings.apiKey}`;
		return headers;
	}

	private async request(url: string, method: IHttpRequestMethods, call: GatewayCall, attempt: AttemptSignal): Promise<RawResponse> {
		const options: IHttpRequestOptions = {
			method,
			url,
			headers: this.headersFor(url, call),
			encoding: 'stream',
			json: false,
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			disableFollowRedirect: true,
			// n8n's `timeout` is an idle-socket timeout; the attempt's deadline is the real limit.
			timeout: attempt.deadlineMs,
			abortSignal: attempt.signal,
		};
		const encoded = call.body !== undefined && method !== 'GET' ? (typeof call.body === 'string' ? call.body : encodeJsonBody(call.body)) : undefined;
		if (!(encoded instanceof StreamedJsonBody)) {
			if (encoded !== undefined) options.body = encoded;
			const response = (await this.ctx.helpers.httpRequest(options)) as RawResponse;
			attempt.bind(response.body);
			return response;
		}
		// Files streamed from n8n's binary store: opened afresh for this attempt, sized up front (so
		// relays get a body of known length, not chunks), closed when the answer is done or the request fails.
		let opened: OpenedBody;
		try {
			// Every file's open ends with the attempt (its deadline, a Stop): an S3 GET that never answers too.
			opened = await encoded.open(attempt.signal);
		} catch (error) {
			// Nothing was sent. A Stop is a Stop (the caller's cancel path); a deadline passed while the
			// file opened is that file's failure; a file that could not be opened fails with its own error.
			attempt.upload = 'cutHere';
			if (!attempt.cancelled) attempt.bodyFailure = attempt.timedOut ? stalledFileOf(error, attempt.limitWords) : error instanceof Error ? error : new Error(String(error));
			throw attempt.bodyFailure ?? error;
		}
		// A Node Readable is a body n8n's request helper pipes (its types do not name streams).
		options.body = opened.body as unknown as IHttpRequestOptions['body'];
		(options.headers as Record<string, string>)['Content-Length'] = String(encoded.size);
		let response: RawResponse | undefined;
		try {
			response = (await this.ctx.helpers.httpRequest(options)) as RawResponse;
		} finally {
			if (response === undefined) {
				// Who held the body up, asked before closing it: a file that stopped giving bytes when the deadline came.
				const stalled = attempt.timedOut ? opened.stalled(attempt.limitWords) : undefined;
				opened.close();
				// A file that is not the one checked, could not be read, or stalled fails the request with its own error, not as the network's.
				attempt.bodyFailure = opened.failure ?? stalled;
				// Cut here (the file, the deadline, a Stop) or by the gateway's close, which may have followed an answer.
				if (!opened.ended) attempt.upload = attempt.signal.aborted || attempt.bodyFailure !== undefined ? 'cutHere' : 'cutThere';
			}
		}
		if (!opened.ended) attempt.upload = 'answeredEarly';
		response.body.once('close', opened.close);
		response.body.once('end', opened.close);
		attempt.bind(response.body);
		return response;
	}

	/** An error status: its body read (briefly) and classified. */
	private async statusFailure(response: RawResponse, attempt: AttemptSignal, call: GatewayCall): Promise<GatewayError> {
		const what = call.what ?? 'The gateway request';
		const status = response.statusCode;
		const mayHaveActed = attempt.mayHaveActed(true, status);
		let text = '';
		try {
			text = (await this.readBody(response.body, attempt, call, ERROR_BODY_LIMIT, true)).toString('utf8');
		} catch {
			// Stopped while the body arrived: the status has already said whether the gateway acted.
			if (attempt.cancelled) return this.cancelled(call, call.body !== undefined && mayHaveActed);
			// A dropped error body still leaves the status code to report.
		}
		const contentType = headerValue(response.headers, 'content-type');
		const retryAfterMs = parseRetryAfter(response.headers?.['retry-after'], Date.now());
		const host = hostOf(this.url(call.path));
		const fromFileHost = !isSameOrigin(this.url(call.path), this.baseUrl);
		if (fromFileHost && isExpiredLinkStatus(status)) {
			const said = storageMessage(text);
			return new GatewayError({
				kind: 'not_found',
				headline: `${what} failed: the link has expired or is gone (${host} answered HTTP ${status})`,
				hint: 'Links to generated files are temporary: download them soon after they are generated.',
				gatewayMessage: said ?? (text.trim().startsWith('<') ? undefined : gatewayQuote(text) || undefined),
				...this.errorExtra(call, { status }),
			});
		}
		let failure = httpError(what, status, text, contentType, this.errorExtra(call, { status, mayHaveActed, retryAfterMs }), largestField(call.body));
		// A status that would have said "may have acted", had the gateway had the whole request.
		if (attempt.upload === 'answeredEarly' && mayHaveActedBy(status)) failure = failure.with({ hint: ANSWERED_BEFORE_WHOLE });
		// A refusal says the gateway did nothing, whatever the status (a 503 "no channel for this model").
		return isRefusal(failure.kind) && failure.mayHaveActed ? failure.with({ mayHaveActed: false }) : failure;
	}

	/**
	 * Reads a whole body within the attempt's deadline, up to `limit` bytes (then stops: more than
	 * that is not an answer we can use, or, for `truncate`, not worth quoting).
	 */
	private async readBody(stream: ByteStream, attempt: AttemptSignal, call: GatewayCall, limit: number, truncate = false): Promise<Buffer> {
		const parts: Buffer[] = [];
		let size = 0;
		try {
			for await (const chunk of stream) {
				const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
				parts.push(buffer);
				size += buffer.length;
				if (size >= limit) {
					if (truncate) break;
					throw new GatewayError({
						kind: 'protocol',
						headline: `${call.what ?? 'The gateway request'} failed: the answer is larger than ${Math.round(limit / 1024 / 1024)} MiB`,
						...this.errorExtra(call),
					});
				}
			}
		} catch (error) {
			throw this.readFailure(error, attempt, call, call.what ?? 'The gateway request');
		} finally {
			if (!stream.readableEnded) stream.destroy();
		}
		return Buffer.concat(parts);
	}

	/** A failure while sending or reading: a Stop, the deadline, or the network. */
	private readFailure(error: unknown, attempt: AttemptSignal, call: GatewayCall, what: string): GatewayError {
		if (error instanceof GatewayError) return error;
		// A streamed body this side cut before its end: the gateway did not get the whole request.
		const cut = attempt.upload === 'cutHere';
		if (attempt.cancelled) return this.cancelled(call, attempt.mayHaveActed(call.body !== undefined));
		const sentBody = call.body !== undefined && (call.method ?? 'POST') !== 'GET';
		if (attempt.timedOut || (isAbortError(error) && !attempt.cancelled)) {
			return new GatewayError({
				kind: 'timeout',
				headline: attempt.cutBy
					? `${what} failed: no complete answer within the ${secondsText(attempt.deadlineMs)} s left of ${attempt.cutBy}`
					: `${what} failed: no complete answer within ${secondsText(attempt.reportedMs)} s`,
				hint: cut ? NOT_WHOLE : sentBody ? MAY_HAVE_GONE_THROUGH : undefined,
				mayHaveActed: attempt.mayHaveActed(sentBody),
				...this.errorExtra(call),
			});
		}
		const failure = networkError(what, error, hostOf(this.url(call.path)), this.errorExtra(call));
		if (cut) return failure.with({ mayHaveActed: false, hint: NOT_WHOLE });
		if (attempt.upload === 'cutThere') return failure.with({ mayHaveActed: true, hint: CLOSED_MID_BODY });
		if (!sentBody) return failure.mayHaveActed ? failure.with({ mayHaveActed: false }) : failure;
		return failure.mayHaveActed && !failure.hint ? failure.with({ hint: MAY_HAVE_GONE_THROUGH }) : failure;
	}

	/**
	 * A Stop, or the end of the run. `mayHaveActed`: a request was in flight (or an earlier attempt
	 * may have acted); one stopped while it waited for a retry after a 429 was refused, nothing more.
	 */
	private cancelled(call: GatewayCall, mayHaveActed: boolean): GatewayError {
		const what = call.what ?? 'The gateway request';
		// The run's scope closed (another item failed the run) rather than a Stop.
		const ended = this.closed && this.cancelSignal?.aborted !== true;
		return new GatewayError({ kind: 'cancelled', headline: ended ? `${what} was stopped: the run had ended` : `${what} was cancelled`, mayHaveActed, ...this.errorExtra(call) });
	}

	private rethrowCancel(error: unknown, call: GatewayCall, mayHaveActed: boolean): never {
		if (error instanceof CancelledError || isAbortError(error)) throw this.cancelled(call, mayHaveActed);
		throw error;
	}
}
