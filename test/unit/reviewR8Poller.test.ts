/**
 * Hostile review, round four, session eight: the wait loop's refused turns (poller.ts `refused`)
 * and the check queue's slots. Each test states a promise of the wait loop; each was red on the
 * code it was written against.
 */
import { STATUS_DEADLINE_MS } from '../../nodes/GatewayVideoGenerate/taskApi';
import { lanesOf } from '../../nodes/GatewayVideoGenerate/generate';
import { CheckQueue, waitEndOf } from '../../nodes/GatewayVideoGenerate/checkSchedule';
import { TaskPoller } from '../../nodes/GatewayVideoGenerate/poller';
import type { PollAnswer, TaskOutcome } from '../../nodes/GatewayVideoGenerate/poller';
import { GatewayError } from '../../nodes/shared/failures/errors';
import { PastDeadline } from '../../nodes/shared/wire/timing';
import { createVirtualClock } from '../helpers/virtualClock';

const SECOND = 1000;
const stalled = (taskId: string) => new GatewayError({ kind: 'timeout', headline: `Checking video task ${taskId} failed: no answer` });

describe('the wait loop: every wait ends within Max Wait and a moment for the answer', () => {
	// lanesOf(1, 30): 100 slots (MAX_CHECKS_IN_FLIGHT), 36.7 ms apart. 100 tasks with a long Max
	// Wait whose status answers stall (each check held to its 30 s STATUS_DEADLINE_MS, as pollStatus
	// holds it) take every slot; one task with Max Wait 10 s queues behind them. Its turn would come
	// after its wait's end, but a waiter is refused only when the pump runs, and with every slot held
	// the pump sleeps without a timer until a slot frees: 30 s later.
	it('a check waiting for a slot is refused by its wait end, not when a slot frees (every slot held by stalled checks)', async () => {
		const clock = createVirtualClock(0);
		const { checks: queue } = lanesOf(1, 30, clock);
		expect(queue.slots).toBe(100);
		const poller = new TaskPoller({
			clock,
			queue,
			settleBeforeSleep: false,
			poll: async (taskId, remainingMs): Promise<PollAnswer> => {
				await clock.sleep(Math.min(STATUS_DEADLINE_MS, remainingMs));
				return { error: stalled(taskId), passing: true };
			},
		});
		const outcomes = new Map<string, { outcome: TaskOutcome; at: number }>();
		const watch = (taskId: string, maxWaitMs: number, submittedAt: number) =>
			void poller.watch({ task_id: taskId, status: 'QUEUED' }, { intervalMs: 5 * SECOND, maxWaitMs, submittedAt }).then((outcome) => outcomes.set(taskId, { outcome, at: clock.now() }));
		for (let i = 0; i < 100; i++) watch(`long${i}`, 600 * SECOND, 0);
		// 1 ms later: its first check is due last, so every slot is taken when it asks.
		void clock.sleep(1).then(() => watch('short', 10 * SECOND, 1));
		await clock.runUntil(() => outcomes.has('short'), 120 * SECOND);
		poller.stop();
		const short = outcomes.get('short')!;
		expect(short.outcome.kind).toBe('timeout');
		expect(short.at).toBeLessThanOrEqual(waitEndOf({ deadline: 1 + 10 * SECOND }));
	}, 60_000);
});

/** A queue that refuses every turn of `refusedTask` in its task's last `lastMs`, as a full queue does (PastDeadline). */
function refusingQueue(clock: ReturnType<typeof createVirtualClock>, refusedTask: string, deadline: number, lastMs: number): CheckQueue {
	const queue = new CheckQueue(clock, { slots: 10 });
	const take = queue.take.bind(queue);
	queue.take = async (check) => {
		if (check.taskId === refusedTask && clock.now() >= deadline - lastMs) throw new PastDeadline('turn', 5 * SECOND, check.notAfter - clock.now());
		return await take(check);
	};
	return queue;
}

describe('the wait loop: a check the budget gives no turn is no failed check of the gateway', () => {
	// 200 tasks submitted together, Poll Interval 10 s, Max Wait 300 s, a budget of 0.5 checks/s
	// (lanesOf: 2.2 s apart): about 136 checks fit before the wait's end, so the queue refuses the
	// others a turn (PastDeadline) and they ask again every second. refused() feeds each refusal to
	// decideAfterPoll as a failed poll, so after 120 s and 3 refusals FAILURE_RUN_LIMIT ends the wait
	// as "unreachable" at 125 s: 141 of 200 tasks end "Checking video task t2 failed 121 times in a
	// row: it found no turn ...", 175 s before Max Wait, without their check at Max Wait (promise 2:
	// the last checks go before any other) and with words that say the gateway failed 121 times,
	// while it answered every check it was sent. The schedule's property cannot see it: its Max Wait
	// is at most 80 s (under the 120 s of the failure run) and its lastLook looks at timeouts only.
	it('a gateway that answers every check ends no wait as unreachable, nor before Max Wait', async () => {
		const clock = createVirtualClock(0);
		const { checks: queue } = lanesOf(10, 0.5, clock);
		const poller = new TaskPoller({ clock, queue, poll: async (taskId): Promise<PollAnswer> => ({ task: { task_id: taskId, status: 'IN_PROGRESS' } }) });
		const ended: Array<{ outcome: TaskOutcome; at: number }> = [];
		for (let i = 0; i < 200; i++) {
			void poller.watch({ task_id: `t${i}`, status: 'QUEUED' }, { intervalMs: 10 * SECOND, maxWaitMs: 300 * SECOND, submittedAt: 0 }).then((outcome) => ended.push({ outcome, at: clock.now() }));
		}
		await clock.runUntil(() => ended.length === 200, 400 * SECOND);
		const early = ended.filter(({ outcome, at }) => outcome.kind !== 'timeout' || at < 300 * SECOND - 1000);
		expect(early.map(({ outcome, at }) => `${outcome.record.task_id} ${outcome.kind} at ${at}`)).toEqual([]);
	}, 60_000);
});

/**
 * One task, Poll Interval 130 s, whose only check the gateway answers 429, and whose checks the
 * queue refuses a turn from `refusedFrom` on: how its wait ended, and the checks sent.
 */
async function refusedAfterA429(maxWaitMs: number, refusedFrom: number) {
	const clock = createVirtualClock(0);
	const queue = refusingQueue(clock, 'a', maxWaitMs, maxWaitMs - refusedFrom);
	let polls = 0;
	const poller = new TaskPoller({
		clock,
		queue,
		poll: async (taskId): Promise<PollAnswer> => {
			polls++;
			return { error: new GatewayError({ kind: 'rate_limit', headline: `Checking video task ${taskId} failed: 429`, status: 429 }), passing: true };
		},
	});
	let outcome: TaskOutcome | undefined;
	void poller.watch({ task_id: 'a', status: 'QUEUED' }, { intervalMs: 130 * SECOND, maxWaitMs, submittedAt: 0 }).then((ended) => (outcome = ended));
	await clock.runUntil(() => outcome !== undefined, maxWaitMs + 100 * SECOND);
	return { polls, outcome };
}

describe('the wait loop: one rule for a run of failed checks', () => {
	// Poll Interval 130 s, Max Wait 260 s. The check at 130 s is answered 429 (failedPolls 1, failing
	// since 130 s). Its last check is refused a turn at 260 s and 261 s (the wait ends at 261.5 s).
	// A refused turn before the last second counts in the run of failures (decideAfterPoll's state);
	// in the last second (the new path in refused()) it is counted for the decision and then dropped,
	// so the second refusal counts the same failure again: one 429 and two refusals over 131 s are
	// three failed checks over two minutes, FAILURE_RUN_LIMIT's "unreachable", but it ends as a
	// timeout. Whichever the rule (count a refused turn or not), it must be the same on both paths.
	it('refusals in the last second count in the failure run as refusals before it do', async () => {
		const lastSecond = await refusedAfterA429(260 * SECOND, 259 * SECOND);
		// The same 429 and two refusals, at the same times, with Max Wait 400 s: before the last second.
		const before = await refusedAfterA429(400 * SECOND, 250 * SECOND);
		expect([lastSecond.polls, before.polls]).toEqual([1, 1]);
		expect(lastSecond.outcome?.kind).toBe(before.outcome?.kind);
	}, 60_000);
});
