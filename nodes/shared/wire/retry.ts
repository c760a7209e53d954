/**
 * When to send a failed gateway call again, how long to wait first, and what its failure does to the
 * run's other requests: pure decisions, the one rule the transport follows (and the unit tests check).
 * - One list says how a failure passes (`howItPasses`): the transport sends again what passes soon;
 *   a video wait checks again what passes later too.
 * - Retried: 429 (relays send it with an empty body and no Retry-After), 502, 503 and 504, and
 *   dropped connections. Never retried: other 4xx, and 503 `model_not_found`, which is permanent.
 *   A paid request is repeated only when the gateway surely did not act.
 * - A 429 slows the run's pace, and a Retry-After holds every request of the run, unless the call
 *   waits it out alone.
 * - Every wait stays inside the call's deadline: a wait that would pass it ends the call at once.
 */
import type { GatewayError } from '../failures/errors';

export interface RetryPolicy {
	/** Retries after the first attempt, for failures other than 429. */
	maxRetries: number;
	/** Retries after 429s: each waits its turn in the execution's slowed pace, so more are allowed. */
	maxRateLimitRetries: number;
	baseDelayMs: number;
	maxDelayMs: number;
	/** A Retry-After longer than this is not waited for: the error is reported instead. */
	maxRetryAfterMs: number;
	/** false for a request that starts paid work (a video task): see isSafeToRepeat. */
	idempotent?: boolean;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
	maxRetries: 4,
	maxRateLimitRetries: 20,
	baseDelayMs: 1000,
	maxDelayMs: 30_000,
	maxRetryAfterMs: 120_000,
};

/** What a failed attempt tells the retry rule. */
export type FailureFacts = Pick<GatewayError, 'kind' | 'status' | 'mayHaveActed' | 'retryAfterMs'>;

/** Retries spent so far, by reason. */
export interface RetryCount {
	rateLimit: number;
	other: number;
}

/**
 * How a failure may pass, the one list: `soon` (a rate limit, a proxy's 502/503/504, a dropped
 * connection: the same request may get through after a short wait), `later` (another server
 * failure, a timeout, an answer this node cannot use: sent again at once it would most likely fail
 * the same way, but a later check of a running task may get through), or `never` (a refusal: the
 * key, the quota, an unknown model or item, a bad request; a redirect; a Stop; a failed task).
 */
export function howItPasses(failure: Pick<FailureFacts, 'kind' | 'status'>): 'soon' | 'later' | 'never' {
	if (failure.kind === 'network' || failure.kind === 'rate_limit') return 'soon';
	if (failure.kind === 'server') return failure.status === 502 || failure.status === 503 || failure.status === 504 ? 'soon' : 'later';
	return failure.kind === 'timeout' || failure.kind === 'protocol' ? 'later' : 'never';
}

/**
 * Whether a failed attempt may be sent again at all. A request that is not idempotent is repeated
 * only when the gateway certainly did not act on it (a 429, a refused connection): after a
 * 502/504 or a dropped connection the task may already exist, and a repeat would pay twice.
 */
export function isSafeToRepeat(policy: Pick<RetryPolicy, 'idempotent'>, failure: Pick<FailureFacts, 'mayHaveActed'>): boolean {
	return policy.idempotent !== false || !failure.mayHaveActed;
}

/**
 * Parses `Retry-After` (seconds or an HTTP date) into milliseconds from `now`. A value that is
 * neither (negative, words) is no Retry-After at all; a date in the past is 0.
 */
export function parseRetryAfter(header: unknown, now: number): number | undefined {
	if (header === undefined || header === null) return undefined;
	const value = String(Array.isArray(header) ? header[0] : header).trim();
	if (value === '') return undefined;
	if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
	// Date.parse reads "-5" as the year -5: only a real HTTP date (it has a letter) counts.
	if (!/[a-z]/i.test(value)) return undefined;
	const date = Date.parse(value);
	return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Delay before retry number `retry` (0-based): Retry-After when the gateway asks for a real wait;
 * none after a 429 the execution's pace already spaces out (`paced`); else exponential backoff
 * with jitter (between half and all of the step) so that a batch of items does not retry in
 * lock-step. A Retry-After of 0 (or a date in the past) is no reason to hammer the gateway: it
 * backs off like none, whatever the status.
 */
export function retryDelayMs(retry: number, retryAfterMs: number | undefined, policy: RetryPolicy = DEFAULT_RETRY_POLICY, random: () => number = Math.random, paced = false): number {
	if (retryAfterMs !== undefined && retryAfterMs > 0) return retryAfterMs;
	if (paced) return 0;
	const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
	return Math.round(step * (0.5 + random() * 0.5));
}

export type RetryDecision =
	| { retry: true; waitMs: number }
	/** `final`: waiting does not help; `unsafe`: a paid request that may have acted; `spent`: every try used. */
	| { retry: false; why: 'final' | 'unsafe' | 'spent' }
	/** The gateway asks for a wait longer than any this node makes. */
	| { retry: false; why: 'too_long'; waitMs: number; maxMs: number }
	/** The wait would pass the call's deadline: `leftMs` is what was left of it. */
	| { retry: false; why: 'past_deadline'; waitMs: number; leftMs: number };

export interface RetryMoment {
	now: number;
	/** The call's deadline (epoch ms): no wait may pass it. */
	notAfter: number;
	/**
	 * The execution's pace, when the call goes through it: `cut()` slows it after a 429 and says
	 * whether it now spaces requests out (then a bare 429 needs no backoff of its own).
	 */
	pace?: { cut(): boolean };
	/** The call waits out a Retry-After alone (GatewayCall.retryAfterHoldsCallOnly). */
	waitsAlone?: boolean;
	random?: () => number;
}

/** A retry decision, and how long every request of the run holds (`holdAllMs`, when it does). */
export type RetryVerdict = RetryDecision & { holdAllMs?: number };

/**
 * Whether to try a failed call again, and after how long: the one retry rule; with what the
 * failure does to the run's other requests. A 429 cuts the pace, and a rate limit holds every
 * request of the run for its Retry-After (or this call's backoff): it is about the account, not
 * this item. A call that waits a Retry-After out alone does neither: a gateway that refuses a share
 * of requests at any rate would otherwise cut the pace at every refusal.
 */
export function decideRetry(failure: FailureFacts, count: RetryCount, policy: RetryPolicy, moment: RetryMoment): RetryVerdict {
	const asked = failure.retryAfterMs !== undefined && failure.retryAfterMs > 0;
	const alone = moment.waitsAlone === true && asked;
	const paced = failure.status === 429 && !alone && moment.pace !== undefined ? moment.pace.cut() : false;
	const decision = retryOrNot(failure, count, policy, { ...moment, paced });
	const holds = failure.kind === 'rate_limit' && !alone && moment.pace !== undefined;
	const holdAllMs = !holds ? 0 : asked ? (failure.retryAfterMs as number) : decision.retry ? decision.waitMs : 0;
	return holdAllMs > 0 ? { ...decision, holdAllMs } : decision;
}

function retryOrNot(failure: FailureFacts, count: RetryCount, policy: RetryPolicy, moment: { now: number; notAfter: number; paced: boolean; random?: () => number }): RetryDecision {
	if (howItPasses(failure) !== 'soon') return { retry: false, why: 'final' };
	if (!isSafeToRepeat(policy, failure)) return { retry: false, why: 'unsafe' };
	const rateLimited = failure.kind === 'rate_limit';
	if (rateLimited ? count.rateLimit >= policy.maxRateLimitRetries : count.other >= policy.maxRetries) return { retry: false, why: 'spent' };
	const waitMs = retryDelayMs(rateLimited ? count.rateLimit : count.other, failure.retryAfterMs, policy, moment.random, rateLimited && moment.paced);
	// The user's limit first: it is what ends the wait, whatever this node would wait at most.
	if (moment.now + waitMs >= moment.notAfter) return { retry: false, why: 'past_deadline', waitMs, leftMs: Math.max(0, moment.notAfter - moment.now) };
	if (failure.retryAfterMs !== undefined && failure.retryAfterMs > policy.maxRetryAfterMs) return { retry: false, why: 'too_long', waitMs: failure.retryAfterMs, maxMs: policy.maxRetryAfterMs };
	return { retry: true, waitMs };
}

/** `1000` -> `1`, `250` -> `0.25`: seconds as a person writes them. */
export function secondsText(ms: number): string {
	return String(Math.round(ms / 10) / 100);
}

/** A wait the gateway asked for: whole seconds from 10 s on (an HTTP date is never exact), else as secondsText. */
function waitText(ms: number): string {
	return ms >= 10_000 ? String(Math.round(ms / 1000)) : secondsText(ms);
}

/** `4321` -> `4.3`: a time left, to a tenth of a second. */
function leftText(ms: number): string {
	return String(Math.max(0, Math.floor(ms / 100) / 10));
}

/** What a call that stopped retrying tried, in words: "3 tries in 4.2 s". */
export function triesText(tries: number, waitedMs: number): string {
	return `${tries} ${tries === 1 ? 'try' : 'tries'} in ${secondsText(waitedMs)} s`;
}

/**
 * Why a retried call gave up, to follow its headline: what was waited (how long, how many tries),
 * or that the gateway asked for more than the limit leaves. Undefined when nothing is to be said
 * (a failure that waiting does not help).
 */
export function giveUpWords(decision: RetryDecision, failure: Pick<FailureFacts, 'retryAfterMs' | 'kind'>, tries: number, waitedMs: number, limitName: string): string | undefined {
	if (decision.retry) return undefined;
	const asked = failure.retryAfterMs !== undefined && failure.retryAfterMs > 0;
	switch (decision.why) {
		case 'past_deadline':
			if (asked) return `the gateway asks to retry after ${waitText(decision.waitMs)} s, more than the ${leftText(decision.leftMs)} s left of ${limitName}`;
			return `${triesText(tries, waitedMs)}; the next would come after the ${leftText(decision.leftMs)} s left of ${limitName}`;
		case 'too_long':
			return `the gateway asks to retry after ${waitText(decision.waitMs)} s, longer than this node waits for a retry (${secondsText(decision.maxMs)} s)`;
		case 'spent':
			return waitedMs > 0 ? `${triesText(tries, waitedMs)}, and waiting did not help` : triesText(tries, waitedMs);
		default:
			return undefined;
	}
}

/**
 * Why a request was not sent at all: the run's shared hold (a Retry-After another request got) or
 * its pace would keep it past its limit.
 */
export function heldTooLongWords(reason: 'hold' | 'turn', waitMs: number, leftMs: number, limitName: string): string {
	if (reason === 'hold') {
		return `the gateway asks to retry after ${waitText(waitMs)} s (it rate-limited another request of this run), more than the ${leftText(leftMs)} s left of ${limitName}`;
	}
	return `the gateway's rate limit leaves this request its turn in ${secondsText(waitMs)} s, more than the ${leftText(leftMs)} s left of ${limitName}`;
}
