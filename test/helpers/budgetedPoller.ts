/**
 * The wait loop as generate.ts wires it, on a virtual clock: the check queue (checkSchedule.ts)
 * with its slots and its budget of checks per second, a check going out when the queue gives its
 * turn. Shared by the tests of the check order (which check gets the next turn when the budget is
 * short); refusals are the turns the queue refused.
 */
import { CheckQueue, budgetSpacingMs } from '../../nodes/GatewayVideoGenerate/checkSchedule';
import { TaskPoller } from '../../nodes/GatewayVideoGenerate/poller';
import type { PollAnswer } from '../../nodes/GatewayVideoGenerate/poller';
import { createVirtualClock } from './virtualClock';

export interface Check {
	taskId: string;
	at: number;
}

/** `answerOf` gets the task id and which check of that task it is (1 for the first one that went out). */
export function budgetedPoller(perSecond: number, answerOf: (taskId: string, checkNumber: number) => PollAnswer, laneSlots = 100) {
	const clock = createVirtualClock(0);
	const queue = new CheckQueue(clock, { slots: laneSlots, spacingMs: budgetSpacingMs(perSecond) });
	const checks: Check[] = [];
	const refusals: Check[] = [];
	const checksOf = new Map<string, number>();
	const refusedAt = new Map<string, number>();
	let maxRefusalsAtOnce = 0;
	// Records every turn the queue refused.
	const take = queue.take.bind(queue);
	queue.take = async (check) => {
		try {
			return await take(check);
		} catch (error) {
			const { taskId } = check;
			refusals.push({ taskId, at: clock.now() });
			const key = `${taskId}@${clock.now()}`;
			const count = (refusedAt.get(key) ?? 0) + 1;
			refusedAt.set(key, count);
			maxRefusalsAtOnce = Math.max(maxRefusalsAtOnce, count);
			throw error;
		}
	};
	const poller = new TaskPoller({
		clock,
		queue,
		poll: async (taskId): Promise<PollAnswer> => {
			checks.push({ taskId, at: clock.now() });
			const checkNumber = (checksOf.get(taskId) ?? 0) + 1;
			checksOf.set(taskId, checkNumber);
			return answerOf(taskId, checkNumber);
		},
	});
	return { clock, poller, queue, checks, refusals, maxRefusalsAtOnce: () => maxRefusalsAtOnce };
}

export const running = (taskId: string): PollAnswer => ({ task: { task_id: taskId, status: 'IN_PROGRESS' } });
export const done = (taskId: string): PollAnswer => ({ task: { task_id: taskId, status: 'SUCCESS', result_url: `https://cdn/${taskId}.mp4` } });
