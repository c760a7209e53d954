/**
 * The one way every node talks to the gateway: joins the base URL and the path, authenticates,
 * bounds every request by a hard deadline and the execution's cancel signal, follows redirects
 * itself, retries only what is safe to repeat (one backoff shared by the whole batch), and turns
 * every failure into a typed GatewayError, classified once (callFailure.ts, errors.ts). Nothing here
 * builds an n8n error: that happens once, at the edge (edge.ts), where the text is masked. One
 * attempt and its redirects are attempt.ts's; reading an answer is answer.ts's; when to try again,
 * and what a 429 does to the run's other requests, is retry.ts's.
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
import type { IDataObject, IExecuteFunctions, IHttpRequestMethods, IHttpRequestOptions, ILoadOptionsFunctions, INode } from 'n8n-workflow';

import { CREDENTIAL_TYPE, readGatewayCredential } from '../credential/settings';
import type { GatewaySettings } from '../credential/settings';
import { GatewayError, failureOf } from '../failures/errors';
import { SecretMasker } from '../credential/secrets';
import { isSameOrigin, joinUrl } from '../credential/url';
import { jsonObjectAnswer, readBody } from './answer';
import type { GatewayResponse } from './answer';
import { AttemptSignal, bodyType, followRedirects, sendOnce } from './attempt';
import type { ByteStream, IdleLimit, RawResponse, RequestBody } from './attempt';
import { CallFailures, callExtra } from './callFailure';
import { fileWaitScope } from './fileWait';
import { SendPace } from './pace';
import { DEFAULT_RETRY_POLICY, decideRetry, giveUpWords, heldTooLongWords, secondsText } from './retry';
import type { RetryCount, RetryDecision, RetryPolicy } from './retry';
import { PastDeadline, deadlineSignal, pause } from './timing';
import type { DeadlineScope } from './timing';

export { callExtra, jsonObjectAnswer };
export { headerValue } from './attempt';
export type { ByteStream, GatewayResponse };

type GatewayContext = IExecuteFunctions | ILoadOptionsFunctions;

export interface GatewayCall {
	method?: IHttpRequestMethods;
	/** An endpoint path such as `/v1/models`, joined to the base URL, or a whole http(s) link. */
	path: string;
	/** An object is sent as JSON; a string is sent as it is (already-serialised JSON); a MultipartForm as multipart/form-data. */
	body?: RequestBody;
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
	/**
	 * A streamed answer's idle limit (`stream` only): silence this long, from the request sent (one
	 * with files: from its answer's head) to the answer's last byte, ends the attempt. One not
	 * shorter than what is left of the deadline is none: the deadline comes first.
	 */
	idle?: IdleLimit;
	/** Retry tuning, or false for a single attempt. `idempotent: false` for paid or state-changing requests. */
	retry?: Partial<RetryPolicy> | false;
	/** For a paid request (`idempotent: false`): its hint when it may have acted, what may exist and where to check. */
	ifActed?: string;
	/** What the call does, for messages: "Creating the plant". */
	what?: string;
	/**
	 * A 429 with a Retry-After holds only this call: it waits that long in its own slot, while the
	 * run's other requests go on, neither held nor slowed (retry.ts decides). A bare 429 still cuts the pace.
	 */
	retryAfterHoldsCallOnly?: boolean;
	/** Fields every error of this call keeps (e.g. a task id). */
	errorFields?: Record<string, unknown>;
}

export const DEFAULT_DEADLINE_MS = 300_000;

/** An item's deadline as a call takes it: when (this side's time) and its name as the user knows it. */
export type ItemLimit = Required<Pick<GatewayCall, 'notAfter' | 'limitName'>>;

/** The fields of a call bounded by an item's deadline of `ms` from now, named as the user knows it. */
export function itemDeadline(ms: number, limitName: string): ItemLimit {
	return { notAfter: Date.now() + ms, limitName };
}

/** A call's deadline: when, what it is called, and how long it was at the call's start. */
interface CallLimit {
	notAfter: number;
	name: string;
	ms: number;
}

/** A JSON answer larger than this is not a gateway answer of any endpoint here. */
const JSON_BODY_LIMIT = 64 * 1024 * 1024;

/**
 * An answer stream, and what a failure while reading it is (classified once; `readerAdvice`: what
 * the reader says to do when the answer broke off, e.g. how to download again).
 */
export type OpenAnswer = GatewayResponse<ByteStream> & {
	failure: (error: unknown, readerAdvice?: string, arrived?: string) => GatewayError;
	/** A sign of life for the call's idle limit (GatewayCall.idle): the reader calls it for each chunk it reads. */
	alive: () => void;
};

/** Consumes a 2xx answer within the attempt's deadline. */
type Take<R> = (response: RawResponse, attempt: AttemptSignal, failures: CallFailures) => Promise<R>;

/**
 * The error a call gives up with: its failure as classified, its headline followed by what was
 * waited (how long, how many tries, or that the gateway asks for longer than the limit leaves).
 */
function gaveUp(failure: GatewayError, decision: RetryDecision, what: string, limit: CallLimit, tries: number, waitedMs: number): GatewayError {
	const words = !decision.retry && decision.why === 'spent' && tries === 1 ? undefined : giveUpWords(decision, failure, tries, waitedMs, limit.name);
	if (words === undefined) return failure;
	// "The gateway asks to retry after 60 s, more than …" says the rate limit all by itself.
	const asks = failure.kind === 'rate_limit' && words.startsWith('the gateway asks');
	return failure.with({ headline: asks ? `${what} failed: ${words}` : `${failure.headline}; ${words}` });
}

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
	fileWaits(notAfter: number): DeadlineScope {
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
		// The whole answer as text, within the attempt; read as JSON once the call is done (not retried for what it says).
		const response = await this.send(call, async (answer, attempt, failures) => {
			const bound = { limit: JSON_BODY_LIMIT, alive: () => attempt.alive(), what: failures.what, extra: failures.extra(), failure: (error: unknown) => failures.noAnswer(error, attempt) };
			return { status: answer.statusCode, headers: answer.headers, body: (await readBody(answer.body, bound)).toString('utf8') };
		});
		return jsonObjectAnswer<T>(response, call.what ?? 'The gateway request', callExtra(call, { status: response.status }), parse);
	}

	/**
	 * Opens a download. The key and custom headers go only to links on the gateway's own origin; a
	 * link anywhere else (a CDN) is fetched without them, and so is every redirect to another origin.
	 * A link that answers 403, 404 or 410 has expired: `nextStep` says how to get a fresh one.
	 */
	async download(link: string, call: Omit<GatewayCall, 'path' | 'method' | 'body'>, nextStep?: string): Promise<OpenAnswer> {
		return await this.stream({ ...call, path: link, method: 'GET' }, { nextStep });
	}

	/**
	 * Sends a request and returns the open answer stream (server-sent events, a download). The
	 * stream is destroyed when the call's deadline passes or the run is stopped; `failure` turns what
	 * then breaks the reading into a GatewayError. `fileLink`: the call is a download (see download).
	 */
	async stream(call: GatewayCall, fileLink?: { nextStep?: string }): Promise<OpenAnswer> {
		return await this.send(
			call,
			async (response, attempt, failures) => {
				const done = () => attempt.answerDone();
				response.body.once('end', done);
				response.body.once('close', done);
				return {
					status: response.statusCode,
					headers: response.headers,
					body: response.body,
					failure: (error: unknown, readerAdvice?: string, arrived?: string) => failures.noAnswer(error, attempt, call.what ?? 'Reading the answer', readerAdvice, arrived),
					alive: () => attempt.alive(),
				};
			},
			fileLink,
		);
	}

	/** The retry loop around one call; `take` consumes a 2xx answer within the attempt's deadline. */
	private async send<R>(call: GatewayCall, take: Take<R>, fileLink?: { nextStep?: string }): Promise<R> {
		const policy: RetryPolicy = call.retry === false ? { ...DEFAULT_RETRY_POLICY, maxRetries: 0, maxRateLimitRetries: 0 } : { ...DEFAULT_RETRY_POLICY, ...call.retry };
		const started = Date.now();
		const limit = this.limitOf(call, started);
		const failures = new CallFailures(call, {
			url: this.url(call.path),
			baseUrl: this.baseUrl,
			paid: policy.idempotent === false,
			fileLink,
			runEnded: () => this.waitsEnd.aborted && this.cancelSignal?.aborted !== true,
		});
		const count: RetryCount = { rateLimit: 0, other: 0 };
		let last: GatewayError | undefined;
		for (let tries = 1; ; tries++) {
			await this.waitForTurn(failures, limit, last);
			const attempt = this.newAttempt(call, limit);
			const sentAt = this.pace.now();
			const outcome = await this.tryOnce(call, attempt, failures, take);
			if ('value' in outcome) return outcome.value;
			const failure = outcome.failure;
			if (failure.kind === 'cancelled') throw failure;
			const shared = this.sharedPace();
			const pace = shared && { cut: () => shared.rateLimited(sentAt) };
			const decision = decideRetry(failure, count, policy, { now: Date.now(), notAfter: limit.notAfter, pace, waitsAlone: call.retryAfterHoldsCallOnly });
			if (decision.holdAllMs !== undefined) shared?.holdFor(decision.holdAllMs);
			if (!decision.retry) throw gaveUp(failure, decision, failures.what, limit, tries, Date.now() - started);
			if (failure.kind === 'rate_limit') count.rateLimit++;
			else count.other++;
			last = failure;
			await pause(decision.waitMs, this.waitsEnd).catch(() => {
				throw failures.cancelled(failure.mayHaveActed);
			});
		}
	}

	/** One attempt: sent, its redirects followed, and its answer taken or its failure classified. */
	private async tryOnce<R>(call: GatewayCall, attempt: AttemptSignal, failures: CallFailures, take: Take<R>): Promise<{ value: R } | { failure: GatewayError }> {
		const method = call.method ?? (call.body !== undefined ? 'POST' : 'GET');
		const route = { url: this.url(call.path), method, baseUrl: this.baseUrl, what: failures.what, extra: failures.extra() };
		const http = (options: IHttpRequestOptions) => this.ctx.helpers.httpRequest(options);
		try {
			const response = await followRedirects(route, async (url) => await sendOnce(http, this.requestOptions(url, method, call, attempt), call.body, attempt));
			if (response.statusCode < 400) this.sharedPace()?.succeeded();
			if (response.statusCode < 300) return { value: await take(response, attempt, failures) };
			return { failure: await failures.status(response, attempt) };
		} catch (error) {
			// A request body that could not be read as checked: the item's own error, never retried.
			if (attempt.bodyFailure) throw attempt.bodyFailure;
			return { failure: failures.noAnswer(error, attempt) };
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
	 * Waits for the call's turn (the shared hold after a 429, the execution's pace) within its
	 * deadline: a turn that would come after it fails the call at once, saying so. Nothing starts
	 * once the run is over.
	 */
	private async waitForTurn(failures: CallFailures, limit: CallLimit, last: GatewayError | undefined): Promise<void> {
		const mayHaveActed = last?.mayHaveActed ?? false;
		if (this.waitsEnd.aborted) throw failures.cancelled(mayHaveActed);
		const deadline = deadlineSignal(limit.notAfter - Date.now());
		const signal = AbortSignal.any([this.waitsEnd, deadline]);
		let waitError: unknown;
		try {
			await this.sharedPace()?.wait(signal, limit.notAfter);
		} catch (error) {
			waitError = error;
		}
		if (this.waitsEnd.aborted) throw failures.cancelled(mayHaveActed);
		if (waitError === undefined) {
			// A request begun at its deadline would be cut at once, after the gateway may have started on it.
			if (Date.now() < limit.notAfter) return;
			throw new GatewayError({ kind: 'timeout', headline: `${failures.what} failed: ${limit.name} ran out before it could be sent`, mayHaveActed, ...failures.extra() });
		}
		if (!(waitError instanceof PastDeadline) && !deadline.aborted) throw waitError;
		// Known at once (the hold or the slot comes too late), or the deadline came while queued.
		const words =
			waitError instanceof PastDeadline
				? heldTooLongWords(waitError.reason, waitError.waitMs, waitError.leftMs, limit.name)
				: `the gateway's rate limit kept this request waiting for its turn until the end of ${limit.name}`;
		throw failureOf('rate_limit', { headline: `${failures.what} failed: ${words}`, mayHaveActed, ...failures.extra() });
	}

	/** One attempt's limit: its own deadline, cut to what is left of the call's. */
	private newAttempt(call: GatewayCall, limit: CallLimit): AttemptSignal {
		const own = call.deadlineMs ?? DEFAULT_DEADLINE_MS;
		const left = limit.notAfter - Date.now();
		// Without an item deadline, the call's own limit is the one the user set (its name, if any).
		const ownName = call.notAfter === undefined ? call.limitName : undefined;
		const idle = (ms: number) => (call.idle !== undefined && call.idle.ms < ms ? call.idle : undefined);
		if (left >= own) return new AttemptSignal(own, this.stop, own, undefined, ownName, idle(own));
		// A limit that began before this call (the item's) is named, not the part of it left now.
		const outer = call.notAfter !== undefined && call.limitName !== undefined ? limit.name : undefined;
		return new AttemptSignal(Math.max(1, left), this.stop, Math.min(own, limit.ms), outer, ownName, idle(left));
	}

	/** n8n's request options for one hop: the answer as a stream, every status and redirect returned. */
	private requestOptions(url: string, method: IHttpRequestMethods, call: GatewayCall, attempt: AttemptSignal): IHttpRequestOptions {
		return {
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
	}

	/** The headers of a request to `url`: the key and custom headers only for the gateway's own origin. */
	private headersFor(url: string, call: GatewayCall): Record<string, string> {
		const headers: Record<string, string> = {};
		if (call.body !== undefined) {
			headers['Content-Type'] = bodyType(call.body);
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
}
