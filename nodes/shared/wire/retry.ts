/**
 * When to retry a gateway call and how long to wait: pure decisions, unit-tested.
 * Retried: 429 (relays send it with an empty body and no Retry-After), 502, 503 and 504, and
 * dropped connections. Never retried: other 4xx, and 503 `model_not_found`, which is permanent.
 */
import type { GatewayErrorKind } from '../failures/errors';

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

export function isRetryableStatus(status: number, kind: GatewayErrorKind): boolean {
	if (kind === 'unknown_model') return false;
	return status === 429 || status === 502 || status === 503 || status === 504;
}

/**
 * Whether a failed attempt may be sent again at all. A request that is not idempotent is repeated
 * only when the gateway certainly did not act on it (a 429, or a refused connection): after a
 * 502/504 or a dropped connection the task may already exist, and a repeat would pay twice.
 */
export function isSafeToRepeat(policy: Pick<RetryPolicy, 'idempotent'>, status?: number, networkCode?: string): boolean {
	if (policy.idempotent !== false) return true;
	return status === 429 || networkCode === 'ECONNREFUSED';
}

/** Parses `Retry-After` (seconds or an HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(header: unknown, now: number): number | undefined {
	if (header === undefined || header === null) return undefined;
	const value = String(Array.isArray(header) ? header[0] : header).trim();
	if (value === '') return undefined;
	if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
	const date = Date.parse(value);
	return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Delay before retry number `retry` (0-based): Retry-After when the gateway gave one, else
 * exponential backoff with jitter (between half and all of the step) so that a batch of items
 * does not retry in lock-step.
 */
export function retryDelayMs(
	retry: number,
	retryAfterMs: number | undefined,
	policy: RetryPolicy = DEFAULT_RETRY_POLICY,
	random: () => number = Math.random,
): number {
	if (retryAfterMs !== undefined) return retryAfterMs;
	const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
	return Math.round(step * (0.5 + random() * 0.5));
}
