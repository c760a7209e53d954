/**
 * The check queue of checkSchedule.ts on its own: one turn at a time, the best rank first (asked
 * anew at every turn), within its slots and its budget; a turn that would come after a check's
 * wait end is refused at once. (Moved here from SendPace's urgency tests: the pace now serves in
 * the order requests came, and the status checks' order is this queue's alone.)
 */
import { CheckQueue, Tier, budgetSpacingMs, rankOf } from '../../nodes/GatewayVideoGenerate/checkSchedule';
import { compareRanks } from '../../nodes/shared/wire/pace';
import type { CheckRank } from '../../nodes/GatewayVideoGenerate/checkSchedule';
import { createFakeClock } from '../helpers/fakeClock';
import { createVirtualClock } from '../helpers/virtualClock';

const fixed = (rank: CheckRank) => () => rank;
const FAR = Number.POSITIVE_INFINITY;

describe('CheckQueue', () => {
	it('spaces the turns of a budget 10 % wider than 1/budget, so the gateway never sees more than the budget in a second', async () => {
		const clock = createFakeClock(0);
		const queue = new CheckQueue(clock, { spacingMs: budgetSpacingMs(10) });
		const times: number[] = [];
		for (let i = 0; i < 30; i++) {
			(await queue.take({ taskId: `t${i}`, rank: fixed([Tier.OnTime, 0]), notAfter: FAR }))();
			times.push(clock.now());
		}
		const gaps = times.slice(1).map((time, i) => time - times[i]);
		expect(Math.min(...gaps)).toBeCloseTo(110, 6);
	});

	it('gives the turns by rank, a tier before a time; equal ranks in the order they came; one budget gap apart', async () => {
		const clock = createFakeClock(0);
		const queue = new CheckQueue(clock, { spacingMs: 1000 });
		(await queue.take({ taskId: 'first', rank: fixed([Tier.OnTime, 0]), notAfter: FAR }))();
		const order: string[] = [];
		const take = async (taskId: string, rank: CheckRank) => (await queue.take({ taskId, rank: fixed(rank), notAfter: FAR }))();
		await Promise.all([
			take('routine 1', [Tier.OnTime, 100]).then(() => order.push('routine 1')),
			take('routine 2', [Tier.OnTime, 100]).then(() => order.push('routine 2')),
			take('last, Max Wait 50 s', [Tier.LastUnseen, 50_000]).then(() => order.push('last, Max Wait 50 s')),
			take('last, Max Wait 20 s', [Tier.LastUnseen, 20_000]).then(() => order.push('last, Max Wait 20 s')),
			take('behind', [Tier.Behind, 999_999]).then(() => order.push('behind')),
		]);
		expect(order).toEqual(['last, Max Wait 20 s', 'last, Max Wait 50 s', 'behind', 'routine 1', 'routine 2']);
		expect(clock.now()).toBe(5000);
	});

	it('a check pushed past its wait end by better-ranked ones that came after it is refused then (PastDeadline), not when its turn would have come', async () => {
		const clock = createFakeClock(0);
		const queue = new CheckQueue(clock, { spacingMs: 1000 });
		(await queue.take({ taskId: 'first', rank: fixed([Tier.OnTime, 0]), notAfter: FAR }))();
		const routine = queue.take({ taskId: 'routine', rank: fixed([Tier.OnTime, 0]), notAfter: 2500 }).catch((reason: unknown) => reason);
		const urgent = [1, 2, 3].map(async (n) => await queue.take({ taskId: `u${n}`, rank: fixed([Tier.LastUnseen, 10_000]), notAfter: FAR }));
		expect(await routine).toMatchObject({ reason: 'turn' });
		expect(clock.now()).toBeLessThanOrEqual(2500);
		await Promise.all(urgent);
		expect(clock.now()).toBe(3000);
	});

	it('asks each rank anew at every turn: a check that falls behind while it waits moves up', async () => {
		const clock = createFakeClock(0);
		const queue = new CheckQueue(clock, { spacingMs: 1000 });
		(await queue.take({ taskId: 'first', rank: fixed([Tier.OnTime, 0]), notAfter: FAR }))();
		const order: string[] = [];
		const take = async (taskId: string, rank: () => CheckRank) => await queue.take({ taskId, rank, notAfter: FAR }).then(() => order.push(taskId));
		await Promise.all([
			take('on time 10', fixed([Tier.OnTime, 10])),
			take('on time 20', fixed([Tier.OnTime, 20])),
			take('falls behind at 1.5 s', () => (clock.now() > 1500 ? [Tier.Behind, 0] : [Tier.OnTime, 30])),
		]);
		expect(order).toEqual(['on time 10', 'falls behind at 1.5 s', 'on time 20']);
	});

	it('gives no turn while every slot is taken; a freed slot goes to the best rank waiting', async () => {
		const clock = createVirtualClock(0);
		const queue = new CheckQueue(clock, { slots: 1 });
		const free = await queue.take({ taskId: 'a', rank: fixed([Tier.OnTime, 0]), notAfter: FAR });
		const order: string[] = [];
		const waiting = [
			queue.take({ taskId: 'b', rank: fixed([Tier.OnTime, 5]), notAfter: FAR }).then((done) => (order.push('b'), done())),
			queue.take({ taskId: 'c', rank: fixed([Tier.LastSeen, 9]), notAfter: FAR }).then((done) => (order.push('c'), done())),
		];
		await clock.runUntil(() => true);
		expect(order).toEqual([]);
		expect(queue.queued).toBe(2);
		free();
		await Promise.all(waiting);
		expect(order).toEqual(['c', 'b']);
		expect(queue.peak).toBe(1);
	});

	it('cancelAll ends every wait for a turn at once, without a turn', async () => {
		const clock = createVirtualClock(0);
		const queue = new CheckQueue(clock, { slots: 1 });
		const free = await queue.take({ taskId: 'a', rank: fixed([Tier.OnTime, 0]), notAfter: FAR });
		const waiting = queue.take({ taskId: 'b', rank: fixed([Tier.OnTime, 0]), notAfter: FAR }).catch((reason: unknown) => reason);
		queue.cancelAll();
		expect(await waiting).toMatchObject({ name: 'CancelledError' });
		expect(queue.queued).toBe(0);
		free();
	});
});

describe('rankOf: the tiers of the multilevel queue', () => {
	it('ranks compare as pairs: the tier first, then the time, whatever the clock (epoch times too)', () => {
		const epoch = Date.now();
		expect(compareRanks([Tier.Behind, epoch], [Tier.OnTime, 0])).toBeLessThan(0);
		expect(compareRanks([Tier.OnTime, 5], [Tier.OnTime, 6])).toBeLessThan(0);
		const behind = { deadline: epoch + 120_000, submittedAt: epoch - 60_000, lastSentAt: epoch - 1000, intervalMs: 30_000 };
		expect(rankOf(behind, epoch - 1000, epoch)).toEqual([Tier.Behind, epoch - 1000]);
	});
});
