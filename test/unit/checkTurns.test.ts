/**
 * Bench row 8b on a virtual clock: 200 videos submitted together, each done on its third check,
 * a budget of 10 checks/s (a fifth of what they ask at a 5 s Poll Interval). Fair turns mean no
 * task gets its second check before every task had its first, so the videos finish within about
 * one round of checks of each other (the row's goal: 1.1 rounds).
 */
import type { TaskOutcome } from '../../nodes/GatewayVideoGenerate/poller';
import { budgetedPoller, done, running } from '../helpers/budgetedPoller';

const SECOND = 1000;

describe('check turns when the budget is short (bench row 8b)', () => {
	it('200 videos done on their third check finish within 1.1 rounds of each other, and none is checked twice before all were checked once', async () => {
		const videos = 200;
		const perSecond = 10;
		const { clock, poller, checks } = budgetedPoller(perSecond, (taskId, checkNumber) => (checkNumber >= 3 ? done(taskId) : running(taskId)));
		const outcomes = new Map<string, TaskOutcome>();
		void (async () => {
			// submitted 2 ms apart, as 20 submit slots answered at once do
			for (let i = 0; i < videos; i++) {
				void poller.watch({ task_id: `v${i}`, status: 'QUEUED' }, { intervalMs: 5 * SECOND, maxWaitMs: 300 * SECOND }).then((o) => outcomes.set(`v${i}`, o));
				await clock.sleep(2);
			}
		})();
		await clock.runUntil(() => outcomes.size === videos, 400 * SECOND);
		expect([...outcomes.values()].every((o) => o.kind === 'success')).toBe(true);

		const lastCheckOf = new Map(checks.map((check) => [check.taskId, check.at]));
		const finishes = [...lastCheckOf.values()];
		const round = (videos / perSecond) * SECOND * 1.1;
		expect(Math.max(...finishes) - Math.min(...finishes)).toBeLessThanOrEqual(round * 1.1);

		const firstChecks = new Map<string, number>();
		const secondChecks: number[] = [];
		for (const check of checks) {
			if (firstChecks.has(check.taskId)) secondChecks.push(check.at);
			else firstChecks.set(check.taskId, check.at);
		}
		expect(Math.min(...secondChecks)).toBeGreaterThan(Math.max(...firstChecks.values()));
	}, 60_000);

	it('40 never-done tasks reaching Max Wait together: each was seen by a check sent in its last interval', async () => {
		// 40 checks every 5 s of a budget of 45: enough, but the extra looks at Max Wait of all 40 are not.
		const { clock, poller, checks, refusals } = budgetedPoller(10, running);
		const outcomes = new Map<string, TaskOutcome>();
		for (let i = 0; i < 40; i++) void poller.watch({ task_id: `t${i}`, status: 'QUEUED' }, { intervalMs: 5 * SECOND, maxWaitMs: 30 * SECOND }).then((o) => outcomes.set(`t${i}`, o));
		await clock.runUntil(() => outcomes.size === 40, 90 * SECOND);
		expect(refusals.length).toBeGreaterThan(0);
		for (const [taskId, outcome] of outcomes) {
			expect(outcome).toMatchObject({ kind: 'timeout' });
			expect(checks.some((check) => check.taskId === taskId && check.at >= 25 * SECOND)).toBe(true);
		}
	}, 60_000);
});
