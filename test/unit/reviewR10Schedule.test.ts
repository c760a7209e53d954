/**
 * Hostile review R10 (round four, tenth session) of 48ff290: the status-check schedule's widened
 * "near Max Wait" tier (rankOf's roundMs, since taken back) and the answer's hand-on
 * (poller.queueDue). Each test was red (it.failing) on 48ff290; the third is older than it.
 */
import { lanesOf } from '../../nodes/GatewayVideoGenerate/generate';
import { TaskPoller } from '../../nodes/GatewayVideoGenerate/poller';
import type { PollAnswer, TaskOutcome } from '../../nodes/GatewayVideoGenerate/poller';
import { GatewayError } from '../../nodes/shared/failures/errors';
import { createVirtualClock } from '../helpers/virtualClock';

interface Spec {
	id: string;
	startAt: number;
	intervalMs: number;
	maxWaitMs: number;
	doneAt: number;
}

/** Runs the wait loop as generate.ts wires it (lanesOf's check queue) on a virtual clock; returns every check's send time per task. */
async function runMixed(specs: Spec[], checksPerSecond: number, untilMs: number, latencyMs = 0, alternateRetryAfterMs = 0) {
	const clock = createVirtualClock(0);
	const { checks: queue } = lanesOf(10, checksPerSecond, clock);
	const sends = new Map<string, number[]>(specs.map((spec) => [spec.id, []]));
	const byId = new Map(specs.map((spec) => [spec.id, spec]));
	const outcomes = new Map<string, TaskOutcome>();
	let watched = 0;
	let sent = 0;
	const refusedAt = new Set<string>();
	let maxWatched = 0;
	let jitterSeed = 99;
	const poller = new TaskPoller({
		clock,
		queue,
		jitter: () => (jitterSeed = (jitterSeed * 1664525 + 1013904223) >>> 0) / 2 ** 32,
		poll: async (taskId): Promise<PollAnswer> => {
			const at = clock.now();
			sends.get(taskId)?.push(at);
			sent++;
			if (alternateRetryAfterMs > 0 && sent % 2 === 0) {
				const retryAfterMs = sent % 4 === 0 ? 3 * alternateRetryAfterMs : alternateRetryAfterMs;
				refusedAt.add(`${taskId}@${at}`);
				return { error: new GatewayError({ kind: 'rate_limit', headline: `Checking video task ${taskId} failed: 429`, status: 429, retryAfterMs }), passing: true };
			}
			if (latencyMs > 0) await clock.sleep(latencyMs);
			const done = at >= (byId.get(taskId) as Spec).doneAt;
			return { task: { task_id: taskId, status: done ? 'SUCCESS' : 'IN_PROGRESS', ...(done ? { result_url: `https://cdn/${taskId}.mp4` } : {}) } };
		},
	});
	let settled = 0;
	const start = (spec: Spec) => {
		watched++;
		maxWatched = Math.max(maxWatched, watched);
		void poller.watch({ task_id: spec.id, status: 'QUEUED' }, { intervalMs: spec.intervalMs, maxWaitMs: spec.maxWaitMs, submittedAt: spec.startAt }).then((outcome) => {
			outcomes.set(spec.id, outcome);
			watched--;
			settled++;
		});
	};
	for (const spec of [...specs].sort((a, b) => a.startAt - b.startAt)) {
		if (spec.startAt > clock.now()) void clock.sleep(spec.startAt - clock.now()).then(() => start(spec));
		else start(spec);
	}
	await clock.runUntil(() => settled === specs.length || clock.now() >= untilMs, untilMs + 10_000);
	poller.stop();
	await poller.finished();
	return { sends, outcomes, maxWatched, spacingMs: queue.spacingMs, refusedAt };
}

/** The longest time between two of a task's checks (from its start), up to `until`. */
function longestGap(times: readonly number[], startAt: number, until: number): number {
	let previous = startAt;
	let longest = 0;
	for (const at of [...times.filter((t) => t <= until), until]) {
		longest = Math.max(longest, at - previous);
		previous = at;
	}
	return longest;
}

describe('R10: the widened near-Max-Wait tier', () => {
	/**
	 * Proved red on 48ff290 (fixed by taking the widened tier back): rankOf ranked a behind check by its Max Wait whenever its task is within one Poll
	 * Interval plus a round (watched tasks x the budget's gap) of it. Items of one run may have
	 * different Max Waits (options.maxWaitSeconds is read per item; resumed tasks too). While items with
	 * a short Max Wait keep coming (one every 4 s, Max Wait 120 s, about 32 watched, a round of ~35 s),
	 * their behind checks are in BehindNearMaxWait and outrank, for as long as the stream lasts, the
	 * "turns" (tier Behind) of a video with a long Max Wait (1 h): done at 90 s, it got no check from
	 * 85 s to 659 s and was seen done 9.5 minutes late; its fair share (3 turns per watched task, the
	 * property's own formula) is ~117 s. With roundMs 0 (the rule before 48ff290) the same load checks
	 * it at 110 s: this test passes there. The property hides it: its fairShare bound counts 3 turns per
	 * task of the whole load (151 here: 498 s), not per task watched (the `watched` it records is
	 * never read), and all its tasks share one Max Wait.
	 */
	it('a video with a long Max Wait, done at 90 s, among a stream of items with a 120 s Max Wait at 1 check/s: seen done within its fair share of turns (2 per watched task), not starved until the stream ends', async () => {
		const intervalMs = 10_000;
		const specs: Spec[] = [{ id: 'long', startAt: 0, intervalMs, maxWaitMs: 3_600_000, doneAt: 90_000 }];
		for (let i = 0; i < 150; i++) specs.push({ id: `s${i}`, startAt: 1000 + i * 4000, intervalMs, maxWaitMs: 120_000, doneAt: Number.POSITIVE_INFINITY });
		const run = await runMixed(specs, 1, 900_000);
		const fairShareMs = intervalMs + 500 + (2 * run.maxWatched + 1) * run.spacingMs;
		const longSends = run.sends.get('long') as number[];
		const seenDoneAt = longSends.find((at) => at >= 90_000);
		expect({ kind: run.outcomes.get('long')?.kind, seenLate: (seenDoneAt ?? Number.POSITIVE_INFINITY) > 90_000 + fairShareMs, sends: longSends }).toEqual({ kind: 'success', seenLate: false, sends: longSends });
	});
});

describe('R10: the widened tier against the property\'s own fairShare bound', () => {
	/**
	 * Proved red on 48ff290 (fixed by taking the widened tier back): with the node's defaults (10 checks/s, Poll Interval 5 s, Max Wait 900 s) and a run that
	 * submits steadily (800 videos, one every 1.1 s, as a slow submit lane does), the round is ~88 s, so
	 * the checks of every video within ~93 s of its Max Wait outrank the turns of all the others, and
	 * they alone keep the budget busy. A video first checked early then waits until it is near its own
	 * Max Wait: s561 was checked at 61.7, 129.7 and 205.8 s after its submit and then not until 815.0 s,
	 * a wait of 609 s; the property's fairShare bound (interval + latency + BEHIND_MS + (3N+1) turns,
	 * N = every task of the load, 800) is 269.6 s. With roundMs 0 (before 48ff290) the worst wait on this
	 * load is 102.5 s: this test passes there (now 592 of the 800 videos wait past the bound). The property never met such a load: its submits are all
	 * within 20 s (submitSpreadMs), or row 11e's ten-at-a-time burst.
	 */
	it('800 videos submitted one every 1.1 s at the defaults (10 checks/s, Poll Interval 5 s, Max Wait 900 s): no video waits between two checks longer than the property\'s fairShare bound (2N+1 turns)', async () => {
		const intervalMs = 5000;
		const maxWaitMs = 900_000;
		const specs: Spec[] = Array.from({ length: 800 }, (_, i) => ({ id: `v${i}`, startAt: i * 1100, intervalMs, maxWaitMs, doneAt: Number.POSITIVE_INFINITY }));
		const run = await runMixed(specs, 10, 800 * 1100 + maxWaitMs + 5000);
		const fairShareMs = intervalMs + 500 + (2 * specs.length + 1) * run.spacingMs;
		const starved = specs
			.map((spec) => ({ id: spec.id, gap: longestGap(run.sends.get(spec.id) as number[], spec.startAt, spec.startAt + maxWaitMs - 1000) }))
			.filter(({ gap }) => gap > fairShareMs);
		expect({ fairShareMs: Math.round(fairShareMs), starved }).toEqual({ fairShareMs: Math.round(fairShareMs), starved: [] });
	}, 120_000);
});

describe('R10: a run of refused checks under an overload', () => {
	/**
	 * Proved red, older than 48ff290 (with roundMs 0 the same load lost 161); fixed: a run of failures
	 * counts only time in which the gateway answered no check of the run: a gateway that answers every
	 * second status check with a 429 (Retry-After 1 s, every other one 3 s), row 11e's proxy as the
	 * property models it, at the node's defaults (10 checks/s, Poll Interval 5 s, Max Wait 900 s) with a
	 * steady submit stream (800 videos, one every 1.1 s). Under the overload a refused check asked back
	 * in 1 s gets its turn 15-40 s later, so a task's checks are sparse, and 3-7 refusals in a row span the
	 * two minutes of FAILURE_RUN_LIMIT: the wait ends "unreachable" (v23: refused at 164.6, 182.2,
	 * 201.3, 222.2, 244.7, 268.6, 294.6 s; done at 674 s). 155 of 800 videos end so, each done before its Max Wait
	 * (without Continue On Fail the first one fails the whole run). The time counted as "failing" is
	 * mostly the schedule's own wait for a turn (cf. the earlier fix "a refused turn is no check"). The
	 * property cannot see it: its unreachable check skips refusing loads, and row 11e's Max Wait (120 s)
	 * is too short for a two-minute run. A 50 % chance refusal instead of every second one loses 165.
	 */
	it('800 videos one every 1.1 s at the defaults, every second check refused (Retry-After 1 s / 3 s): no wait ends unreachable while the gateway answers half the checks', async () => {
		const intervalMs = 5000;
		const maxWaitMs = 900_000;
		let seed = 7;
		const random = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32;
		const specs: Spec[] = Array.from({ length: 800 }, (_, i) => ({ id: `v${i}`, startAt: i * 1100, intervalMs, maxWaitMs, doneAt: i * 1100 + Math.floor(random() * maxWaitMs) }));
		const run = await runMixed(specs, 10, 800 * 1100 + maxWaitMs + 5000, 0, 1000);
		const unreachable = specs.filter((spec) => run.outcomes.get(spec.id)?.kind === 'unreachable').map((spec) => spec.id);
		expect({ count: unreachable.length, first: unreachable.slice(0, 5) }).toEqual({ count: 0, first: [] });
	}, 120_000);
});
