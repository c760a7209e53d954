/**
 * The wait loop as generate.ts wires it, on a virtual clock: a status lane, a fixed budget of
 * checks per second (SendPace), and a check that goes out only after its turn. Shared by the
 * tests of the check order (which check gets the next turn when the budget is short).
 */
import { Lane } from '../../nodes/GatewayVideoGenerate/lanes';
import { TaskPoller } from '../../nodes/GatewayVideoGenerate/poller';
import type { PollAnswer } from '../../nodes/GatewayVideoGenerate/pollDecision';
import { BUDGET_PACE, SendPace } from '../../nodes/shared/wire/pace';
import { createVirtualClock } from './virtualClock';

export interface Check {
	taskId: string;
	at: number;
}

/** Refusals of one check at one virtual instant after which the test gives up on it (a spin that never lets time move). */
const SPIN_GUARD = 200;

/** `answerOf` gets the task id and which check of that task it is (1 for the first one that went out). */
export function budgetedPoller(perSecond: number, answerOf: (taskId: string, checkNumber: number) => PollAnswer, laneSlots = 100) {
	const clock = createVirtualClock(0);
	const budget = new SendPace(clock, BUDGET_PACE, perSecond);
	const lane = new Lane(laneSlots);
	const checks: Check[] = [];
	const refusals: Check[] = [];
	const checksOf = new Map<string, number>();
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
				refusals.push({ taskId, at: clock.now() });
				const key = `${taskId}@${clock.now()}`;
				const count = (refusedAt.get(key) ?? 0) + 1;
				refusedAt.set(key, count);
				maxRefusalsAtOnce = Math.max(maxRefusalsAtOnce, count);
				// like pollStatus: no turn (PastDeadline) is a rate_limit, a passing failure
				return { error: error as Error, passing: count < SPIN_GUARD };
			}
			sent();
			checks.push({ taskId, at: clock.now() });
			const checkNumber = (checksOf.get(taskId) ?? 0) + 1;
			checksOf.set(taskId, checkNumber);
			return answerOf(taskId, checkNumber);
		},
	});
	return { clock, poller, checks, refusals, maxRefusalsAtOnce: () => maxRefusalsAtOnce };
}

export const running = (taskId: string): PollAnswer => ({ task: { task_id: taskId, status: 'IN_PROGRESS' } });
export const done = (taskId: string): PollAnswer => ({ task: { task_id: taskId, status: 'SUCCESS', result_url: `https://cdn/${taskId}.mp4` } });
