/**
 * Bench row 11e on a virtual clock: the check queue and the wait loop as generate.ts wires them
 * (10 checks/s with the budget's margin, 100 slots, jittered Retry-After), the bench gateway's
 * seeded draws (bench/videoGateway.js: submit 1–3 s, status 0.5–3 s, done 5–60 s after the submit's
 * answer) and its refusals: every 7th submit and every 2nd check that arrives answered 429 at once,
 * Retry-After 1 s and 3 s in turn. Every video is done long before its Max Wait (120 s), so any
 * item not reported done is a false "still running" or "not seen done".
 * Jitter seeds 1, 5 and 6 each lost 2 or 3 videos when a check the queue refused a turn (its rank
 * on time, below a backlog of checks that fell behind) was put off to its Max Wait, where the
 * gateway refused it again.
 */
import { CheckQueue, budgetSpacingMs } from '../../nodes/GatewayVideoGenerate/checkSchedule';
import { TaskPoller } from '../../nodes/GatewayVideoGenerate/poller';
import type { PollAnswer, TaskOutcome } from '../../nodes/GatewayVideoGenerate/poller';
import { GatewayError } from '../../nodes/shared/failures/errors';
import { done, running } from '../helpers/budgetedPoller';
import { createVirtualClock } from '../helpers/virtualClock';
const { REALISTIC, unit } = require('../../bench/videoGateway') as {
	REALISTIC: Record<'submitMs' | 'statusMs' | 'doneMs', [number, number]>;
	unit: (seed: number, ...keys: Array<string | number>) => number;
};

const SECOND = 1000;
const ROW = { concurrency: 10, checksPerSecond: 10, slots: 100, intervalMs: 30 * SECOND, maxWaitMs: 120 * SECOND, refusedSubmitEvery: 7, refusedCheckEvery: 2 };
const between = ([low, high]: [number, number], u: number) => Math.round(low + (high - low) * u);

/** One replay of row 11e: `videos` tasks, the gateway drawn from `seed`, the Retry-After jitter from `jitterSeed`. */
async function replay(videos: number, seed = 19, jitterSeed = 1) {
	const clock = createVirtualClock(0);
	const queue = new CheckQueue(clock, { slots: ROW.slots, spacingMs: budgetSpacingMs(ROW.checksPerSecond) });
	const doneAt = new Map<string, number>();
	const checksOf = new Map<string, number>();
	const refusedOf = { submit: 0, status: 0 };
	const retryAfterMs = (kind: 'submit' | 'status') => (refusedOf[kind]++ % 2 === 0 ? 1 : 3) * SECOND;
	let checksSeen = 0;
	let jitters = 0;
	const poll = async (taskId: string): Promise<PollAnswer> => {
		if (++checksSeen % ROW.refusedCheckEvery === 0) {
			const error = new GatewayError({ kind: 'rate_limit', headline: 'rate limit reached, retry later', status: 429, retryAfterMs: retryAfterMs('status') });
			return { error, passing: true };
		}
		const check = (checksOf.get(taskId) ?? 0) + 1;
		checksOf.set(taskId, check);
		await clock.sleep(between(REALISTIC.statusMs, unit(seed, 'status', Number(taskId.slice(1)), check)));
		return clock.now() >= (doneAt.get(taskId) as number) ? done(taskId) : running(taskId);
	};
	const poller = new TaskPoller({ clock, queue, poll, jitter: () => unit(jitterSeed, 'jitter', jitters++) });
	const outcomes = new Map<string, TaskOutcome>();
	let submits = 0;
	let next = 0;
	/** One submit slot: a refused submit holds its slot for its Retry-After and goes again; Max Wait counts from the first try. */
	const slot = async () => {
		for (let index = next++; index < videos; index = next++) {
			const taskId = `v${index}`;
			const submittedAt = clock.now();
			while (++submits % ROW.refusedSubmitEvery === 0) await clock.sleep(retryAfterMs('submit'));
			await clock.sleep(between(REALISTIC.submitMs, unit(seed, 'submit', index)));
			doneAt.set(taskId, clock.now() + between(REALISTIC.doneMs, unit(seed, 'done', index)));
			void poller.watch({ task_id: taskId, status: 'QUEUED' }, { intervalMs: ROW.intervalMs, maxWaitMs: ROW.maxWaitMs, submittedAt }).then((outcome) => outcomes.set(taskId, outcome));
		}
	};
	for (let i = 0; i < ROW.concurrency; i++) void slot();
	await clock.runUntil(() => outcomes.size === videos, 2000 * SECOND);
	const notDone = [...outcomes].filter(([, outcome]) => outcome.kind !== 'success').map(([taskId, outcome]) => `${taskId}: ${outcome.kind}${outcome.kind === 'timeout' && outcome.lastCheckError ? ' (last check failed)' : ''}`);
	return { notDone, checks: checksSeen, makespanMs: clock.now() };
}

describe('checks at a gateway that refuses every second one (bench row 11e)', () => {
	it.each([1, 5, 6])('1,000 videos, every one done before its Max Wait, are all seen done (Retry-After jitter %i)', async (jitterSeed) => {
		const { notDone } = await replay(1000, 19, jitterSeed);
		expect(notDone).toEqual([]);
	}, 300_000);
});
