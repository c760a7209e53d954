/**
 * Hostile review of the tiered check urgency (96210f2), now rankOf in the check queue
 * (checkSchedule.ts; it was a function urgency in SendPace and the status Lane), and the "no turn before the wait's end → timeout" rule in
 * poller.ts pollOnce. Virtual clock with a timer queue.
 */
import { CheckQueue, Tier, rankOf } from '../../nodes/GatewayVideoGenerate/checkSchedule';
import { waitEndOf } from '../../nodes/GatewayVideoGenerate/checkSchedule';
import type { PollAnswer, TaskOutcome, WatchState } from '../../nodes/GatewayVideoGenerate/poller';
import { GatewayError } from '../../nodes/shared/failures/errors';
import { budgetedPoller, done, running } from '../helpers/budgetedPoller';
import { createVirtualClock } from '../helpers/virtualClock';

const SECOND = 1000;

describe('review-urgency2: the "no turn before the wait ends" rule', () => {
	it('a routine check refused for a queue that outlasts the wait does not end the wait before Max Wait: the last check (top tier once behind) would still have gone out', async () => {
		// Budget 1 check/s (1.1 s apart); 20 stuck tasks, Poll Interval 5 s, ask for 4 checks/s: a backlog of checks that fell behind.
		const { clock, poller, checks, refusals } = budgetedPoller(1, (taskId) => (taskId === 'short' ? done(taskId) : running(taskId)));
		const outcomes = new Map<string, TaskOutcome>();
		for (let i = 0; i < 20; i++) void poller.watch({ task_id: `stuck${i}`, status: 'QUEUED' }, { intervalMs: 5 * SECOND, maxWaitMs: 120 * SECOND }).then((o) => outcomes.set(`stuck${i}`, o));
		// Submitted at 30 s, done from the start, Max Wait 20 s: its first check (35 s) meets a backlog of ~20 behind checks (22 s) > its wait left (16.5 s).
		void (async () => {
			await clock.sleep(30 * SECOND);
			outcomes.set('short', await poller.watch({ task_id: 'short', status: 'QUEUED' }, { intervalMs: 5 * SECOND, maxWaitMs: 20 * SECOND }));
		})();
		await clock.runUntil(() => outcomes.size === 21, 400 * SECOND);
		const short = outcomes.get('short') as TaskOutcome;
		const shortRefusals = refusals.filter((r) => r.taskId === 'short');
		const shortChecks = checks.filter((c) => c.taskId === 'short');
		// On main: refused at 35 s (PastDeadline 'turn', computed while it was on time, behind ~20 behind checks), and the wait
		// ends at once as a timeout after 5 s of a 20 s Max Wait, never checked; its last check at 50 s would have gone first.
		expect({ kind: short.kind, waitedMs: 'waitedMs' in short ? short.waitedMs : undefined, refusals: shortRefusals.map((r) => r.at), checks: shortChecks.length }).toEqual(
			expect.objectContaining({ kind: 'success' }),
		);
	}, 60_000);
});

describe('review-urgency2: the check queue refuses by the rank of now, not the one a waiter will have', () => {
	it("a task's last check that arrives on time behind a backlog of behind checks is refused at once, though 0.5 s later it would be the most urgent and go out within its wait", async () => {
		const clock = createVirtualClock(0);
		const budget = new CheckQueue(clock, { spacingMs: 110 }); // 10 checks/s, 110 ms apart
		// 30 routine checks that fell behind (tier Behind, of tasks with Max Wait far off): 3.3 s of turns.
		const backlog: Array<Promise<unknown>> = [];
		for (let i = 0; i < 30; i++) backlog.push(budget.take({ taskId: `b${i}`, rank: () => [Tier.Behind, 600_000], notAfter: Number.POSITIVE_INFINITY }).catch(() => undefined));
		await clock.runUntil(() => true);
		// A task whose Max Wait is at 1 s (deadline 1000, wait end 2500): its last check comes in at its deadline.
		const state: Pick<WatchState, 'deadline' | 'submittedAt' | 'lastSeenAt' | 'intervalMs'> = { submittedAt: -59_000, deadline: 1000, intervalMs: 5000, lastSeenAt: -4000 };
		let result: string | undefined;
		void (async () => {
			await clock.sleep(1000);
			const dueAt = state.deadline;
			try {
				await budget.take({ taskId: 'T', rank: () => rankOf(state, dueAt, clock.now()), notAfter: waitEndOf(state) });
				result = `sent at ${clock.now()}`;
			} catch (error) {
				result = `refused at ${clock.now()}: ${(error as Error).message}`;
			}
		})();
		await clock.runUntil(() => result !== undefined, 60_000);
		// On main: "refused at 1000: a wait of 3300 ms would pass the deadline (1500 ms left)". Queued, it would turn
		// BEHIND_LAST at 1500 and take the next slot (~1.6 s), before its wait end at 2.5 s.
		expect(result).toMatch(/^sent at /);
		// the backlog drains on the virtual clock (it moves only while the test runs it)
		let drained = false;
		void Promise.all(backlog).then(() => (drained = true));
		await clock.runUntil(() => drained, 60_000);
	});
});

describe('review-urgency2: tasks never seen hog the unseen tier', () => {
	it('tasks whose every check is refused (429 with Retry-After 1 s, sent and answered) stay "seen longest ago" for ever and take every turn: a task done from the start is only checked at its Max Wait', async () => {
		const rateLimited = (taskId: string): PollAnswer => ({
			error: Object.assign(new GatewayError({ kind: 'rate_limit', headline: `Checking video task ${taskId} failed: 429` }), { retryAfterMs: 1000 }),
			passing: true,
		});
		// Budget 2 checks/s (550 ms apart); six tasks the gateway refuses every time (a per-task limit, a stuck task behind a proxy).
		const { clock, poller, checks } = budgetedPoller(2, (taskId) => (taskId.startsWith('refused') ? rateLimited(taskId) : done(taskId)));
		const outcomes = new Map<string, TaskOutcome>();
		for (let i = 0; i < 6; i++) void poller.watch({ task_id: `refused${i}`, status: 'QUEUED' }, { intervalMs: 5 * SECOND, maxWaitMs: 90 * SECOND }).then((o) => outcomes.set(`refused${i}`, o));
		void (async () => {
			await clock.sleep(1 * SECOND);
			for (let i = 0; i < 3; i++) void poller.watch({ task_id: `good${i}`, status: 'QUEUED' }, { intervalMs: 5 * SECOND, maxWaitMs: 90 * SECOND }).then((o) => outcomes.set(`good${i}`, o));
		})();
		await clock.runUntil(() => outcomes.size === 9, 400 * SECOND);
		const firstGood = [0, 1, 2].map((i) => checks.find((c) => c.taskId === `good${i}`)?.at);
		// Every good task is done at its first check (due at 6 s). A fair order checks each within a few intervals.
		// On main: each is first checked only when its last check (tier BEHIND_LAST) jumps the queue at ~91 s.
		for (const at of firstGood) expect(at).toBeLessThan(30 * SECOND);
	}, 60_000);
});

describe('review-urgency2: a routine check that waits into the last second is the last check, but keeps a routine rank', () => {
	it('a check due 3 s before Max Wait, still queued at Max Wait (so the task gets no other last check), is refused at the wait end behind tasks merely unseen', async () => {
		const clock = createVirtualClock(0);
		const gap = 110;
		const budget = new CheckQueue(clock, { spacingMs: gap }); // 10 checks/s
		// A steady backlog of checks of tasks unseen for two intervals: 20 waiting, and one more per turn for 10 s.
		const others: Array<Promise<unknown>> = [];
		let seq = 0;
		const addUnseen = () => {
			const at = seq++;
			others.push(budget.take({ taskId: `u${at}`, rank: () => [Tier.BehindNearMaxWait, at], notAfter: Number.POSITIVE_INFINITY }).catch(() => undefined));
		};
		for (let i = 0; i < 20; i++) addUnseen();
		void (async () => {
			for (let t = 0; t < 10_000; t += gap) {
				await clock.sleep(gap);
				addUnseen();
			}
		})();
		// Task T: Max Wait at 4 s (wait end 5.5 s), seen at -4 s, Poll Interval 5 s; its check due at 1 s (3 s before Max Wait).
		const state: Pick<WatchState, 'deadline' | 'submittedAt' | 'lastSeenAt' | 'intervalMs'> = { submittedAt: -56_000, deadline: 4000, intervalMs: 5000, lastSeenAt: -4000 };
		let result: string | undefined;
		void (async () => {
			await clock.sleep(1000);
			const dueAt = 1000;
			try {
				await budget.take({ taskId: 'T', rank: () => rankOf(state, dueAt, clock.now()), notAfter: waitEndOf(state) });
				result = `sent at ${clock.now()}`;
			} catch (error) {
				result = `refused at ${clock.now()}: ${(error as Error).message}`;
			}
		})();
		await clock.runUntil(() => result !== undefined, 60_000);
		// Sent at or after 3 s, decideAfterPoll takes it as the last check (tickAt >= deadline - 1 s) and the poller queues no
		// other while it waits: it should rank as one (BEHIND_LAST) from then on. On main it stays BEHIND_ROUTINE and is refused.
		expect(result).toMatch(/^sent at /);
		await clock.runUntil(() => seq >= 110, 60_000);
	});
});

describe('review-urgency2: Retry-After jitter and the Poll Interval', () => {
	it('a Retry-After shorter than the interval, jittered, does not put the next check past the interval it would have kept without the 429', async () => {
		const { decideAfterPoll } = await import('../../nodes/GatewayVideoGenerate/poller');
		const state: WatchState = { record: { task_id: 't', status: 'IN_PROGRESS' }, submittedAt: 0, intervalMs: 5000, deadline: 120_000, failedPolls: 0 };
		const refused = { error: Object.assign(new GatewayError({ kind: 'rate_limit', headline: 'Checking video task t failed: 429', status: 429 }), { retryAfterMs: 4500 }), passing: true };
		const decision = decideAfterPoll(state, refused, 5000, 5010, 0.999) as { nextPollAt: number };
		// The gateway asked for 4.5 s (before the next interval, 10 s); jitter adds up to 1.125 s: 10,634 on main, a gap of 5.6 s.
		expect(decision.nextPollAt).toBeLessThanOrEqual(Math.max(5010 + 4500, 5000 + state.intervalMs));
	});
});
