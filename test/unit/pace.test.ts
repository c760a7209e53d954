/** The execution's sending pace (AIMD under one shared hold), on a fake clock. */
import { DEFAULT_PACE, SendPace } from '../../nodes/shared/wire/pace';
import { CancelledError, PastDeadline } from '../../nodes/shared/wire/timing';
import { createFakeClock } from '../helpers/fakeClock';

/** A gateway that admits `perSecond` requests per second (a token bucket of one second), on the fake clock. */
function tokenBucket(clock: { now(): number }, perSecond: number) {
	let tokens = perSecond;
	let last = clock.now();
	return () => {
		const now = clock.now();
		tokens = Math.min(perSecond, tokens + ((now - last) / 1000) * perSecond);
		last = now;
		if (tokens >= 1) {
			tokens -= 1;
			return 200;
		}
		return 429;
	};
}

/** Sends `count` requests one after another through the pace, retrying 429s; returns the counts. */
async function drive(pace: SendPace, clock: ReturnType<typeof createFakeClock>, answer: () => number, count: number, answerMs = 10) {
	let sent = 0;
	let limited = 0;
	const started = clock.now();
	for (let done = 0; done < count; ) {
		await pace.wait();
		const sentAt = clock.now();
		sent++;
		clock.advance(answerMs);
		if (answer() === 429) {
			limited++;
			if (!pace.rateLimited(sentAt)) pace.holdFor(1000);
		} else {
			pace.succeeded();
			done++;
		}
	}
	return { sent, limited, seconds: (clock.now() - started) / 1000 };
}

describe('SendPace', () => {
	it('does not pace anything before the first 429', async () => {
		const clock = createFakeClock();
		const pace = new SendPace(clock);
		for (let i = 0; i < 100; i++) {
			await pace.wait();
			pace.succeeded();
		}
		expect(clock.sleeps).toEqual([]);
		expect(pace.requestsPerSecond).toBe(Number.POSITIVE_INFINITY);
	});

	it('after a 429 paces just under what got through in the last second', async () => {
		const clock = createFakeClock();
		const pace = new SendPace(clock);
		for (let i = 0; i < 40; i++) {
			await pace.wait();
			clock.advance(50); // 20 per second got through
			pace.succeeded();
		}
		expect(pace.rateLimited()).toBe(true);
		expect(pace.requestsPerSecond).toBeCloseTo(18, 0);
		await pace.wait();
		await pace.wait();
		expect(clock.sleeps.at(-1)).toBeCloseTo(1000 / 18, 0);
	});

	it('cuts once for the 429s of one overshoot, then climbs back while answers succeed', async () => {
		const clock = createFakeClock();
		const pace = new SendPace(clock);
		for (let i = 0; i < 20; i++) {
			await pace.wait();
			clock.advance(50);
			pace.succeeded();
		}
		pace.rateLimited();
		const cut = pace.requestsPerSecond;
		pace.rateLimited(); // a request that was already on its way
		expect(pace.requestsPerSecond).toBe(cut);
		for (let i = 0; i < 100; i++) pace.succeeded();
		expect(pace.requestsPerSecond).toBeGreaterThan(cut + 2);
	});

	it('a 429 before anything got through sets no pace: the caller backs off instead', () => {
		const pace = new SendPace(createFakeClock());
		expect(pace.rateLimited()).toBe(false);
		expect(pace.requestsPerSecond).toBe(Number.POSITIVE_INFINITY);
	});

	it('meets a gateway admitting 20/s with few 429s and close to its rate', async () => {
		const clock = createFakeClock();
		const pace = new SendPace(clock);
		const result = await drive(pace, clock, tokenBucket(clock, 20), 1000);
		expect(result.limited / result.sent).toBeLessThan(0.05);
		expect(result.seconds).toBeLessThan((1000 / 20) * 1.15);
	});

	it('follows a limit that drops half way (20/s, then 5/s) without failing', async () => {
		const clock = createFakeClock();
		const pace = new SendPace(clock);
		const first = await drive(pace, clock, tokenBucket(clock, 20), 500);
		const second = await drive(pace, clock, tokenBucket(clock, 5), 500);
		expect(first.seconds + second.seconds).toBeLessThan((500 / 20 + 500 / 5) * 1.3);
		// Every item got through (drive() only returns then), with few 429s once the pace has settled.
		expect(second.limited / second.sent).toBeLessThan(0.1);
	});

	it('a Retry-After holds every request until then', async () => {
		const clock = createFakeClock();
		const pace = new SendPace(clock);
		pace.holdFor(3000);
		await pace.wait();
		expect(clock.sleeps).toEqual([3000]);
	});
});

describe('SendPace, a burst refused before anything got through', () => {
	it('paces at half of what the burst sent in the last second', async () => {
		const clock = createFakeClock();
		const pace = new SendPace(clock);
		for (let i = 0; i < 50; i++) await pace.wait();
		expect(pace.rateLimited(clock.now())).toBe(true);
		expect(pace.requestsPerSecond).toBe(25);
	});

	it('a concurrent burst against 20/s ends with few 429s', async () => {
		const clock = createFakeClock();
		const pace = new SendPace(clock);
		const answer = tokenBucket(clock, 20);
		let limited = 0;
		let done = 0;
		// 50 lanes, as Concurrency 50 would run them, each sending, then waiting 100 ms for its answer.
		const lane = async () => {
			while (done < 1000) {
				await pace.wait();
				const sentAt = clock.now();
				if (answer() === 429) {
					limited++;
					if (!pace.rateLimited(sentAt)) pace.holdFor(1000);
					continue;
				}
				await clock.sleep(100);
				pace.succeeded();
				done++;
			}
		};
		await Promise.all(Array.from({ length: 50 }, lane));
		expect(limited / (done + limited)).toBeLessThan(0.05);
	});
});

describe('SendPace with a pace from the start', () => {
	describe('within a deadline', () => {
		/** A pace cut to 2 requests a second by a burst of 429s before anything got through. */
		async function cutPace(clock: ReturnType<typeof createFakeClock>) {
			const pace = new SendPace(clock);
			for (let i = 0; i < 4; i++) await pace.wait();
			expect(pace.rateLimited(clock.now())).toBe(true);
			return pace;
		}

		it('a slot after the deadline is not waited for: PastDeadline at once, no sleep', async () => {
			const clock = createFakeClock(0);
			const pace = await cutPace(clock);
			const gap = 1000 / pace.requestsPerSecond;
			const error = await pace.wait(undefined, clock.now() + gap / 2).catch((reason: unknown) => reason);
			expect(error).toBeInstanceOf(PastDeadline);
			expect(error).toMatchObject({ reason: 'turn' });
			expect(clock.sleeps).toEqual([]);
			// A deadline after the slot: waited out.
			await pace.wait(undefined, clock.now() + gap * 2);
			expect(clock.sleeps).toEqual([gap]);
		});

		it('counts the requests queued before: the third in line gives up when its slot would come too late', async () => {
			const clock = createFakeClock(0);
			const pace = await cutPace(clock);
			const gap = 1000 / pace.requestsPerSecond;
			const first = pace.wait(undefined, clock.now() + gap * 1.5);
			const second = pace.wait(undefined, clock.now() + gap * 2.5);
			const third = pace.wait(undefined, clock.now() + gap * 2.5).catch((reason: unknown) => reason);
			await Promise.all([first, second]);
			expect(await third).toBeInstanceOf(PastDeadline);
		});

		it('the shared hold of a Retry-After: a waiter whose deadline ends first fails at once', async () => {
			const clock = createFakeClock(0);
			const pace = new SendPace(clock);
			pace.holdFor(30_000);
			await expect(pace.wait(undefined, 5000)).rejects.toMatchObject({ reason: 'hold', waitMs: 30_000, leftMs: 5000 });
			expect(clock.sleeps).toEqual([]);
		});

		it('a waiter that gives up (its signal aborts) leaves the queue at once and takes no slot', async () => {
			const clock = createFakeClock(0, 5);
			const pace = await cutPace(clock);
			const gap = 1000 / pace.requestsPerSecond;
			const first = pace.wait();
			const leaving = new AbortController();
			const second = pace.wait(leaving.signal).catch((reason: unknown) => reason);
			leaving.abort();
			expect(await second).toBeInstanceOf(CancelledError);
			await first;
			const before = clock.now();
			await pace.wait();
			// The third comes one gap after the first: the second's slot was not taken.
			expect(clock.now() - before).toBeLessThanOrEqual(gap);
		});
	});
});

describe('SendPace, a hold or a cut that comes while a request waits for its slot', () => {
	it('a Retry-After that arrives while a request sleeps towards its slot holds that request too', async () => {
		const clock = createFakeClock(0);
		const pace = new SendPace(clock, DEFAULT_PACE, 1);
		await pace.wait();
		// The second request's slot is a second away; while it sleeps, another request is told to retry after 5 s.
		clock.onSleep = (_ms, sleepNumber) => {
			if (sleepNumber === 1) pace.holdFor(5000);
		};
		await pace.wait();
		expect(clock.now()).toBeGreaterThanOrEqual(5000);
	});

	it('a hold that would pass the waiting request deadline fails it then (PastDeadline), not after the hold', async () => {
		const clock = createFakeClock(0);
		const pace = new SendPace(clock, DEFAULT_PACE, 1);
		await pace.wait();
		clock.onSleep = (_ms, sleepNumber) => {
			if (sleepNumber === 1) pace.holdFor(60_000);
		};
		await expect(pace.wait(undefined, 10_000)).rejects.toMatchObject({ reason: 'hold' });
		expect(clock.now()).toBeLessThanOrEqual(10_000);
	});
});

describe('SendPace, one order (the status checks\' order is the check queue\'s, checkSchedule.ts)', () => {
	it('serves the requests waiting in the order they came', async () => {
		const clock = createFakeClock(0);
		const pace = new SendPace(clock, DEFAULT_PACE, 1);
		await pace.wait();
		const order: number[] = [];
		await Promise.all([1, 2, 3, 4].map(async (n) => await pace.wait().then(() => order.push(n))));
		expect(order).toEqual([1, 2, 3, 4]);
		// still one slot a second
		expect(clock.now()).toBe(4000);
	});
});
