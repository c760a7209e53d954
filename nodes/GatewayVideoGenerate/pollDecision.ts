/**
 * What the wait loop decides about one task after each check, as pure functions (unit-tested
 * without any clock or HTTP): which poll failures are passing, when to give up, when the task's
 * next check is due, and when its wait ends. The order and the send times of all tasks' checks
 * are checkSchedule.ts's.
 * The task itself (its record, states and answers) is in task.ts.
 */
import { GatewayError } from '../shared/failures/errors';
import { howItPasses } from '../shared/wire/retry';
import { DEADLINE_GRACE_MS, retryAt } from './checkSchedule';
import { mergeRecords, phaseOf } from './task';
import type { TaskRecord } from './task';

/**
 * A poll that failed for a passing reason is tried again at the next tick: a failure that passes
 * soon or later (retry.ts `howItPasses`, the one list: rate limits, server errors, an answer that
 * was not JSON, dropped or timed-out connections). A refusal will not get better by waiting.
 */
export function isPassingPollFailure(error: unknown): boolean {
	return error instanceof GatewayError && howItPasses(error) !== 'never';
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
	// A Retry-After is about this check alone: the others go on (checkSchedule.ts, promise 6).
	const retryAfterMs = 'error' in answer ? (answer.error as { retryAfterMs?: number }).retryAfterMs : undefined;
	const notBefore = retryAfterMs !== undefined && retryAfterMs > 0 ? retryAt(retryAfterMs, tickAt, answeredAt, state.intervalMs, jitter) : undefined;
	if (notBefore !== undefined) {
		if (notBefore < state.deadline) return { nextPollAt: notBefore, state: { ...next, notBefore } };
		// One that ends after Max Wait is not waited out (that would hold the run past Max Wait, even
		// for ever): the last check goes out at Max Wait, as it always does.
		return { nextPollAt: state.deadline, state: { ...next, notBefore: undefined } };
	}
	return { nextPollAt: Math.min(tickAt + state.intervalMs, state.deadline), state: { ...next, notBefore: undefined } };
}
