/** Review of SendPace: every wait ends and the budget holds, under random aborts, holds and deadlines (virtual clock; urgencies are the check queue's now, see checkSchedule.property.test.ts). */
import { DEFAULT_PACE, SendPace } from '../../nodes/shared/wire/pace';
import { createVirtualClock } from '../helpers/virtualClock';

function prng(seed: number) {
	let s = seed >>> 0;
	return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

describe('review-urgency: SendPace liveness and budget (seeded survey)', () => {
	for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
		it(`seed ${seed}: every wait settles; slots given out never closer than one gap (a pace from the start, holds, aborts)`, async () => {
			const random = prng(seed);
			const clock = createVirtualClock(0);
			const budget = new SendPace(clock, DEFAULT_PACE, 5);
			const gap = 1000 / 5;
			const released: number[] = [];
			let settled = 0;
			const total = 120;
			void (async () => {
				for (let i = 0; i < total; i++) {
					if (random() < 0.5) await clock.sleep(Math.floor(random() * 400));
					if (random() < 0.03) budget.holdFor(Math.floor(random() * 3000));
					const controller = new AbortController();
					const notAfter = random() < 0.6 ? clock.now() + Math.floor(random() * 8000) : undefined;
					if (random() < 0.2) {
						const after = Math.floor(random() * 2000);
						void clock.sleep(after).then(() => controller.abort());
					}
					void budget.wait(controller.signal, notAfter).then(
						() => {
							released.push(clock.now());
							settled++;
						},
						() => settled++,
					);
				}
			})();
			await clock.runUntil(() => settled === total, 600_000);
			for (let i = 1; i < released.length; i++) expect(released[i] - released[i - 1]).toBeGreaterThanOrEqual(gap - 1e-6);
		});
	}
});
