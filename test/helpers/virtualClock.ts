/**
 * A virtual clock with a timer queue (review-urgency): unlike fakeClock, several sleepers at once
 * (the wait loop and the budget's pump) share one time line. `runUntil` lets every pending
 * promise settle, then moves time to the earliest timer; it throws when something still waits but
 * no timer is left (a waiter stuck forever).
 */
import { CancelledError } from '../../nodes/shared/wire/timing';
import type { Clock } from '../../nodes/shared/wire/timing';

interface Timer {
	at: number;
	seq: number;
	resolve(): void;
}

export interface VirtualClock extends Clock {
	pendingTimers(): number;
	runUntil(done: () => boolean, limitMs?: number): Promise<void>;
}

const turn = async () => await new Promise<void>((resolve) => setImmediate(resolve));

export function createVirtualClock(start = 0): VirtualClock {
	let now = start;
	let seq = 0;
	const timers: Timer[] = [];
	return {
		now: () => now,
		pendingTimers: () => timers.length,
		async sleep(ms: number, signal?: AbortSignal) {
			if (signal?.aborted) throw new CancelledError();
			await new Promise<void>((resolve, reject) => {
				const timer: Timer = { at: now + Math.max(0, ms), seq: seq++, resolve };
				timers.push(timer);
				signal?.addEventListener(
					'abort',
					() => {
						const index = timers.indexOf(timer);
						if (index >= 0) timers.splice(index, 1);
						reject(new CancelledError());
					},
					{ once: true },
				);
			});
		},
		async runUntil(done: () => boolean, limitMs = Number.POSITIVE_INFINITY) {
			let sameTime = 0;
			for (;;) {
				for (let i = 0; i < 10; i++) await turn();
				if (done()) return;
				if (timers.length === 0) throw new Error(`stuck at ${now} ms: something still waits, but no timer is left`);
				timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
				const next = timers.shift() as Timer;
				sameTime = next.at <= now ? sameTime + 1 : 0;
				if (sameTime > 10_000) throw new Error(`no progress at ${now} ms: 10,000 timers in a row at the same time (a sleep too short to move the clock?), last asked ${next.at - now}`);
				now = Math.max(now, next.at);
				if (now - start > limitMs) throw new Error(`still running after ${limitMs} ms`);
				next.resolve();
			}
		},
	};
}
