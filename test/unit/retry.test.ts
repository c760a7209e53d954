import { DEFAULT_RETRY_POLICY, isRetryableStatus, parseRetryAfter, retryDelayMs } from '../../nodes/shared/wire/retry';
import { BackoffGate } from '../../nodes/shared/wire/timing';
import type { Clock } from '../../nodes/shared/wire/timing';

describe('retry decisions', () => {
	it('retries 429 and gateway failures, never other 4xx nor an unknown model', () => {
		for (const status of [429, 502, 503, 504]) expect(isRetryableStatus(status, 'server')).toBe(true);
		for (const status of [400, 401, 403, 404, 422, 500]) expect(isRetryableStatus(status, 'bad_request')).toBe(false);
		expect(isRetryableStatus(503, 'unknown_model')).toBe(false);
	});

	it('reads Retry-After as seconds or as a date', () => {
		const now = Date.parse('2026-11-22T12:00:00Z');
		expect(parseRetryAfter('3', now)).toBe(3000);
		expect(parseRetryAfter('Sun, 22 Nov 2026 12:00:10 GMT', now)).toBe(10_000);
		expect(parseRetryAfter(undefined, now)).toBeUndefined();
		expect(parseRetryAfter('soon', now)).toBeUndefined();
	});

	it('backs off exponentially with jitter, capped, and prefers Retry-After', () => {
		expect(retryDelayMs(0, undefined, DEFAULT_RETRY_POLICY, () => 1)).toBe(1000);
		expect(retryDelayMs(0, undefined, DEFAULT_RETRY_POLICY, () => 0)).toBe(500);
		expect(retryDelayMs(3, undefined, DEFAULT_RETRY_POLICY, () => 1)).toBe(8000);
		expect(retryDelayMs(10, undefined, DEFAULT_RETRY_POLICY, () => 1)).toBe(DEFAULT_RETRY_POLICY.maxDelayMs);
		expect(retryDelayMs(2, 7000, DEFAULT_RETRY_POLICY, () => 1)).toBe(7000);
	});
});

describe('shared backoff gate', () => {
	function fakeClock() {
		let now = 0;
		const sleeps: number[] = [];
		const clock: Clock = {
			now: () => now,
			sleep: async (ms) => {
				sleeps.push(ms);
				now += ms;
			},
		};
		return { clock, sleeps, advance: (ms: number) => (now += ms) };
	}

	it('holds every waiter until the latest hold ends', async () => {
		const { clock, sleeps } = fakeClock();
		const gate = new BackoffGate(clock);
		await gate.wait();
		expect(sleeps).toEqual([]);
		gate.holdFor(2000);
		gate.holdFor(500); // a shorter hold never shortens a longer one
		await gate.wait();
		expect(sleeps).toEqual([2000]);
		await gate.wait();
		expect(sleeps).toEqual([2000]);
	});
});
