import { BEHIND_MS, RETRY_JITTER, Tier, budgetIsShort, earliestSendAt, latestSendTimes, planTick, rankOf } from '../../nodes/GatewayVideoGenerate/checkSchedule';
import { compareRanks } from '../../nodes/shared/wire/pace';
import type { CheckRank } from '../../nodes/GatewayVideoGenerate/checkSchedule';
import { FAILURE_RUN_LIMIT, decideAfterPoll, failureRunIsFatal, isPassingPollFailure } from '../../nodes/GatewayVideoGenerate/poller';
import { LAST_ANSWER_MS, firstCheckAt, waitEndOf } from '../../nodes/GatewayVideoGenerate/checkSchedule';
import type { WatchState } from '../../nodes/GatewayVideoGenerate/poller';
import { GatewayError } from '../../nodes/shared/failures/errors';
import type { GatewayErrorKind } from '../../nodes/shared/failures/errors';

const failure = (kind: GatewayErrorKind, status?: number) => new GatewayError({ kind, headline: `Checking video task t failed: ${kind}`, status });

describe('poll failures', () => {
	it('retries rate limits, server errors, non-JSON answers and dropped or timed-out connections', () => {
		const passing = [failure('rate_limit', 429), failure('server', 502), failure('server', 500), failure('server', 200), failure('protocol', 200), failure('network'), failure('timeout'), failure('timeout', 408)];
		for (const error of passing) expect([error.kind, error.status, isPassingPollFailure(error)]).toEqual([error.kind, error.status, true]);
	});

	it('does not retry what waiting will not fix, whatever the status: a key refused in a 200, no quota, an unknown task, a bug', () => {
		const permanent = [failure('auth', 200), failure('auth', 401), failure('quota', 403), failure('not_found', 404), failure('bad_request', 400), failure('unknown_model', 503), failure('redirect', 302), failure('cancelled'), failure('task_failed')];
		for (const error of permanent) expect([error.kind, error.status, isPassingPollFailure(error)]).toEqual([error.kind, error.status, false]);
		expect(isPassingPollFailure(new Error('HTTP 502'))).toBe(false);
		expect(isPassingPollFailure(undefined)).toBe(false);
	});

	it('gives up on a run of failures only after two minutes and three polls', () => {
		expect(FAILURE_RUN_LIMIT).toEqual({ minFailedPolls: 3, minDurationMs: 120_000 });
		expect(failureRunIsFatal(2, 0, 200_000)).toBe(false);
		expect(failureRunIsFatal(10, 0, 119_999)).toBe(false);
		expect(failureRunIsFatal(3, 0, 120_000)).toBe(true);
	});
});

describe('planTick', () => {
	const check = (name: string, dueAt: number, notBefore?: number) => ({ name, dueAt, state: { intervalMs: 30_000, deadline: 900_000, notBefore } });
	const names = (checks: Array<{ name: string }>) => checks.map(({ name }) => name);
	it('wakes at the earliest time a check must go out, never later (the ones close after it go along early, in the order they go out)', () => {
		expect(planTick([check('a', 5000)], [30_000], 0).wakeAt).toBe(5000);
		const tick = planTick([check('late', 9000), check('b', 5900), check('a', 5000), check('c', 6001)], [30_000], 0);
		expect(tick.wakeAt).toBe(5000);
		expect(names(tick.dueAt(5000))).toEqual(['a', 'b']);
		expect(names(tick.dueAt(8000))).toEqual(['a', 'b', 'c', 'late']);
	});
	it('sends no check before a Retry-After allows, and none more than half an interval early when the budget is short', () => {
		expect(planTick([check('a', 5000, 7000)], [30_000], 0).wakeAt).toBe(7000);
		expect(planTick([check('a', 50_000), check('b', 50_000)], [30_000, 30_000], 40_000).wakeAt).toBe(35_000);
	});
});

describe('latestSendTimes', () => {
	it('plans checks due together back from the last due time, one budget step apart, so none goes out after it is due', () => {
		expect(latestSendTimes([5000, 5000, 5000], 100)).toEqual([5000, 4900, 4800]);
		// spread out enough already: each at its due time
		expect(latestSendTimes([9000, 5000, 7000], 100)).toEqual([9000, 5000, 7000]);
		// a crowd before a lone one: only the crowd moves
		expect(latestSendTimes([5000, 5050, 5100, 8000], 100)).toEqual([4900, 5000, 5100, 8000]);
		// no budget: due times as they are
		expect(latestSendTimes([5000, 5000], 0)).toEqual([5000, 5000]);
	});
});

describe('decideAfterPoll', () => {
	const state: WatchState = { record: { task_id: 't', status: 'QUEUED' }, submittedAt: 0, intervalMs: 5000, deadline: 30_000, failedPolls: 0 };
	const running = { task: { task_id: 't', status: 'IN_PROGRESS', progress: '40%' } };

	it('plans the next poll one interval after this one while the task runs, and notes when the gateway last told its state', () => {
		expect(decideAfterPoll(state, running, 5000)).toEqual({ nextPollAt: 10_000, state: { ...state, record: running.task, failingSince: undefined, lastSeenAt: 5000, lastSentAt: 5000, lastSeenSentAt: 5000 } });
		expect(decideAfterPoll(state, running, 5000, 5800)).toMatchObject({ state: { lastSeenAt: 5800 } });
		// a failed check tells nothing
		expect(decideAfterPoll({ ...state, lastSeenAt: 1000 }, { error: failure('server', 502), passing: true }, 5000)).toMatchObject({ state: { lastSeenAt: 1000 } });
	});

	it('after a 429 with a Retry-After, plans the next check when it says: sooner than the interval, or later, never before it', () => {
		const refused = (retryAfterMs: number) => ({ error: Object.assign(failure('rate_limit', 429), { retryAfterMs }), passing: true });
		const soon = decideAfterPoll(state, refused(3000), 5000, 5010);
		expect(soon).toMatchObject({ nextPollAt: 8010, state: { notBefore: 8010, failedPolls: 1 } });
		expect(decideAfterPoll(state, refused(9000), 5000, 5010)).toMatchObject({ nextPollAt: 14_010, state: { notBefore: 14_010 } });
		// never past Max Wait; an answer clears it
		const beyond = decideAfterPoll(state, refused(60_000), 5000, 5010);
		expect(beyond).toMatchObject({ nextPollAt: 30_000 });
		// a Retry-After past Max Wait is not kept: the poller would hold the last check (and the run) until it
		expect((beyond as { state: WatchState }).state.notBefore).toBeUndefined();
		const after = decideAfterPoll((soon as { state: WatchState }).state, running, 8010);
		expect(after).toMatchObject({ nextPollAt: 13_010 });
		expect((after as { state: WatchState }).state.notBefore).toBeUndefined();
	});

	it('ends at once on a state that means the task is over without a video', () => {
		for (const status of ['CANCELLED', 'canceled', 'Expired', 'error', 'TIMEOUT', 'rejected', 'FAILED']) {
			expect(decideAfterPoll(state, { task: { task_id: 't', status } }, 5000)).toMatchObject({ outcome: { kind: 'failure' } });
		}
		for (const status of ['NOT_START', 'SUBMITTED', 'UNKNOWN', 'BRAND_NEW']) {
			expect(decideAfterPoll(state, { task: { task_id: 't', status } }, 5000)).toMatchObject({ nextPollAt: 10_000 });
		}
	});

	it('ends with success or failure', () => {
		const success = decideAfterPoll(state, { task: { task_id: 't', status: 'success', result_url: 'u' } }, 5000);
		expect(success).toEqual({ outcome: { kind: 'success', record: { task_id: 't', status: 'SUCCESS', result_url: 'u' } } });
		const failure = decideAfterPoll(state, { task: { task_id: 't', status: 'FAILURE', fail_reason: 'nope' } }, 5000);
		expect(failure).toMatchObject({ outcome: { kind: 'failure', record: { fail_reason: 'nope' } } });
	});

	it('checks last at Max Wait and times out after that check, without sleeping on', () => {
		expect(decideAfterPoll(state, running, 25_000)).toMatchObject({ nextPollAt: 30_000 });
		expect(decideAfterPoll(state, running, 30_000)).toEqual({ outcome: { kind: 'timeout', record: running.task, waitedMs: 30_000 } });
		// an interval that does not fit before Max Wait: the last check comes at Max Wait itself
		expect(decideAfterPoll({ ...state, deadline: 27_000 }, running, 25_000)).toMatchObject({ nextPollAt: 27_000 });
		expect(decideAfterPoll(state, running, 26_100)).toMatchObject({ nextPollAt: 30_000 });
		// a check sent within a second of Max Wait (a tick gathering close ones) is the last
		expect(decideAfterPoll(state, running, 29_300)).toMatchObject({ outcome: { kind: 'timeout' } });
	});

	it('a last check that failed (a 429 at Max Wait) ends the wait saying so: the task was not seen running, only not seen done', () => {
		const refused = failure('rate_limit');
		expect(decideAfterPoll(state, { error: refused, passing: true }, 30_000)).toEqual({ outcome: { kind: 'timeout', record: state.record, waitedMs: 30_000, lastCheckError: refused, failedPolls: 1 } });
		// a check answered at Max Wait carries no such error
		expect(decideAfterPoll(state, running, 30_000)).not.toHaveProperty('outcome.lastCheckError');
	});

	it('says how long the task waited since its submit, not when the last check was sent', () => {
		// the last check went out at 30 s and was answered at 33 s: 33 s of waiting
		expect(decideAfterPoll(state, running, 30_000, 33_000)).toMatchObject({ outcome: { kind: 'timeout', waitedMs: 33_000 } });
		expect(decideAfterPoll({ ...state, submittedAt: 2000 }, running, 30_000, 31_000)).toMatchObject({ outcome: { kind: 'timeout', waitedMs: 29_000 } });
	});

	it('checks a task first one interval after the submit answered, or at Max Wait when that comes first', () => {
		expect(firstCheckAt(state, 1000)).toBe(6000);
		expect(firstCheckAt({ ...state, deadline: 4000 }, 1000)).toBe(4000);
	});

	it('counts passing failures, resets the count on an answer, and keeps the last known status', () => {
		const error = failure('server', 502);
		const first = decideAfterPoll(state, { error, passing: true }, 5000);
		expect(first).toEqual({ nextPollAt: 10_000, state: { ...state, failedPolls: 1, failingSince: 5000, lastSentAt: 5000 } });
		const second = decideAfterPoll((first as { state: WatchState }).state, { error, passing: true }, 10_000);
		expect(second).toMatchObject({ state: { failedPolls: 2, failingSince: 5000 } });
		const answered = decideAfterPoll((second as { state: WatchState }).state, running, 15_000);
		expect(answered).toMatchObject({ state: { failedPolls: 0, failingSince: undefined } });
	});

	it('gives up on a long run of passing failures, and at once on a permanent one', () => {
		const long: WatchState = { ...state, deadline: 900_000, failedPolls: 23, failingSince: 5000 };
		const error = failure('server', 503);
		expect(decideAfterPoll(long, { error, passing: true }, 125_000)).toEqual({
			outcome: { kind: 'unreachable', record: state.record, error, failedPolls: 24 },
		});
		expect(decideAfterPoll(state, { error, passing: false }, 5000)).toMatchObject({ outcome: { kind: 'unreachable', failedPolls: 1 } });
	});

	it('counts a run of failures only from when the gateway last told any task of the run its state: one that answers others is there (R10)', () => {
		const long: WatchState = { ...state, deadline: 900_000, failedPolls: 23, failingSince: 5000 };
		const refused = failure('rate_limit', 429);
		// another task's check was answered at 60 s: the run counts from there, 65 s, not yet two minutes
		expect(decideAfterPoll(long, { error: refused, passing: true }, 125_000, 125_000, 0, 60_000)).toMatchObject({ state: { failedPolls: 24, failingSince: 5000 } });
		// two minutes after that answer, with no other since, the gateway is taken for gone
		expect(decideAfterPoll(long, { error: refused, passing: true }, 180_000, 180_000, 0, 60_000)).toMatchObject({ outcome: { kind: 'unreachable', failedPolls: 24 } });
	});
});

describe('the end of the wait', () => {
	const state: WatchState = { record: { task_id: 't', status: 'QUEUED' }, submittedAt: 0, intervalMs: 5000, deadline: 30_000, failedPolls: 0 };
	const running = { task: { task_id: 't', status: 'IN_PROGRESS', progress: '40%' } };

	it('ends a moment after Max Wait: the last answer, no more (within Max Wait + 2 s)', () => {
		expect(waitEndOf(state)).toBe(30_000 + LAST_ANSWER_MS);
		expect(waitEndOf(state) - state.deadline).toBeLessThan(2000);
	});

	it('ends the wait when an answer (or a failed poll) came only at the wait end, even when the next poll would fit', () => {
		// a poll sent at 10 s that dripped until the wait end: no further poll, a timeout quoting the last status
		const dripped = decideAfterPoll(state, { error: failure('timeout'), passing: true }, 10_000, waitEndOf(state));
		expect(dripped).toEqual({ outcome: { kind: 'timeout', record: state.record, waitedMs: waitEndOf(state), lastCheckError: expect.any(GatewayError), failedPolls: 1 } });
		expect(decideAfterPoll(state, running, 10_000, waitEndOf(state))).toMatchObject({ outcome: { kind: 'timeout', record: running.task } });
		// an answer a little late, within the wait, plans the next poll as usual
		expect(decideAfterPoll(state, running, 10_000, 29_000)).toMatchObject({ nextPollAt: 15_000 });
	});

	it('a terminal answer at the wait end still counts: the task is done', () => {
		const done = decideAfterPoll(state, { task: { task_id: 't', status: 'CANCELLED', fail_reason: 'expired in queue' } }, 30_000, waitEndOf(state));
		expect(done).toEqual({ outcome: { kind: 'failure', record: { task_id: 't', status: 'CANCELLED', fail_reason: 'expired in queue' } } });
	});
});

describe('a check sent again after a Retry-After (issue 19, bench row 11e)', () => {
	const state: WatchState = { record: { task_id: 't', status: 'IN_PROGRESS' }, submittedAt: 0, intervalMs: 30_000, deadline: 120_000, failedPolls: 0 };
	const refused = { error: Object.assign(new GatewayError({ kind: 'rate_limit', headline: 'Checking video task t failed: 429', status: 429 }), { retryAfterMs: 3000 }), passing: true };
	it('goes no sooner than it says, and up to a quarter of the wait later by chance, so that retries fall out of step with a gateway refusing by turn', () => {
		expect(decideAfterPoll(state, refused, 60_000, 60_500, 0)).toMatchObject({ nextPollAt: 63_500 });
		expect(decideAfterPoll(state, refused, 60_000, 60_500, 0.999)).toMatchObject({ nextPollAt: 63_500 + Math.round(3000 * RETRY_JITTER * 0.999) });
		expect(RETRY_JITTER).toBeLessThanOrEqual(0.25);
	});
});

describe('rankOf (was checkUrgency; a rank is a pair now, compared with compareRanks): last checks first; on time by due time; behind: near Max Wait, then by last send (issue 19, rows 8b, 11a, 11b, 11e)', () => {
	const task = (deadline: number, lastSentAt?: number) => ({ deadline, submittedAt: 0, lastSentAt, intervalMs: 30_000 });
	it('a check on time goes by its due time, whatever its task', () => {
		expect(compareRanks(rankOf(task(150_000), 31_000, 30_900), rankOf(task(120_000), 31_500, 30_900))).toBeLessThan(0);
		// within BEHIND_MS of its due time it is still on time
		expect(rankOf(task(120_000), 60_000, 60_000 + BEHIND_MS)).toEqual([Tier.OnTime, 60_000]);
	});
	it('a check more than BEHIND_MS past its due time goes before every check on time (epoch times too)', () => {
		const now = 60_000 + BEHIND_MS + 1;
		expect(compareRanks(rankOf(task(150_000, 50_000), 60_000, now), rankOf(task(120_000), 60_400, now))).toBeLessThan(0);
		const epoch = Date.now();
		const behind = { deadline: epoch + 120_000, submittedAt: epoch - 60_000, lastSentAt: epoch - 1000, intervalMs: 30_000 };
		expect(compareRanks(rankOf(behind, epoch - 1000, epoch), rankOf({ ...behind, deadline: epoch + 60_000 }, epoch, epoch))).toBeLessThan(0);
	});
	it('last checks first (nearest Max Wait first), then behind checks in their last interval (nearest Max Wait first), then the longest since its last send', () => {
		const now = 200_000;
		const lastNear = rankOf(task(120_000, 190_000), 120_000, now);
		// in its last second (a check due at Max Wait but sent earlier is routine: counterexample of checkSchedule.property.test.ts)
		const lastFar = rankOf(task(200_500, 190_000), 200_500, now);
		const nearA = rankOf(task(215_000, 190_000), 180_000, now);
		const nearB = rankOf(task(225_000, 100_000), 180_000, now);
		const sentLongAgo = rankOf(task(400_000, 100_000), 180_000, now);
		const sentLately = rankOf(task(300_000, 170_000), 180_000, now);
		const order: CheckRank[] = [lastNear, lastFar, nearA, nearB, sentLongAgo, sentLately];
		expect(order).toEqual([...order].sort(compareRanks));
		// a task never checked counts from when it was last seen, or its submit
		expect(compareRanks(rankOf({ deadline: 400_000, submittedAt: 5000, intervalMs: 30_000 }, 180_000, now), sentLongAgo)).toBeLessThan(0);
		expect(compareRanks(rankOf({ deadline: 400_000, submittedAt: 5000, lastSeenAt: 150_000, intervalMs: 30_000 }, 180_000, now), sentLongAgo)).toBeGreaterThan(0);
	});
	it("a task's check at Max Wait after it was seen by a check sent in its last interval: after the last checks of tasks not seen in theirs, before every other check", () => {
		const now = 200_000;
		const seen = { deadline: 200_000, submittedAt: 80_000, intervalMs: 30_000, lastSentAt: 185_000, lastSeenSentAt: 185_000 };
		const look = rankOf(seen, 200_000, now);
		const unseen = rankOf({ ...seen, lastSentAt: 169_000, lastSeenSentAt: 169_000 }, 200_000, now);
		const onTime = rankOf(task(400_000, 195_000), 200_400, now);
		const behind = rankOf(task(400_000, 150_000), 180_000, now);
		const behindNearMaxWait = rankOf(task(205_000, 150_000), 180_000, now);
		const order: CheckRank[] = [unseen, look, behindNearMaxWait, behind, onTime];
		expect(order).toEqual([...order].sort(compareRanks));
		// the nearest Max Wait first among looks too
		expect(compareRanks(rankOf({ ...seen, deadline: 201_000 }, 201_000, now), look)).toBeGreaterThan(0);
		// its check in the last interval failed (sent, never answered): the check at Max Wait is still the last one it needs
		expect(rankOf({ ...seen, lastSeenSentAt: 150_000 }, 200_000, now)).toEqual(unseen);
	});
});

describe('how early checks due together go out (issue 19, row 8b)', () => {
	it('the budget is short when the tasks ask more checks per second than it sends', () => {
		// 110 ms apart: 45 tasks every 5 s ask 4.95 s of every 5 s, 46 ask 5.06 s
		expect(budgetIsShort(Array(45).fill(5000), 110)).toBe(false);
		expect(budgetIsShort(Array(46).fill(5000), 110)).toBe(true);
		expect(budgetIsShort([1000, 30_000, 30_000], 110)).toBe(false);
		expect(budgetIsShort([], 110)).toBe(false);
	});
	it('a check goes up to an interval early, half of one when the budget is short', () => {
		expect(earliestSendAt(35_000, 30_000, false)).toBe(5000);
		expect(earliestSendAt(35_000, 30_000, true)).toBe(20_000);
	});
});
