/**
 * A Clock whose sleeps take (almost) no real time: `sleep(ms)` moves `now` on by `ms` and resolves
 * on the next turn of the event loop, or after `realMsPerSleep` real milliseconds, which lets real
 * I/O in flight (submits to a loopback gateway) finish the way it would within a real interval.
 * Every sleep is recorded, and `onSleep` lets a test act at a given moment (e.g. cancel).
 */
import { CancelledError } from '../../nodes/shared/wire/timing';
import type { Clock } from '../../nodes/shared/wire/timing';

export interface FakeClock extends Clock {
	/** The durations asked for, in order. */
	sleeps: number[];
	/** Called at the start of every sleep, before time moves. */
	onSleep?: (ms: number, sleepNumber: number) => void;
	advance(ms: number): void;
}

export function createFakeClock(start = 1_000_000, realMsPerSleep = 0): FakeClock {
	let now = start;
	const clock: FakeClock = {
		sleeps: [],
		now: () => now,
		advance(ms: number) {
			now += ms;
		},
		async sleep(ms: number, signal?: AbortSignal) {
			clock.sleeps.push(ms);
			clock.onSleep?.(ms, clock.sleeps.length);
			if (signal?.aborted) throw new CancelledError();
			await new Promise((resolve) => (realMsPerSleep > 0 ? setTimeout(resolve, realMsPerSleep) : setImmediate(resolve)));
			if (signal?.aborted) throw new CancelledError();
			now += Math.max(0, ms);
		},
	};
	return clock;
}
