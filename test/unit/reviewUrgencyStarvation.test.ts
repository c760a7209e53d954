/**
 * Review of the EDF urgency (commits 3e82a41, 8aeae54): the wait loop, the status lane and the
 * budget of checks per second together, on a virtual clock with a timer queue.
 */
import { Lane } from '../../nodes/GatewayVideoGenerate/lanes';
import { TaskPoller } from '../../nodes/GatewayVideoGenerate/poller';
import type { PollAnswer, TaskOutcome } from '../../nodes/GatewayVideoGenerate/pollDecision';
import { BUDGET_PACE, SendPace } from '../../nodes/shared/wire/pace';
import { createVirtualClock } from '../helpers/virtualClock';

const SECOND = 1000;

interface Check {
	taskId: string;
	at: number;
}

function budgetedPoller(perSecond: number, statusOf: (taskId: string) => string) {
	const clock = createVirtualClock(0);
	const budget = new SendPace(clock, BUDGET_PACE, perSecond);
	const lane = new Lane(100);
	const checks: Check[] = [];
	/** Refusals by the budget at one virtual instant, per task (a refused check retried at once, for ever, never lets time move). */
	const refusedAt = new Map<string, number>();
	let maxRefusalsAtOnce = 0;
	const poller = new TaskPoller({
		clock,
		limit: async (task, priority) => await lane.run(task, priority),
		spacingMs: (1000 / perSecond) * BUDGET_PACE.gapMargin,
		poll: async (taskId, remainingMs, sent, urgency): Promise<PollAnswer> => {
			try {
				await budget.wait(undefined, clock.now() + remainingMs, urgency);
			} catch (error) {
				const key = `${taskId}@${clock.now()}`;
				const count = (refusedAt.get(key) ?? 0) + 1;
				refusedAt.set(key, count);
				maxRefusalsAtOnce = Math.max(maxRefusalsAtOnce, count);
				// like pollStatus: a rate_limit (PastDeadline) is a passing failure; a guard ends the spin for the test
				return { error: error as Error, passing: count < 200 };
			}
			sent();
			checks.push({ taskId, at: clock.now() });
			return { task: { task_id: taskId, status: statusOf(taskId), result_url: statusOf(taskId) === 'SUCCESS' ? `https://cdn/${taskId}.mp4` : undefined } };
		},
	});
	return { clock, poller, checks, maxRefusalsAtOnce: () => maxRefusalsAtOnce };
}

describe('review-urgency: EDF starvation of young tasks', () => {
	it('a task submitted half a second after ten stuck ones, done from the start, is checked within a few intervals (not only at the others\' Max Wait, nor never)', async () => {
		// Budget 1 check/s (1.1 s apart), Poll Interval 5 s: ten stuck tasks alone ask for 2 checks/s.
		const { clock, poller, checks } = budgetedPoller(1, (taskId) => (taskId === 'young' ? 'SUCCESS' : 'IN_PROGRESS'));
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
		const { clock, poller, maxRefusalsAtOnce } = budgetedPoller(1, () => 'IN_PROGRESS');
		const settings = { intervalMs: 5 * SECOND, maxWaitMs: 30 * SECOND };
		const outcomes: TaskOutcome[] = [];
		for (let i = 0; i < 10; i++) void poller.watch({ task_id: `old${i}`, status: 'QUEUED' }, settings).then((o) => outcomes.push(o));
		await clock.runUntil(() => outcomes.length === 10, 200 * SECOND);
		expect(maxRefusalsAtOnce()).toBeLessThanOrEqual(2);
		// none ends 'unreachable' from the guard: every one times out at Max Wait
		expect(outcomes.map((o) => o.kind)).toEqual(Array(10).fill('timeout'));
	}, 60_000);
});
