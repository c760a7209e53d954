import { DEFAULT_RETRY_POLICY, decideRetry, giveUpWords, howItPasses, isSafeToRepeat, parseRetryAfter, retryDelayMs } from '../../nodes/shared/wire/retry';
import type { FailureFacts, RetryMoment } from '../../nodes/shared/wire/retry';
import { PastDeadline } from '../../nodes/shared/wire/timing';
import { SendPace } from '../../nodes/shared/wire/pace';
import { createFakeClock } from '../helpers/fakeClock';

const isSoon = (failure: Parameters<typeof howItPasses>[0]) => howItPasses(failure) === 'soon';

describe('retry decisions', () => {
	it('retries 429 and gateway failures, never other 4xx nor an unknown model', () => {
		expect(isSoon({ kind: 'rate_limit', status: 429 })).toBe(true);
		for (const status of [502, 503, 504]) expect(isSoon({ kind: 'server', status })).toBe(true);
		for (const status of [400, 401, 403, 404, 422]) expect(isSoon({ kind: 'bad_request', status })).toBe(false);
		expect(isSoon({ kind: 'server', status: 500 })).toBe(false);
		expect(isSoon({ kind: 'unknown_model', status: 503 })).toBe(false);
		// A used-up quota comes as a 429 too: waiting does not help.
		expect(isSoon({ kind: 'quota', status: 429 })).toBe(false);
		expect(isSoon({ kind: 'network' })).toBe(true);
		expect(isSoon({ kind: 'timeout' })).toBe(false);
	});

	it('repeats a paid request only when the gateway surely did not act', () => {
		expect(isSafeToRepeat({ idempotent: false }, { mayHaveActed: false })).toBe(true);
		expect(isSafeToRepeat({ idempotent: false }, { mayHaveActed: true })).toBe(false);
		expect(isSafeToRepeat({}, { mayHaveActed: true })).toBe(true);
	});

	it('reads Retry-After as seconds or as a date', () => {
		const now = Date.parse('2026-11-22T12:00:00Z');
		expect(parseRetryAfter('3', now)).toBe(3000);
		expect(parseRetryAfter('Sun, 22 Nov 2026 12:00:10 GMT', now)).toBe(10_000);
		expect(parseRetryAfter(undefined, now)).toBeUndefined();
		expect(parseRetryAfter('soon', now)).toBeUndefined();
	});

	it('reads a negative Retry-After as none (Date.parse would read it as a year), a past date as 0', () => {
		const now = Date.parse('2026-11-22T12:00:00Z');
		expect(parseRetryAfter('-5', now)).toBeUndefined();
		expect(parseRetryAfter('-1.5', now)).toBeUndefined();
		expect(parseRetryAfter('Thu, 01 Jan 1970 00:00:00 GMT', now)).toBe(0);
		expect(parseRetryAfter('0', now)).toBe(0);
		expect(parseRetryAfter('99999999', now)).toBe(99_999_999_000);
	});

	it('backs off exponentially with jitter, capped, and prefers Retry-After', () => {
		expect(retryDelayMs(0, undefined, DEFAULT_RETRY_POLICY, () => 1)).toBe(1000);
		expect(retryDelayMs(0, undefined, DEFAULT_RETRY_POLICY, () => 0)).toBe(500);
		expect(retryDelayMs(3, undefined, DEFAULT_RETRY_POLICY, () => 1)).toBe(8000);
		expect(retryDelayMs(10, undefined, DEFAULT_RETRY_POLICY, () => 1)).toBe(DEFAULT_RETRY_POLICY.maxDelayMs);
		expect(retryDelayMs(2, 7000, DEFAULT_RETRY_POLICY, () => 1)).toBe(7000);
		// A Retry-After of 0 (or a past date) asks for no wait: a 503 saying so is backed off all the same.
		expect(retryDelayMs(0, 0, DEFAULT_RETRY_POLICY, () => 1)).toBe(1000);
		expect(decideRetry({ kind: 'server', status: 503, mayHaveActed: false, retryAfterMs: 0 }, { rateLimit: 0, other: 0 }, DEFAULT_RETRY_POLICY, { now: 0, notAfter: 1e9, random: () => 1 })).toEqual({ retry: true, waitMs: 1000 });
	});
});

describe('how a failure passes: the one list the transport and the video wait read', () => {
	it('says soon for what a short wait may fix, later for what a later check may, never for a refusal', () => {
		const soon = [{ kind: 'rate_limit', status: 429 }, { kind: 'server', status: 502 }, { kind: 'server', status: 503 }, { kind: 'server', status: 504 }, { kind: 'network' }] as const;
		const later = [{ kind: 'server', status: 500 }, { kind: 'server', status: 200 }, { kind: 'timeout' }, { kind: 'timeout', status: 408 }, { kind: 'protocol', status: 200 }] as const;
		const never = [{ kind: 'auth', status: 401 }, { kind: 'quota', status: 429 }, { kind: 'unknown_model', status: 503 }, { kind: 'not_found', status: 404 }, { kind: 'bad_request', status: 400 }, { kind: 'too_large', status: 413 }, { kind: 'redirect', status: 302 }, { kind: 'cancelled' }, { kind: 'task_failed' }, { kind: 'storage' }] as const;
		for (const failure of soon) expect([failure, howItPasses(failure)]).toEqual([failure, 'soon']);
		for (const failure of later) expect([failure, howItPasses(failure)]).toEqual([failure, 'later']);
		for (const failure of never) expect([failure, howItPasses(failure)]).toEqual([failure, 'never']);
	});
});

describe('what a 429 does to the run, decided with its retry', () => {
	const none = { rateLimit: 0, other: 0 };
	const rateLimit = (retryAfterMs?: number, status = 429): FailureFacts => ({ kind: 'rate_limit', status, mayHaveActed: false, retryAfterMs });
	function withPace(spaces: boolean, extra: Partial<RetryMoment> = {}) {
		const cuts: number[] = [];
		const moment: RetryMoment = { now: 0, notAfter: 1e9, random: () => 1, pace: { cut: () => (cuts.push(1), spaces) }, ...extra };
		return { moment, cuts };
	}

	it('a bare 429 cuts the pace; once the pace spaces requests out, it waits for its turn there and holds no one', () => {
		const { moment, cuts } = withPace(true);
		expect(decideRetry(rateLimit(), none, DEFAULT_RETRY_POLICY, moment)).toEqual({ retry: true, waitMs: 0 });
		expect(cuts).toHaveLength(1);
	});

	it('a bare 429 the pace does not space out backs the whole run off for this call`s backoff', () => {
		const { moment } = withPace(false);
		expect(decideRetry(rateLimit(), none, DEFAULT_RETRY_POLICY, moment)).toEqual({ retry: true, waitMs: 1000, holdAllMs: 1000 });
	});

	it('a Retry-After holds every request of the run for that long, even when the call gives up', () => {
		expect(decideRetry(rateLimit(2000), none, DEFAULT_RETRY_POLICY, withPace(true).moment)).toEqual({ retry: true, waitMs: 2000, holdAllMs: 2000 });
		const tooLong = decideRetry(rateLimit(600_000), none, DEFAULT_RETRY_POLICY, withPace(true).moment);
		expect(tooLong).toEqual({ retry: false, why: 'too_long', waitMs: 600_000, maxMs: DEFAULT_RETRY_POLICY.maxRetryAfterMs, holdAllMs: 600_000 });
	});

	it('a call that waits a Retry-After out alone neither cuts the pace nor holds the others; a bare 429 still cuts it', () => {
		const alone = withPace(true, { waitsAlone: true });
		expect(decideRetry(rateLimit(2000), none, DEFAULT_RETRY_POLICY, alone.moment)).toEqual({ retry: true, waitMs: 2000 });
		expect(alone.cuts).toHaveLength(0);
		expect(decideRetry(rateLimit(), none, DEFAULT_RETRY_POLICY, alone.moment)).toEqual({ retry: true, waitMs: 0 });
		expect(alone.cuts).toHaveLength(1);
	});

	it('a 429 that is a used-up quota cuts the pace but holds no one, and is not retried', () => {
		const { moment, cuts } = withPace(true);
		expect(decideRetry({ kind: 'quota', status: 429, mayHaveActed: false, retryAfterMs: 5000 }, none, DEFAULT_RETRY_POLICY, moment)).toEqual({ retry: false, why: 'final' });
		expect(cuts).toHaveLength(1);
	});

	it('a call paced by its owner (no pace) neither cuts nor holds anything', () => {
		expect(decideRetry(rateLimit(2000), none, DEFAULT_RETRY_POLICY, { now: 0, notAfter: 1e9, random: () => 1 })).toEqual({ retry: true, waitMs: 2000 });
		expect(decideRetry({ kind: 'server', status: 503, mayHaveActed: false }, none, DEFAULT_RETRY_POLICY, withPace(true).moment)).toEqual({ retry: true, waitMs: 1000 });
	});
});

describe('the retry decision', () => {
	const rateLimit = (retryAfterMs?: number): FailureFacts => ({ kind: 'rate_limit', status: 429, mayHaveActed: false, retryAfterMs });
	const at = (now: number, notAfter: number): RetryMoment => ({ now, notAfter, random: () => 1 });
	const none = { rateLimit: 0, other: 0 };

	it('waits a Retry-After that fits in the deadline', () => {
		expect(decideRetry(rateLimit(2000), none, DEFAULT_RETRY_POLICY, at(0, 5000))).toEqual({ retry: true, waitMs: 2000 });
	});

	it('gives up at once on a Retry-After longer than what is left, and says so', () => {
		const decision = decideRetry(rateLimit(60_000), none, DEFAULT_RETRY_POLICY, at(1000, 5000));
		expect(decision).toEqual({ retry: false, why: 'past_deadline', waitMs: 60_000, leftMs: 4000 });
		expect(giveUpWords(decision, rateLimit(60_000), 1, 0, 'Timeout (Seconds)')).toBe('the gateway asks to retry after 60 s, more than the 4 s left of Timeout (Seconds)');
	});

	it('gives up when the backoff would pass the deadline, saying how long and how often it tried', () => {
		const decision = decideRetry(rateLimit(), { rateLimit: 3, other: 0 }, DEFAULT_RETRY_POLICY, at(4000, 5000));
		expect(decision).toEqual({ retry: false, why: 'past_deadline', waitMs: 8000, leftMs: 1000 });
		expect(giveUpWords(decision, rateLimit(), 4, 4000, 'Timeout (Seconds)')).toBe('4 tries in 4 s; the next would come after the 1 s left of Timeout (Seconds)');
	});

	it('backs off after a Retry-After of 0 instead of hammering, and not at all once the pace spaces requests', () => {
		expect(retryDelayMs(0, 0, DEFAULT_RETRY_POLICY, () => 1, false)).toBe(1000);
		expect(retryDelayMs(2, undefined, DEFAULT_RETRY_POLICY, () => 1, false)).toBe(4000);
		expect(retryDelayMs(2, undefined, DEFAULT_RETRY_POLICY, () => 1, true)).toBe(0);
		expect(retryDelayMs(2, 3000, DEFAULT_RETRY_POLICY, () => 1, true)).toBe(3000);
	});

	it('says "waiting did not help" only after waiting', () => {
		const spent = decideRetry(rateLimit(), { rateLimit: 20, other: 0 }, DEFAULT_RETRY_POLICY, at(0, 1e9));
		expect(spent).toEqual({ retry: false, why: 'spent' });
		expect(giveUpWords(spent, rateLimit(), 21, 95_000, 'x')).toBe('21 tries in 95 s, and waiting did not help');
		expect(giveUpWords(spent, rateLimit(), 3, 0, 'x')).toBe('3 tries in 0 s');
	});

	it('refuses a Retry-After longer than any wait of this node, whatever the deadline', () => {
		const decision = decideRetry(rateLimit(600_000), none, DEFAULT_RETRY_POLICY, at(0, 1e9));
		// With a limit shorter than the wait, the limit is what the words name.
		expect(decideRetry(rateLimit(600_000), none, DEFAULT_RETRY_POLICY, at(0, 5000))).toMatchObject({ why: 'past_deadline' });
		expect(decision).toEqual({ retry: false, why: 'too_long', waitMs: 600_000, maxMs: DEFAULT_RETRY_POLICY.maxRetryAfterMs });
		expect(giveUpWords(decision, rateLimit(600_000), 1, 0, 'x')).toBe('the gateway asks to retry after 600 s, longer than this node waits for a retry (120 s)');
	});

	it('never repeats a paid request that may have acted, nor a final failure', () => {
		const paid = { ...DEFAULT_RETRY_POLICY, idempotent: false };
		expect(decideRetry({ kind: 'network', mayHaveActed: true }, none, paid, at(0, 1e9))).toEqual({ retry: false, why: 'unsafe' });
		expect(decideRetry({ kind: 'network', mayHaveActed: false }, none, paid, at(0, 1e9))).toEqual({ retry: true, waitMs: 1000 });
		expect(decideRetry({ kind: 'bad_request', status: 400, mayHaveActed: false }, none, paid, at(0, 1e9))).toEqual({ retry: false, why: 'final' });
		expect(decideRetry({ kind: 'server', status: 500, mayHaveActed: true }, none, DEFAULT_RETRY_POLICY, at(0, 1e9))).toEqual({ retry: false, why: 'final' });
	});

	it('counts 429s and other failures apart', () => {
		expect(decideRetry({ kind: 'server', status: 502, mayHaveActed: true }, { rateLimit: 0, other: 4 }, DEFAULT_RETRY_POLICY, at(0, 1e9))).toEqual({ retry: false, why: 'spent' });
		expect(decideRetry(rateLimit(10), { rateLimit: 19, other: 4 }, DEFAULT_RETRY_POLICY, at(0, 1e9))).toEqual({ retry: true, waitMs: 10 });
	});
});

describe('the shared hold of the sending pace', () => {
	it('holds every waiter until the latest hold ends', async () => {
		const clock = createFakeClock(0);
		const pace = new SendPace(clock);
		await pace.wait();
		expect(clock.sleeps).toEqual([]);
		pace.holdFor(2000);
		pace.holdFor(500); // a shorter hold never shortens a longer one
		await pace.wait();
		expect(clock.sleeps).toEqual([2000]);
		await pace.wait();
		expect(clock.sleeps).toEqual([2000]);
	});

	it('does not hold a waiter whose deadline comes first: PastDeadline at once, nothing slept', async () => {
		const clock = createFakeClock(0);
		const pace = new SendPace(clock);
		pace.holdFor(60_000);
		const error = await pace.wait(undefined, 4000).catch((reason: unknown) => reason);
		expect(error).toBeInstanceOf(PastDeadline);
		expect(error).toMatchObject({ reason: 'hold', waitMs: 60_000, leftMs: 4000 });
		expect(clock.sleeps).toEqual([]);
		// A waiter whose deadline comes after the hold waits it out.
		await pace.wait(undefined, 70_000);
		expect(clock.sleeps).toEqual([60_000]);
	});

	it('without a pace or a hold, no turn is refused: a call past its deadline is the transport\'s to name', async () => {
		const clock = createFakeClock(0);
		const pace = new SendPace(clock);
		clock.advance(10_000);
		await expect(pace.wait(undefined, 5000)).resolves.toBeUndefined();
	});

	it('a waiter behind one that waits the hold out is told it was the hold, when the hold alone passes its deadline', async () => {
		const clock = createFakeClock(0);
		const pace = new SendPace(clock);
		pace.holdFor(30_000);
		const patient = pace.wait(undefined, 60_000);
		const error = await pace.wait(undefined, 5000).catch((reason: unknown) => reason);
		expect(error).toMatchObject({ reason: 'hold', waitMs: 30_000, leftMs: 5000 });
		await patient;
	});
});
