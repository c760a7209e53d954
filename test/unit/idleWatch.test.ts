/**
 * The idle limit of a streamed answer (issue 28): silence longer than Idle Timeout ends it, every
 * sign of life (a byte, a keep-alive comment) starts the silence again, and one timer at a time
 * watches it, however many chunks arrive. Time is a virtual clock.
 */
import { IdleWatch } from '../../nodes/shared/wire/timing';
import type { TimerSource } from '../../nodes/shared/wire/timing';
import { createVirtualClock } from '../helpers/virtualClock';
import type { VirtualClock } from '../helpers/virtualClock';

/** deadlineSignal's role on the virtual clock; counts the timers it made. */
function virtualTimers(clock: VirtualClock): TimerSource & { made: number[] } {
	const made: number[] = [];
	return {
		made,
		now: () => clock.now(),
		deadline(ms: number) {
			made.push(ms);
			const controller = new AbortController();
			void clock.sleep(ms).then(() => controller.abort());
			return controller.signal;
		},
	};
}

/** Runs the clock to `at` (ms), doing `act` at each of the given moments on the way. */
async function runTo(clock: VirtualClock, at: number, moments: Array<[number, () => void]> = []): Promise<void> {
	const pending = [...moments].sort((a, b) => a[0] - b[0]);
	for (const [when, act] of pending) {
		void clock.sleep(when - clock.now()).then(act);
	}
	void clock.sleep(at - clock.now());
	await clock.runUntil(() => clock.now() >= at);
}

describe('IdleWatch', () => {
	it('fires idle ms after the last sign of life, not after the first', async () => {
		const clock = createVirtualClock(0);
		const timers = virtualTimers(clock);
		const watch = new IdleWatch(1000, timers);
		watch.alive();
		let firedAt: number | undefined;
		watch.signal.addEventListener('abort', () => (firedAt = clock.now()));
		await runTo(clock, 5000, [
			[300, () => watch.alive()],
			[900, () => watch.alive()],
			[1500, () => watch.alive()],
		]);
		expect(firedAt).toBe(2500);
	});

	it('keeps one timer at a time: a thousand chunks within one window make no timer each', async () => {
		const clock = createVirtualClock(0);
		const timers = virtualTimers(clock);
		const watch = new IdleWatch(1000, timers);
		watch.alive();
		const chunks: Array<[number, () => void]> = Array.from({ length: 1000 }, (_, i) => [1 + i * 2, () => watch.alive()]);
		let fired = false;
		watch.signal.addEventListener('abort', () => (fired = true));
		await runTo(clock, 2000, chunks);
		expect(fired).toBe(false);
		// The first window, then one re-arm for what was left after the last chunk: not one per chunk.
		expect(timers.made.length).toBeLessThanOrEqual(3);
		await runTo(clock, 4000);
		expect(fired).toBe(true);
	});

	it('does not run before its first sign of life (the request not sent whole yet)', async () => {
		const clock = createVirtualClock(0);
		const watch = new IdleWatch(1000, virtualTimers(clock));
		await runTo(clock, 5000);
		expect(watch.signal.aborted).toBe(false);
		watch.alive();
		await runTo(clock, 6000);
		expect(watch.signal.aborted).toBe(true);
	});

	it('never fires once stopped (the answer is done, or another limit ended it first)', async () => {
		const clock = createVirtualClock(0);
		const watch = new IdleWatch(1000, virtualTimers(clock));
		watch.alive();
		await runTo(clock, 500);
		watch.stop();
		await runTo(clock, 5000);
		expect(watch.signal.aborted).toBe(false);
	});
});
