/**
 * The one way every node talks to the gateway: joins the base URL and the path, authenticates,
 * bounds every request by a hard deadline and the execution's cancel signal, follows redirects
 * itself, retries only what is safe to repeat (one backoff shared by the whole batch), and turns
 * every failure into a typed GatewayError (errors.ts). Nothing here builds an n8n error: that
 * happens once, at the edge (edge.ts), where the text is masked.
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

import { readGatewayCredential } from '../credential/settings';
import type { GatewaySettings } from '../credential/settings';
import {
	GatewayError,
	httpError,
	isAbortError,
	isErrorShape,
	networkError,
	notAnObjectError,
	quoteStart,
	readErrorFields,
	errorFromParsed,
} from '../failures/errors';
import type { GatewayErrorInit } from '../failures/errors';
import { SecretMasker } from '../credential/secrets';
import { DEFAULT_RETRY_POLICY, parseRetryAfter, retryDelayMs } from './retry';
import type { RetryPolicy } from './retry';
import { SendPace } from './pace';
import { CancelledError, pause } from './timing';
import { hostOf, isSameOrigin, joinUrl } from '../credential/url';

export const CREDENTIAL_TYPE = 'gatewayApi';

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
	/** Hard limit for one attempt, from sending to the last byte of the answer. */
	deadlineMs?: number;
	/** An absolute time (epoch ms) no attempt or retry wait may pass, e.g. the end of Max Wait. */
	notAfter?: number;
	/** Retry tuning, or false for a single attempt. `idempotent: false` for paid or state-changing requests. */
	retry?: Partial<RetryPolicy> | false;
	/** What the call does, for messages: "Creating the plant". */
	what?: string;
	/** A pace this call keeps besides the execution's (e.g. a budget for video status checks). */
	pace?: SendPace;
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

/** `1000` -> `1`, `250` -> `0.25`: seconds as a person writes them. */
function seconds(ms: number): string {
	return String(Math.round(ms / 10) / 100);
}

function tryParse(text: string, parse: (text: string) => unknown): { ok: true; value: unknown } | { ok: false } {
	try {
		return { ok: true, value: parse(text) };
	} catch {
		return { ok: false };
	}
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
 * One attempt's time limit and the execution's cancel signal as one signal. `reason()` says which
 * ended it, so a timeout and a Stop are told apart.
 */
class AttemptSignal {
	readonly signal: AbortSignal;
	private readonly deadline: AbortSignal;

	constructor(
		readonly deadlineMs: number,
		private readonly cancel?: AbortSignal,
	) {
		this.deadline = AbortSignal.timeout(Math.max(1, deadlineMs));
		this.signal = cancel ? AbortSignal.any([this.deadline, cancel]) : this.deadline;
	}

	get cancelled(): boolean {
		return this.cancel?.aborted === true;
	}

	get timedOut(): boolean {
		return this.deadline.aborted && !this.cancelled;
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

	private constructor(
		private readonly ctx: GatewayContext,
		private readonly settings: GatewaySettings,
	) {
		this.masker = new SecretMasker([settings.apiKey, ...Object.values(settings.customHeaders)]);
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

	url(path: string): string {
		return /^https?:\/\//i.test(path) ? path : joinUrl(this.baseUrl, path);
	}

	/**
	 * Sends a request and returns its answer as a JSON object. An error status, an error body in
	 * a 200 (`{"error":…}`, `{"success":false}`, …) and an answer that is not a JSON object all
	 * become GatewayErrors. `parse` replaces JSON.parse (e.g. to keep int64 digits).
	 */
	async json<T = IDataObject>(call: GatewayCall, parse: (text: string) => unknown = JSON.parse): Promise<T> {
		const what = call.what ?? 'The gateway request';
		const response = await this.text(call);
		const text = response.body.trim();
		const extra = this.errorExtra(call, { status: response.status });
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
				gatewayMessage: quoteStart(text, 200),
				hint: 'Check the Base URL of the credential: it must be the gateway itself, not a web page in front of it.',
				...extra,
			});
		}
		const body = parsed.value;
		if (typeof body !== 'object' || body === null || Array.isArray(body)) throw notAnObjectError(what, response.status, body, extra);
		if (isErrorShape(body)) throw errorFromParsed(what, response.status, readErrorFields(body), extra);
		return body as T;
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
		const policy: RetryPolicy = call.retry === false ? { ...DEFAULT_RETRY_POLICY, maxRetries: 0 } : { ...DEFAULT_RETRY_POLICY, ...call.retry };
		const what = call.what ?? 'The gateway request';
		const cancel = this.cancelSignal;
		const retries = { other: 0, rateLimit: 0 };
		for (;;) {
			let paced = false;
			await call.pace?.wait(cancel).catch((error) => this.rethrowCancel(error, call));
			await this.pace.wait(cancel).catch((error) => this.rethrowCancel(error, call));
			const attempt = new AttemptSignal(this.attemptDeadline(call), cancel);
			const sentAt = this.pace.now();
			let failure: GatewayError;
			try {
				const response = await this.attempt(call, attempt);
				if (response.statusCode === 429) paced = this.pace.rateLimited(sentAt);
				else if (response.statusCode < 400) this.pace.succeeded();
				if (response.statusCode < 300) return await take(response, attempt);
				failure = await this.statusFailure(response, attempt, call);
			} catch (error) {
				if (!(error instanceof GatewayError)) failure = this.readFailure(error, attempt, call, what);
				else failure = error;
			}
			if (failure.kind === 'cancelled') throw failure;
			const delay = this.retryDelay(failure, retries, policy, call, paced);
			if (delay === undefined) {
				if (policy.idempotent === false && failure.mayHaveActed) {
					failure.hint = `The request may have gone through even so: it was not sent again, so as not to pay twice. ${failure.hint ?? ''}`.trim();
				}
				throw failure;
			}
			// A 429 is about the account, not this item: the pace (shared by the batch) slows down; a
			// Retry-After, or a 429 before anything got through, holds the whole batch.
			if (failure.kind === 'rate_limit' && delay > 0) this.pace.holdFor(delay);
			await pause(delay, cancel).catch((error) => this.rethrowCancel(error, call));
		}
	}

	/** How long to wait before the next attempt, or undefined when this failure is final. */
	private retryDelay(failure: GatewayError, retries: { other: number; rateLimit: number }, policy: RetryPolicy, call: GatewayCall, paced: boolean): number | undefined {
		if (policy.maxRetries === 0) return undefined;
		if (failure.kind === 'rate_limit') {
			// Refused before any work: sent again in its turn of the slowed pace, many times if need
			// be; with no pace yet (nothing got through) after a backoff.
			const retry = retries.rateLimit++;
			if (retry >= policy.maxRateLimitRetries) return undefined;
			if (failure.retryAfterMs !== undefined && failure.retryAfterMs > policy.maxRetryAfterMs) return undefined;
			const wait = failure.retryAfterMs ?? (paced ? 0 : retryDelayMs(retry, undefined, policy));
			if (call.notAfter !== undefined && Date.now() + wait >= call.notAfter) return undefined;
			return wait;
		}
		const retry = retries.other++;
		if (retry >= policy.maxRetries) return undefined;
		// A request that used up its own deadline is not tried again: the deadline is the user's limit.
		const transient = failure.kind === 'network' || (failure.kind === 'server' && [502, 503, 504].includes(failure.status ?? 0));
		if (!transient) return undefined;
		// A paid or state-changing request is sent again only when the gateway surely did not act on it.
		if (policy.idempotent === false && failure.mayHaveActed) return undefined;
		if (failure.retryAfterMs !== undefined && failure.retryAfterMs > policy.maxRetryAfterMs) return undefined;
		const delay = retryDelayMs(retry, failure.retryAfterMs, policy);
		if (call.notAfter !== undefined && Date.now() + delay >= call.notAfter) return undefined;
		return delay;
	}

	private attemptDeadline(call: GatewayCall): number {
		const deadline = call.deadlineMs ?? DEFAULT_DEADLINE_MS;
		if (call.notAfter === undefined) return deadline;
		return Math.max(1, Math.min(deadline, call.notAfter - Date.now()));
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
		if (call.body !== undefined && method !== 'GET') options.body = typeof call.body === 'string' ? call.body : JSON.stringify(call.body);
		const response = (await this.ctx.helpers.httpRequest(options)) as RawResponse;
		attempt.bind(response.body);
		return response;
	}

	/** An error status: its body read (briefly) and classified. */
	private async statusFailure(response: RawResponse, attempt: AttemptSignal, call: GatewayCall): Promise<GatewayError> {
		const what = call.what ?? 'The gateway request';
		let text = '';
		try {
			text = (await this.readBody(response.body, attempt, call, ERROR_BODY_LIMIT, true)).toString('utf8');
		} catch {
			if (attempt.cancelled) return this.cancelled(call);
			// A dropped error body still leaves the status code to report.
		}
		const status = response.statusCode;
		const contentType = headerValue(response.headers, 'content-type');
		const retryAfterMs = parseRetryAfter(response.headers?.['retry-after'], Date.now());
		// The gateway may have done the work before its proxy gave up (502/504) or failed afterwards (500).
		const mayHaveActed = status >= 500 || status === 408;
		const host = hostOf(this.url(call.path));
		const fromFileHost = !isSameOrigin(this.url(call.path), this.baseUrl);
		if (fromFileHost && (status === 403 || status === 404 || status === 410)) {
			const said = /<Message>([^<]{1,200})<\/Message>/.exec(text)?.[1];
			return new GatewayError({
				kind: 'not_found',
				headline: `${what} failed: the link has expired or is gone (${host} answered HTTP ${status})`,
				hint: 'Links to generated files are temporary: download them soon after they are generated.',
				gatewayMessage: said ?? (text.trim().startsWith('<') ? undefined : quoteStart(text, 200) || undefined),
				...this.errorExtra(call, { status }),
			});
		}
		const failure = httpError(what, status, text, contentType, this.errorExtra(call, { status, mayHaveActed, retryAfterMs }));
		// A refusal says the gateway did nothing, whatever the status (a 503 "no channel for this model").
		if (['auth', 'quota', 'rate_limit', 'unknown_model', 'bad_request', 'not_found'].includes(failure.kind)) failure.mayHaveActed = false;
		return failure;
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
		if (attempt.cancelled) return this.cancelled(call);
		const sentBody = call.body !== undefined && (call.method ?? 'POST') !== 'GET';
		if (attempt.timedOut || (isAbortError(error) && !attempt.cancelled)) {
			return new GatewayError({
				kind: 'timeout',
				headline: `${what} failed: no complete answer within ${seconds(attempt.deadlineMs)} s`,
				hint: sentBody ? 'The request may have gone through even so.' : undefined,
				mayHaveActed: sentBody,
				...this.errorExtra(call),
			});
		}
		const failure = networkError(what, error, hostOf(this.url(call.path)), this.errorExtra(call));
		if (!sentBody) failure.mayHaveActed = false;
		else if (failure.mayHaveActed && !failure.hint) failure.hint = 'The request may have gone through even so.';
		return failure;
	}

	private cancelled(call: GatewayCall): GatewayError {
		return new GatewayError({ kind: 'cancelled', headline: `${call.what ?? 'The gateway request'} was cancelled`, mayHaveActed: call.body !== undefined, ...this.errorExtra(call) });
	}

	private rethrowCancel(error: unknown, call: GatewayCall): never {
		if (error instanceof CancelledError || isAbortError(error)) throw this.cancelled(call);
		throw error;
	}
}
