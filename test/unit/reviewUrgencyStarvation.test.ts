/**
 * Review of the EDF urgency (commits 3e82a41, 8aeae54): the wait loop, the status lane and the
 * budget of checks per second together, on a virtual clock with a timer queue.
 */
import type { TaskOutcome } from '../../nodes/GatewayVideoGenerate/poller';
import { budgetedPoller, done, running } from '../helpers/budgetedPoller';

const SECOND = 1000;

describe('review-urgency: EDF starvation of young tasks', () => {
	it('a task submitted half a second after ten stuck ones, done from the start, is checked within a few intervals (not only at the others\' Max Wait, nor never)', async () => {
		// Budget 1 check/s (1.1 s apart), Poll Interval 5 s: ten stuck tasks alone ask for 2 checks/s.
		const { clock, poller, checks } = budgetedPoller(1, (taskId) => (taskId === 'young' ? done(taskId) : running(taskId)));
		const settings = { intervalMs: 5 * SECOND, maxWaitMs: 120 * SECOND };
		const outcomes = new Map<string, TaskOutcome>();
		for (let i = 0; i < 10; i++) void poller.watch({ task_id: `old${i}`, status: 'QUEUED' }, settings).then((o) => outcomes.set(`old${i}`, o));
		let youngSubmittedAt = -1;
		void (async () => {
			await clock.sleep(500);
			youngSubmittedAt = clock.now();
			outcomes.set('young', await poller.watch({ task_id: 'young', status: 'QUEUED' }, settings));
		})();
		await clock.runUntil(() => outcomes.size === 11, 200 * SECOND);
		const youngChecks = checks.filter((check) => check.taskId === 'young');
		const firstYoungCheck = youngChecks[0]?.at;
		expect(outcomes.get('young')?.kind).toBe('success');
		// first-come-first-served (the old budget) checked it within about 12 s: 11 tasks, 1.1 s apart
		expect(firstYoungCheck).toBeDefined();
		expect((firstYoungCheck as number) - youngSubmittedAt).toBeLessThan(30 * SECOND);
	}, 60_000);

	it('a check the budget refuses (PastDeadline) is not sent again at the same instant, over and over (pre-existing, also on 3e82a41~1: a microtask-only spin that starves the event loop; OOM without the guard)', async () => {
		const { clock, poller, maxRefusalsAtOnce } = budgetedPoller(1, running);
		const settings = { intervalMs: 5 * SECOND, maxWaitMs: 30 * SECOND };
		const outcomes: TaskOutcome[] = [];
		for (let i = 0; i < 10; i++) void poller.watch({ task_id: `old${i}`, status: 'QUEUED' }, settings).then((o) => outcomes.push(o));
		await clock.runUntil(() => outcomes.length === 10, 200 * SECOND);
		expect(maxRefusalsAtOnce()).toBeLessThanOrEqual(2);
		// none ends 'unreachable' from the guard: every one times out at Max Wait
		expect(outcomes.map((o) => o.kind)).toEqual(Array(10).fill('timeout'));
	}, 60_000);
});
