/**
 * What the wait loop decides, as pure functions (unit-tested without any clock or HTTP): which
 * poll failures are passing, when to give up, when the next poll is due, and when the wait ends.
 * The task itself (its record, states and answers) is in task.ts.
 */
import { GatewayError } from '../shared/failures/errors';
import type { GatewayErrorKind } from '../shared/failures/errors';
import { mergeRecords, phaseOf } from './task';
import type { TaskRecord } from './task';

/**
 * A poll that failed for a passing reason is tried again at the next tick: rate limits, server
 * errors (502/503/504 pages from a proxy, a 500, an error body in a 200 without telling words), an
 * answer that was not JSON (a 200 HTML page), and dropped or timed-out connections. Anything else
 * (the key refused, no quota, an unknown task, a redirect, an answer without a task record, a
 * bug) will not get better by waiting.
 */
const PASSING_KINDS: ReadonlySet<GatewayErrorKind> = new Set(['rate_limit', 'server', 'network', 'timeout', 'protocol']);

export function isPassingPollFailure(error: unknown): boolean {
	return error instanceof GatewayError && PASSING_KINDS.has(error.kind);
}

/**
 * A run of passing failures becomes fatal once polls have failed for two minutes in a row, and
 * at least three times: long enough to ride out a gateway restart or a burst of rate limiting,
 * short enough that a gateway that is really gone is reported while the task id still matters.
 */
export const FAILURE_RUN_LIMIT = { minFailedPolls: 3, minDurationMs: 120_000 };

export function failureRunIsFatal(failedPolls: number, failingSince: number, now: number, limit = FAILURE_RUN_LIMIT): boolean {
	return failedPolls >= limit.minFailedPolls && now - failingSince >= limit.minDurationMs;
}

/**
 * When each check should go out at the latest, the checks being sent one `spacingMs` apart (the
 * budget of checks per second): at its due time, or earlier when the checks due after it need
 * the time before their own due times. Ten tasks answered at the same moment are due at the same
 * moment, and at 10 checks/s the tenth would go out a second late: planned back from the last due
 * time, the first goes out early, so none goes out after it is due (a task is checked at least
 * once per interval). Returned in the order of `dueTimes`.
 */
export function latestSendTimes(dueTimes: readonly number[], spacingMs: number): number[] {
	const starts = [...dueTimes];
	if (spacingMs <= 0) return starts;
	const byDue = dueTimes.map((due, index) => ({ due, index })).sort((a, b) => b.due - a.due);
	let next = Number.POSITIVE_INFINITY;
	for (const { due, index } of byDue) {
		next = Math.min(due, next - spacingMs);
		starts[index] = next;
	}
	return starts;
}

/**
 * Whether the budget of checks per second is short: the tasks being watched ask more checks per
 * second (one per Poll Interval each) than it sends, `spacingMs` apart. Then not every check can be
 * on time, and checks take turns (checkUrgency).
 */
export function budgetIsShort(intervalsMs: Iterable<number>, spacingMs: number): boolean {
	let share = 0;
	for (const intervalMs of intervalsMs) share += spacingMs / intervalMs;
	return share > 1;
}

/**
 * The most of its interval a check may go ahead of its due time, when checks due together are
 * spread out (latestSendTimes) and the budget is short. When it is not, a burst is spread as far
 * back as it needs (up to an interval: tasks submitted together all get their first check on
 * time). When it is, early checks only give their tasks a head start: in bench row 8b (200
 * videos, 5 s apart, at a fifth of the checks they ask) the first tasks were checked a moment
 * after their submit, were due again before the last ones had a first check, and finished a whole
 * round of checks ahead (1.77 rounds from the first to the last instead of one).
 */
export const MAX_EARLY_SHARE_WHEN_SHORT = 0.5;

/** The earliest a check due at `dueAt` goes out (MAX_EARLY_SHARE_WHEN_SHORT). */
export function earliestSendAt(dueAt: number, intervalMs: number, budgetShort: boolean): number {
	return budgetShort ? dueAt - intervalMs * MAX_EARLY_SHARE_WHEN_SHORT : dueAt - intervalMs;
}

/**
 * When the loop wakes next: at the earliest time a check must go out, never later. The checks due
 * within `coalesceMs` after it go along in the same tick, a little early (isDueInTick), rather
 * than holding the earliest one back until they are due.
 */
export function nextWakeAt(sendTimes: readonly number[]): number | undefined {
	return sendTimes.length === 0 ? undefined : Math.min(...sendTimes);
}

/** Whether a check to go out at `sendAt` goes in the tick at `tickAt`: it is time, or within `coalesceMs`. */
export function isDueInTick(sendAt: number, tickAt: number, coalesceMs: number): boolean {
	return sendAt <= tickAt + coalesceMs;
}

/**
 * A check told to wait (Retry-After) goes out no sooner, and up to this share of the wait later,
 * by chance (`jitter`, 0 to 1), but no later than its interval would have had it: retries at the same exact delay stay in step with a gateway that
 * refuses by turn. In bench row 11e (every second check refused) done tasks' checks, each sent
 * again 3 s after its refusal, kept landing on a refused turn 15 times in a row, until Max Wait.
 */
export const RETRY_JITTER = 0.25;

/** A check still waiting this long after its due time has missed its Poll Interval: it is behind. */
export const BEHIND_MS = 500;

/**
 * The tiers of checks waiting for the budget, as offsets below any time on the clock (epoch
 * milliseconds stay below 1e13 for centuries): last checks of tasks not seen in their last Poll
 * Interval, then the other last checks, then checks that fell behind in their task's last Poll
 * Interval, then other checks that fell behind, then checks on time.
 */
const LAST = 4e13;
const LAST_LOOK = 3e13;
const BEHIND_NEAR_MAX_WAIT = 2e13;
const BEHIND = 1e13;

/**
 * How urgent a check is at `now`, for the order in which checks waiting for the budget of checks
 * per second go out (lower first, equal ones in the order they came).
 * - A task's last check (the one at Max Wait, or any check still waiting in Max Wait's last
 *   second, which is then the last) goes first, the nearest Max Wait first: one that waits past
 *   the wait's end loses a result, and there is at most one per task. Among them, tasks not yet
 *   seen by a check sent in their last Poll Interval go first: tasks submitted together reach Max
 *   Wait together, and the last looks of tasks seen a moment before took the turns of those not
 *   checked in their last interval at all (a review's test, reviewEarlyCap). The looks still go
 *   before any other check: ranked after them, done tasks lost their only look at Max Wait
 *   (another review's test, reviewLastLook: 55 of 200).
 * - A check still on time goes by its due time: the budget then sends every check within its
 *   interval, as the wait loop planned them (latestSendTimes).
 * - A check that fell behind (more checks are due than the budget can send) goes before those: in
 *   its task's last Poll Interval, the nearest Max Wait first (its last chances before the wait
 *   ends); otherwise the task whose last check went out longest ago first, so that all take turns.
 * Measured in bench row 11e (a gateway refusing every second check while about 160 videos run)
 * and row 8b (200 videos at a budget of a fifth of what they ask): served in the order they came,
 * done tasks' retries queued behind younger tasks' checks past the end of their wait (29 of 1,000
 * videos reported still running); by Max Wait, old tasks took every turn, the others waited (and
 * ten that never finish kept a done one from being checked at all, a review's test), and 8b's
 * videos finished 1.77 rounds apart instead of one.
 */
export function checkUrgency(state: Pick<WatchState, 'deadline' | 'submittedAt' | 'lastSeenAt' | 'lastSentAt' | 'lastSeenSentAt' | 'intervalMs'>, dueAt: number, now: number): number {
	if (dueAt >= state.deadline - DEADLINE_GRACE_MS || now >= state.deadline - DEADLINE_GRACE_MS) {
		// Seen already by a check sent in its last interval: after the last checks of tasks not seen in it.
		if (seenInLastInterval(state)) return state.deadline - LAST_LOOK;
		return state.deadline - LAST;
	}
	if (now <= dueAt + BEHIND_MS) return dueAt;
	if (state.deadline - now <= state.intervalMs) return state.deadline - BEHIND_NEAR_MAX_WAIT;
	return (state.lastSentAt ?? state.lastSeenAt ?? state.submittedAt) - BEHIND;
}

/** One task's waiting state between polls. */
export interface WatchState {
	record: TaskRecord;
	/** When the task's submit went out (for a resumed task: when its wait began): Max Wait counts from here. */
	submittedAt: number;
	intervalMs: number;
	/** submittedAt + Max Wait. */
	deadline: number;
	failedPolls: number;
	failingSince?: number;
	/** The last check was answered with a Retry-After: the next one goes no sooner than this. */
	notBefore?: number;
	/** When the gateway last told the task's state (default: its submit). */
	lastSeenAt?: number;
	/** When its last check went out (answered or not; default: never). */
	lastSentAt?: number;
	/** When the check that last told the task's state went out (default: never). */
	lastSeenSentAt?: number;
}

/**
 * Whether a check sent since the task's last Poll Interval began has told its state: reported
 * still running at Max Wait, the task was then seen running within its last interval, as promised.
 */
export function seenInLastInterval(state: Pick<WatchState, 'deadline' | 'intervalMs' | 'lastSeenSentAt'>): boolean {
	return state.lastSeenSentAt !== undefined && state.lastSeenSentAt >= state.deadline - state.intervalMs;
}

export type PollAnswer = { task: TaskRecord } | { error: Error; passing: boolean };

export type TaskOutcome =
	| { kind: 'success' | 'failure'; record: TaskRecord }
	/**
	 * Still running at the check at Max Wait, or the wait's end came; `waitedMs` since the submit.
	 * `lastCheckError`: the last check failed (a 429, a dropped answer, no turn in the budget before
	 * the wait's end), so the task was not seen running at Max Wait, only not seen done.
	 */
	| { kind: 'timeout'; record: TaskRecord; waitedMs: number; lastCheckError?: Error }
	/** Polling failed for good: a permanent error, or a long run of passing ones. */
	| { kind: 'unreachable'; record: TaskRecord; error: Error; failedPolls: number }
	/** The execution was cancelled, or the run stopped because another item failed. */
	| { kind: 'cancelled' | 'stopped'; record: TaskRecord };

export type PollDecision = { outcome: TaskOutcome } | { nextPollAt: number; state: WatchState };

/**
 * A check sent within this time of the deadline is the last one (ticks gather tasks due within a
 * second of each other, so the check planned at the deadline may go a little early).
 */
export const DEADLINE_GRACE_MS = 1000;

/**
 * The hard end of one task's wait: Max Wait and a moment for the last poll to be answered (a
 * promise: the wait ends within Max Wait plus 2 s). No poll is in flight after it: every status
 * request of the wait carries it as its absolute limit, so an answer that drips forever ends here too.
 */
export const LAST_ANSWER_MS = 1500;

export function waitEndOf(state: Pick<WatchState, 'deadline'>): number {
	return state.deadline + LAST_ANSWER_MS;
}

/** The timeout outcome at `at`: the time really waited since the submit (not the time of the last check). */
export function timeoutOutcome(state: WatchState, record: TaskRecord, at: number, lastCheckError?: Error): TaskOutcome {
	return { kind: 'timeout', record, waitedMs: Math.max(0, at - state.submittedAt), ...(lastCheckError ? { lastCheckError } : {}) };
}

/** The first check: one interval after the submit's answer, or at Max Wait when that comes first. */
export function firstCheckAt(state: Pick<WatchState, 'intervalMs' | 'deadline'>, answeredAt: number): number {
	return Math.min(answeredAt + state.intervalMs, state.deadline);
}

/**
 * After one poll sent at `tickAt` and answered (or failed) at `answeredAt`: finished, failed, given
 * up, or the next poll's time: one interval later, or at Max Wait when that comes first, so a task
 * is never reported still running without a check sent in its last interval. The check at Max
 * Wait is the last; nothing sleeps after it, and an answer that came only at the wait's end ends
 * the wait.
 */
export function decideAfterPoll(state: WatchState, answer: PollAnswer, tickAt: number, answeredAt = tickAt, jitter = 0): PollDecision {
	let next: WatchState;
	if ('task' in answer) {
		const record = mergeRecords(state.record, answer.task);
		const phase = phaseOf(record.status);
		if (phase !== 'running') return { outcome: { kind: phase, record } };
		next = { ...state, record, failedPolls: 0, failingSince: undefined, notBefore: undefined, lastSeenAt: answeredAt, lastSentAt: tickAt, lastSeenSentAt: tickAt };
	} else {
		const failedPolls = state.failedPolls + 1;
		const failingSince = state.failingSince ?? tickAt;
		if (!answer.passing || failureRunIsFatal(failedPolls, failingSince, tickAt)) {
			return { outcome: { kind: 'unreachable', record: state.record, error: answer.error, failedPolls } };
		}
		next = { ...state, failedPolls, failingSince, lastSentAt: tickAt };
	}
	if (tickAt >= state.deadline - DEADLINE_GRACE_MS || answeredAt >= waitEndOf(state)) {
		return { outcome: timeoutOutcome(state, next.record, answeredAt, 'error' in answer ? answer.error : undefined) };
	}
	// A Retry-After is about this check: the task's next one comes when it says, no sooner and,
	// when that is before the next interval, no later (the others go on, within the budget of
	// checks per second; a gateway that 429s every other check at any rate would otherwise hold
	// every task back, and a task done by then would wait a whole interval more for each refusal:
	// 157 of 1,000 videos were reported still running at Max Wait in bench row 11e).
	const retryAfterMs = 'error' in answer ? (answer.error as { retryAfterMs?: number }).retryAfterMs : undefined;
	// The jitter never takes a check past the interval it would have kept without the 429.
	const notBefore =
		retryAfterMs !== undefined && retryAfterMs > 0
			? Math.max(answeredAt + retryAfterMs, Math.min(answeredAt + retryAfterMs + Math.round(retryAfterMs * RETRY_JITTER * jitter), tickAt + state.intervalMs))
			: undefined;
	if (notBefore !== undefined) {
		if (notBefore < state.deadline) return { nextPollAt: notBefore, state: { ...next, notBefore } };
		// One that ends after Max Wait is not waited out (that would hold the run past Max Wait, even
		// for ever): the last check goes out at Max Wait, as it always does.
		return { nextPollAt: state.deadline, state: { ...next, notBefore: undefined } };
	}
	return { nextPollAt: Math.min(tickAt + state.intervalMs, state.deadline), state: { ...next, notBefore: undefined } };
}
