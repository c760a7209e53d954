/**
 * Hostile review of 26b101a (a check goes at most half its Poll Interval early, earliestSendAt).
 * Real SendPace + Lane on a virtual clock (budgetedPoller), wired like generate.ts (no lead).
 *
 * 1. A burst of checks due together that fits within the budget within ONE Poll Interval, but not
 *    within HALF of it: before the cap, latestSendTimes spread it back from its due time and every
 *    first check went on time; capped at half an interval, the tail of the burst goes out late
 *    (promise 2: when the budget allows, no task waits longer than its Poll Interval from its
 *    submit to its first check). Red on 26b101a, green on 26b101a~1.
 * 2. Tasks submitted together reach Max Wait together: many are reported still running ('no turn
 *    before the wait ended') with no check sent in their last Poll Interval, though the budget
 *    covers what they ask (promise 1). Red on 26b101a and on 26b101a~1 (not caused by the cap).
 */
import type { TaskOutcome } from '../../nodes/GatewayVideoGenerate/poller';
import { budgetedPoller, done, running } from '../helpers/budgetedPoller';
import type { Check } from '../helpers/budgetedPoller';

const SECOND = 1000;

/** Gaps longer than `intervalMs`: from the submit (0) to a task's first check, and between its checks. */
function lateChecks(checks: Check[], intervalMs: number): string[] {
	const last = new Map<string, number>();
	const late: string[] = [];
	for (const check of checks) {
		const previous = last.get(check.taskId) ?? 0;
		if (check.at - previous > intervalMs) late.push(`${check.taskId}: ${previous} -> ${check.at}`);
		last.set(check.taskId, check.at);
	}
	return late;
}

/** `tasks` submitted together at 0; each answers `answer(checkNumber)`. */
async function burst(tasks: number, perSecond: number, intervalMs: number, maxWaitMs: number, doneOn = Number.POSITIVE_INFINITY) {
	const { clock, poller, checks, refusals } = budgetedPoller(perSecond, (taskId, checkNumber) => (checkNumber >= doneOn ? done(taskId) : running(taskId)));
	const outcomes = new Map<string, TaskOutcome>();
	for (let i = 0; i < tasks; i++) {
		void poller.watch({ task_id: `t${i}`, status: 'QUEUED' }, { intervalMs, maxWaitMs }).then((o) => outcomes.set(`t${i}`, o));
	}
	await clock.runUntil(() => outcomes.size === tasks, maxWaitMs + 60 * SECOND);
	return { checks, refusals, outcomes, clock };
}

describe('review-earlycap: a burst that fits within the budget in one interval, not in half of one', () => {
	it('40 tasks submitted together, 10 checks/s, Poll Interval 5 s (40 x 110 ms = 4.4 s < 5 s): every first check within 5 s of the submit', async () => {
		// Asks 8 checks/s of a budget of 10. Before 26b101a the first round went from 0.71 s to 5.0 s;
		// capped at 2.5 s early, it goes from 2.5 s to 6.79 s: 16 tasks wait up to 1.79 s past their interval.
		const { checks, outcomes } = await burst(40, 10, 5 * SECOND, 120 * SECOND, 3);
		expect([...outcomes.values()].every((o) => o.kind === 'success')).toBe(true);
		expect(lateChecks(checks, 5 * SECOND)).toEqual([]);
	}, 60_000);

	it('Poll Interval 1 s, 6 tasks, 10 checks/s (6 x 110 ms = 0.66 s < 1 s): every first check within 1 s of the submit', async () => {
		// Asks 6 checks/s of 10. Before: 0.45 s to 1.0 s. Capped at 0.5 s early: 0.5 s to 1.05 s.
		const { checks, outcomes } = await burst(6, 10, 1 * SECOND, 60 * SECOND, 4);
		expect([...outcomes.values()].every((o) => o.kind === 'success')).toBe(true);
		expect(lateChecks(checks, 1 * SECOND)).toEqual([]);
	}, 60_000);
});

describe('review-earlycap: tasks submitted together reach Max Wait together (pre-existing, not the cap)', () => {
	it('40 never-done tasks, 10 checks/s, Poll Interval 5 s, Max Wait 30 s: none reported still running without a check in its last interval', async () => {
		const { checks, outcomes } = await burst(40, 10, 5 * SECOND, 30 * SECOND);
		const unchecked = [...outcomes.entries()]
			.filter(([, o]) => o.kind === 'timeout')
			.filter(([taskId]) => !checks.some((c) => c.taskId === taskId && c.at >= 25 * SECOND))
			.map(([taskId]) => taskId);
		// 26b101a: 10 tasks (t23..t28, t33..t36) with no check from 25 s on, refused a turn at 28.55-29.23 s.
		expect(unchecked).toEqual([]);
	}, 60_000);
});
