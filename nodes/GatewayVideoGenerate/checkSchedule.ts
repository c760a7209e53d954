/**
 * When and in which order a Generate run's status checks go out: a multilevel queue. Each task
 * has at most one check waiting; it is ranked by a tier and a time, compared as a pair, and the
 * queue gives the next turn to the best rank, asked anew at every turn (a check that falls
 * behind while it waits moves up). The status lane's slots and the budget of checks per second
 * are this queue's own gates: they take checks from it in its order and never reorder them.
 *
 * Its promises, in the order they win:
 * 1. No check goes out after its task's wait ends (Max Wait, and a moment for the answer): a
 *    check whose turn would come later is refused at once, and tried again a moment later, still
 *    due when it was (so ranked as one that fell behind), not put off to the next interval; the
 *    last check too, while that moment comes before the wait's end (a refused turn is no check).
 * 2. The check at Max Wait is never skipped: the last checks (in their task's last second) go
 *    before any other, those of tasks not seen by a check sent in their last Poll Interval first,
 *    then the nearest Max Wait first.
 * 3. A check that fell behind its due time goes before every check on time, in turns: in its
 *    task's last Poll Interval the nearest Max Wait first, otherwise the task whose last check
 *    went out longest ago first.
 * 4. Otherwise the earliest due first. Checks due together are sent early enough, one budget
 *    gap apart, that none goes out after it is due; at most an interval early, half of one when
 *    the budget cannot cover every task once per interval (then tasks take turns, and the first
 *    ones must not gain a round). A check sent before the last second is never the last one, and
 *    is ranked as routine.
 * 5. The budget of checks per second is never exceeded, nor the lane's slots.
 * 6. Retry-After is honoured as a plan: a refused check is planned no sooner than it says, up to a
 *    quarter of it later by chance (out of step with a gateway that refuses by turn), never past the
 *    interval it would have kept without the refusal. A tick takes it along with the checks due
 *    within COALESCE_MS of it, as it takes any check due soon, so it may go up to that much early;
 *    one that would end after Max Wait yields to promise 2: the last check goes at Max Wait.
 */
import { TurnQueue } from '../shared/wire/pace';
import type { Turn } from '../shared/wire/pace';
import type { Clock } from '../shared/wire/timing';

/** A check sent within this time of the deadline is the last one (a tick gathers checks due within it). */
export const DEADLINE_GRACE_MS = 1000;
/** A check still waiting this long after its due time has missed its Poll Interval: it is behind. */
export const BEHIND_MS = 500;
/** The most of its interval a check goes early when the budget is short (promise 4). */
export const MAX_EARLY_SHARE_WHEN_SHORT = 0.5;
/** Checks due within this time after the earliest one go in the same tick (early, never late). */
export const COALESCE_MS = 1000;
/** A check refused a turn goes again no sooner than this (promise 1). */
export const NO_TURN_PAUSE_MS = 1000;
/** The most a Retry-After is stretched by chance, as a share of it (promise 6). */
export const RETRY_JITTER = 0.25;
/**
 * The wait's end after Max Wait: a moment for the last check to be answered (the wait ends within
 * Max Wait plus 2 s). Every check carries it as its absolute limit, so an answer that drips forever ends here too.
 */
export const LAST_ANSWER_MS = 1500;
/** Checks of a budget go this much further apart than 1/budget: what leaves evenly spaced may reach the gateway bunched up (promise 5). */
export const BUDGET_MARGIN = 1.1;

/** The time between two checks of a budget of `checksPerSecond`. */
export function budgetSpacingMs(checksPerSecond: number): number {
	return (1000 / checksPerSecond) * BUDGET_MARGIN;
}

/** The tiers of the queue, the first first (promises 2 and 3). */
export enum Tier {
	LastUnseen = 0,
	LastSeen = 1,
	BehindNearMaxWait = 2,
	Behind = 3,
	OnTime = 4,
}

/** A check's place: its tier, then a time within the tier (the earlier first). */
export type CheckRank = readonly [tier: Tier, at: number];

/** What the schedule knows of one task (the clock's times). */
export interface CheckTimes {
	/** When the task's submit went out (for a resumed task: when its wait began): Max Wait counts from here. */
	submittedAt: number;
	intervalMs: number;
	/** submittedAt + Max Wait. */
	deadline: number;
	/** The last check was answered with a Retry-After, or found no turn: the next one goes no sooner than this. */
	notBefore?: number;
	/** When the gateway last told the task's state (default: its submit). */
	lastSeenAt?: number;
	/** When its last check went out (answered or not; default: never). */
	lastSentAt?: number;
	/** When the check that last told the task's state went out (default: never). */
	lastSeenSentAt?: number;
}

/** The hard end of a task's wait: no check is on its way after it (promise 1). */
export function waitEndOf(times: Pick<CheckTimes, 'deadline'>): number {
	return times.deadline + LAST_ANSWER_MS;
}

/** The first check: one interval after the submit's answer, or at Max Wait when that comes first. */
export function firstCheckAt(times: Pick<CheckTimes, 'intervalMs' | 'deadline'>, answeredAt: number): number {
	return Math.min(answeredAt + times.intervalMs, times.deadline);
}

/**
 * After a check of a running task sent at `sentAt` and answered (or failed) at `answeredAt`: when
 * the next one is due, and no sooner than when (promise 6), or undefined when that was the last
 * (the check at Max Wait, or an answer that came only at the wait's end): one interval later, or at
 * Max Wait when that comes first, so a task is never reported still running without a check sent
 * in its last interval. A Retry-After is about this check alone: the others go on. `jitter`: a
 * chance from 0 to 1.
 */
export function nextCheck(times: CheckTimes, sentAt: number, answeredAt: number, retryAfterMs = 0, jitter = 0): { dueAt: number; notBefore?: number } | undefined {
	if (sentAt >= times.deadline - DEADLINE_GRACE_MS || answeredAt >= waitEndOf(times)) return undefined;
	if (retryAfterMs <= 0) return { dueAt: Math.min(sentAt + times.intervalMs, times.deadline) };
	const asked = answeredAt + retryAfterMs;
	const notBefore = Math.max(asked, Math.min(asked + Math.round(retryAfterMs * RETRY_JITTER * jitter), sentAt + times.intervalMs));
	// One that ends after Max Wait is not waited out (that would hold the run past Max Wait, even
	// for ever): the last check goes out at Max Wait, as it always does.
	return notBefore < times.deadline ? { dueAt: notBefore, notBefore } : { dueAt: times.deadline };
}

/** After a check found no turn at `now`: it asks again a moment later (promise 1), still due when it was. */
export function afterNoTurn(now: number): Pick<CheckTimes, 'notBefore'> {
	return { notBefore: now + NO_TURN_PAUSE_MS };
}

/** The rank at `now` of a task's check due at `dueAt` (promises 2 to 4). */
export function rankOf(times: CheckTimes, dueAt: number, now: number): CheckRank {
	// Only a check that goes in the last second is the last one: one due at Max Wait but sent early
	// (spread back within the budget) is a routine check, and its task will still have its last.
	// Seen: a check sent since the task's last Poll Interval began has told its state.
	const seen = times.lastSeenSentAt !== undefined && times.lastSeenSentAt >= times.deadline - times.intervalMs;
	if (now >= times.deadline - DEADLINE_GRACE_MS) return [seen ? Tier.LastSeen : Tier.LastUnseen, times.deadline];
	if (now <= dueAt + BEHIND_MS) return [Tier.OnTime, dueAt];
	if (times.deadline - now <= times.intervalMs) return [Tier.BehindNearMaxWait, times.deadline];
	return [Tier.Behind, times.lastSentAt ?? times.lastSeenAt ?? times.submittedAt];
}

/**
 * The latest each check can go out, sent `spacingMs` apart, for none to go out after its due
 * time: planned back from the last due time. Returned in the order of `dueTimes`.
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

/** Whether the tasks ask more checks per second (one per Poll Interval each) than the budget sends, `spacingMs` apart. */
export function budgetIsShort(intervalsMs: Iterable<number>, spacingMs: number): boolean {
	let share = 0;
	for (const intervalMs of intervalsMs) share += spacingMs / intervalMs;
	return share > 1;
}

/** The earliest a check due at `dueAt` goes out (promise 4). */
export function earliestSendAt(dueAt: number, intervalMs: number, budgetShort: boolean): number {
	return budgetShort ? dueAt - intervalMs * MAX_EARLY_SHARE_WHEN_SHORT : dueAt - intervalMs;
}

/** A task's next check, as the wait loop plans it. */
export interface PlannedCheck {
	dueAt: number;
	state: Pick<CheckTimes, 'intervalMs' | 'deadline' | 'notBefore'>;
}

/**
 * The wait loop's next tick (promises 4 and 6): when it comes (the earliest time a check must go
 * out), and which of the idle checks it sends then, in the order they go out. Each is spread back
 * within the budget, no earlier than its early limit, no sooner than a Retry-After allows, and a
 * tick takes the checks due within COALESCE_MS of it. `watchedIntervals`: every watched task's
 * interval (the budget is short or not for all of them).
 */
export function planTick<T extends PlannedCheck>(idle: readonly T[], watchedIntervals: Iterable<number>, spacingMs: number): { wakeAt: number; dueAt(tickAt: number): T[] } {
	const short = budgetIsShort(watchedIntervals, spacingMs);
	const sendAt = latestSendTimes(idle.map(({ dueAt }) => dueAt), spacingMs).map((at, index) => {
		const { dueAt, state } = idle[index];
		return Math.max(at, earliestSendAt(dueAt, state.intervalMs, short), state.notBefore ?? at);
	});
	const order = idle.map((check, index) => ({ check, at: sendAt[index] })).sort((a, b) => a.at - b.at);
	return { wakeAt: Math.min(...sendAt), dueAt: (tickAt) => order.filter(({ at }) => at <= tickAt + COALESCE_MS).map(({ check }) => check) };
}

/** One task's check waiting for its turn. */
export interface QueuedCheck extends Turn {
	taskId: string;
	/** Its rank now (asked anew at every turn). */
	rank: () => CheckRank;
	/** Its task's wait end: a turn at or after it is refused. */
	notAfter: number;
}

/** The multilevel queue's server: one turn at a time, best rank first, within the slots and the budget (promises 1 and 5). */
export class CheckQueue extends TurnQueue<QueuedCheck> {
	/** `slots`: checks waiting for their answer at once (default: no bound); `spacingMs`: between two checks of the budget (default 0: none). */
	constructor(clock: Clock, limits: { slots?: number; spacingMs?: number } = {}) {
		super(clock, { slots: limits.slots, spacingMs: () => limits.spacingMs ?? 0 });
	}
}
