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
 *    due when it was (so ranked as one that fell behind), not put off to the next interval.
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
import { CancelledError, PastDeadline } from '../shared/wire/timing';
import type { Clock } from '../shared/wire/timing';
import type { WatchState } from './pollDecision';

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

export function compareRanks(a: CheckRank, b: CheckRank): number {
	return a[0] - b[0] || a[1] - b[1];
}

type RankedState = Pick<WatchState, 'deadline' | 'submittedAt' | 'lastSeenAt' | 'lastSentAt' | 'lastSeenSentAt' | 'intervalMs'>;

/** Whether a check sent since the task's last Poll Interval began has told its state. */
export function seenInLastInterval(state: Pick<WatchState, 'deadline' | 'intervalMs' | 'lastSeenSentAt'>): boolean {
	return state.lastSeenSentAt !== undefined && state.lastSeenSentAt >= state.deadline - state.intervalMs;
}

/** The rank at `now` of a task's check due at `dueAt` (promises 2 to 4). */
export function rankOf(state: RankedState, dueAt: number, now: number): CheckRank {
	// Only a check that goes in the last second is the last one: one due at Max Wait but sent early
	// (spread back within the budget) is a routine check, and its task will still have its last.
	if (now >= state.deadline - DEADLINE_GRACE_MS) return [seenInLastInterval(state) ? Tier.LastSeen : Tier.LastUnseen, state.deadline];
	if (now <= dueAt + BEHIND_MS) return [Tier.OnTime, dueAt];
	if (state.deadline - now <= state.intervalMs) return [Tier.BehindNearMaxWait, state.deadline];
	return [Tier.Behind, state.lastSentAt ?? state.lastSeenAt ?? state.submittedAt];
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

/** When the wait loop wakes next: the earliest time a check must go out. */
export function nextWakeAt(sendTimes: readonly number[]): number | undefined {
	return sendTimes.length === 0 ? undefined : Math.min(...sendTimes);
}

/** Whether a check to go out at `sendAt` goes in the tick at `tickAt`. */
export function isDueInTick(sendAt: number, tickAt: number, coalesceMs = COALESCE_MS): boolean {
	return sendAt <= tickAt + coalesceMs;
}

/** A task's next check, as the wait loop plans it. */
export interface PlannedCheck {
	dueAt: number;
	state: Pick<WatchState, 'intervalMs' | 'deadline' | 'notBefore'>;
}

/**
 * When each idle task's check goes out (promises 4 and 6): spread back within the budget, no
 * earlier than its early limit, no sooner than a Retry-After allows. `watchedIntervals`: every
 * watched task's interval (the budget is short or not for all of them). `leadMs`: how early a
 * routine check goes for timers that run late (never the check at Max Wait).
 */
export function planSendTimes(idle: readonly PlannedCheck[], watchedIntervals: Iterable<number>, spacingMs: number, leadMs: (intervalMs: number) => number = () => 0): number[] {
	const short = budgetIsShort(watchedIntervals, spacingMs);
	const latest = latestSendTimes(
		idle.map(({ dueAt, state }) => (dueAt >= state.deadline ? dueAt : dueAt - leadMs(state.intervalMs))),
		spacingMs,
	);
	return latest.map((at, index) => {
		const { dueAt, state } = idle[index];
		return Math.max(at, earliestSendAt(dueAt, state.intervalMs, short), state.notBefore ?? at);
	});
}

/**
 * When a check refused with a Retry-After of `retryAfterMs` (answered at `answeredAt`, sent at
 * `sentAt`) goes again (promise 6); `jitter` is a chance from 0 to 1.
 */
export function retryAt(retryAfterMs: number, sentAt: number, answeredAt: number, intervalMs: number, jitter: number): number {
	const asked = answeredAt + retryAfterMs;
	return Math.max(asked, Math.min(asked + Math.round(retryAfterMs * RETRY_JITTER * jitter), sentAt + intervalMs));
}

/** One task's check waiting for its turn. */
export interface QueuedCheck {
	taskId: string;
	/** Its rank now (asked anew at every turn). */
	rank: () => CheckRank;
	/** Its task's wait end: a turn after it is refused. */
	notAfter: number;
}

interface Waiting extends QueuedCheck {
	arrival: number;
	settle(error?: Error): void;
}

export interface CheckQueueLimits {
	/** Checks waiting for their answer at once (default: no bound). */
	slots?: number;
	/** The time between two checks in the budget of checks per second (default 0: no budget). */
	spacingMs?: number;
}

/** The multilevel queue's server: one turn at a time, best rank first, within the slots and the budget (promises 1 and 5). */
export class CheckQueue {
	readonly slots: number;
	readonly spacingMs: number;
	/** The most checks that were on their way at once (for tests and the benchmark). */
	peak = 0;
	private inFlight = 0;
	private lastTurnAt = Number.NEGATIVE_INFINITY;
	private arrivals = 0;
	private readonly waiting: Waiting[] = [];
	private pumping = false;
	private pumpSleep?: AbortController;

	constructor(
		private readonly clock: Clock,
		limits: CheckQueueLimits = {},
	) {
		this.slots = limits.slots ?? Number.POSITIVE_INFINITY;
		this.spacingMs = limits.spacingMs ?? 0;
	}

	/**
	 * Waits for a check's turn; resolves with the function that frees its slot once answered.
	 * Refused (PastDeadline) as soon as its turn would not come before its `notAfter`.
	 */
	async take(check: QueuedCheck): Promise<() => void> {
		await new Promise<void>((resolve, reject) => {
			this.waiting.push({ ...check, arrival: this.arrivals++, settle: (error) => (error ? reject(error) : resolve()) });
			this.wakePump();
		});
		let freed = false;
		return () => {
			if (freed) return;
			freed = true;
			this.inFlight--;
			this.wakePump();
		};
	}

	/** Ends every wait for a turn (CancelledError): the run was stopped. */
	cancelAll(): void {
		for (const waiting of this.waiting.splice(0)) waiting.settle(new CancelledError());
		this.pumpSleep?.abort();
	}

	/** Checks waiting for a turn. */
	get queued(): number {
		return this.waiting.length;
	}

	private wakePump(): void {
		if (this.pumping) this.pumpSleep?.abort();
		else void this.pump();
	}

	/** Ranks the waiting checks (stable), refuses those whose turn comes too late, and gives the next turn when the gates open. */
	private async pump(): Promise<void> {
		this.pumping = true;
		try {
			while (this.waiting.length > 0) {
				const now = this.clock.now();
				const nextTurnAt = Math.max(this.lastTurnAt + this.spacingMs, now);
				const ranked = this.waiting.map((waiting) => ({ waiting, rank: waiting.rank() })).sort((a, b) => compareRanks(a.rank, b.rank) || a.waiting.arrival - b.waiting.arrival);
				this.waiting.splice(0, this.waiting.length, ...ranked.map(({ waiting }) => waiting));
				let position = 0;
				for (const { waiting } of ranked) {
					const turnAt = nextTurnAt + this.spacingMs * position;
					// A check sent at its wait's end would be cut at once: its turn must come before.
					if (turnAt >= waiting.notAfter) {
						this.waiting.splice(this.waiting.indexOf(waiting), 1);
						waiting.settle(new PastDeadline('turn', turnAt - now, waiting.notAfter - now));
					} else position++;
				}
				if (this.waiting.length === 0) break;
				const slotFree = this.inFlight < this.slots;
				if (slotFree && nextTurnAt <= now) {
					const next = this.waiting.shift() as Waiting;
					this.lastTurnAt = now;
					this.inFlight++;
					this.peak = Math.max(this.peak, this.inFlight);
					next.settle();
					continue;
				}
				// Until the budget's gap is over, or (all slots taken) until a slot frees: every check on its way ends by its wait's end.
				const sleep = (this.pumpSleep = new AbortController());
				try {
					if (slotFree) await this.clock.sleep(nextTurnAt - now, sleep.signal);
					else await new Promise((resolve) => sleep.signal.addEventListener('abort', resolve, { once: true }));
				} catch {
					// a slot freed, a check came or left
				}
			}
		} finally {
			this.pumping = false;
		}
	}
}
