/**
 * The wait loop, one per execution and shared by all its items: every submitted task is
 * registered here, and one loop plans each task's next check (checkSchedule.ts states when) and
 * hands it to the check queue, which decides the order and the budget; an answer hands on the
 * checks due at that moment too, before its slot goes to the next in line. A tick does not wait for
 * its checks; nothing sleeps after a task's last check, at Max Wait, and a cancel stops the loop
 * at once: no check is sent after it. Max Wait is a hard limit that counts from the task's submit:
 * every check is told when the task's wait ends, and none is sent once it is over. Time comes
 * from an injected Clock, so tests run the loop without waiting.
 */
import { GatewayError } from '../shared/failures/errors';
import { howItPasses } from '../shared/wire/retry';
import { PastDeadline } from '../shared/wire/timing';
import type { Clock } from '../shared/wire/timing';
import { CheckQueue, afterNoTurn, firstCheckAt, nextCheck, planTick, rankOf, waitEndOf } from './checkSchedule';
import type { CheckTimes } from './checkSchedule';
import { checkingWhat, mergeRecords, phaseOf } from './task';
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
 * Only time in which the gateway answered no check of the run counts: one that answers others is
 * there (refusals under an overload are its pace, and such a wait ends at Max Wait at the latest).
 */
export const FAILURE_RUN_LIMIT = { minFailedPolls: 3, minDurationMs: 120_000 };

export function failureRunIsFatal(failedPolls: number, failingSince: number, now: number): boolean {
	return failedPolls >= FAILURE_RUN_LIMIT.minFailedPolls && now - failingSince >= FAILURE_RUN_LIMIT.minDurationMs;
}

/** One task's waiting state between polls: its record, its run of failed polls, and its check times. */
export interface WatchState extends CheckTimes {
	record: TaskRecord;
	failedPolls: number;
	failingSince?: number;
}

export type PollAnswer = { task: TaskRecord } | { error: Error; passing: boolean };

export type TaskOutcome =
	| { kind: 'success' | 'failure'; record: TaskRecord }
	/**
	 * Still running at the check at Max Wait, or the wait's end came; `waitedMs` since the submit.
	 * `lastCheckError`: the last check failed (a 429, a dropped answer, no turn in the budget before
	 * the wait's end), so the task was not seen running at Max Wait, only not seen done;
	 * `failedPolls`: how many of its checks in a row had failed then (a sent check's failure).
	 */
	| { kind: 'timeout'; record: TaskRecord; waitedMs: number; lastCheckError?: Error; failedPolls?: number }
	/** Polling failed for good: a permanent error, or a long run of passing ones. */
	| { kind: 'unreachable'; record: TaskRecord; error: Error; failedPolls: number }
	/** The execution was cancelled, or the run stopped because another item failed. */
	| { kind: 'cancelled' | 'stopped'; record: TaskRecord };

export type PollDecision = { outcome: TaskOutcome } | { nextPollAt: number; state: WatchState };

/**
 * After one poll sent at `tickAt` and answered (or failed) at `answeredAt`: finished, failed, given
 * up, or still running, its next check planned by the schedule (none after the last one: then the
 * wait is over, the time waited counted since the submit). `gatewayAnsweredAt`: when the gateway
 * last told any task's state in this run (a run of failures counts from then at the earliest).
 */
export function decideAfterPoll(state: WatchState, answer: PollAnswer, tickAt: number, answeredAt = tickAt, jitter = 0, gatewayAnsweredAt = Number.NEGATIVE_INFINITY): PollDecision {
	let next: WatchState;
	if ('task' in answer) {
		const record = mergeRecords(state.record, answer.task);
		const phase = phaseOf(record.status);
		if (phase !== 'running') return { outcome: { kind: phase, record } };
		next = { ...state, record, failedPolls: 0, failingSince: undefined, lastSeenAt: answeredAt, lastSentAt: tickAt, lastSeenSentAt: tickAt };
	} else {
		const failedPolls = state.failedPolls + 1;
		const failingSince = state.failingSince ?? tickAt;
		if (!answer.passing || failureRunIsFatal(failedPolls, Math.max(failingSince, gatewayAnsweredAt), tickAt)) {
			return { outcome: { kind: 'unreachable', record: state.record, error: answer.error, failedPolls } };
		}
		next = { ...state, failedPolls, failingSince, lastSentAt: tickAt };
	}
	const lastCheckError = 'error' in answer ? answer.error : undefined;
	const check = nextCheck(state, tickAt, answeredAt, (lastCheckError as { retryAfterMs?: number } | undefined)?.retryAfterMs, jitter);
	if (!check) return { outcome: { kind: 'timeout', record: next.record, waitedMs: Math.max(0, answeredAt - state.submittedAt), ...(lastCheckError ? { lastCheckError, failedPolls: next.failedPolls } : {}) } };
	return { nextPollAt: check.dueAt, state: { ...next, notBefore: check.notBefore } };
}

export interface PollerOptions {
	clock: Clock;
	/** The execution's cancel signal. */
	signal?: AbortSignal;
	/**
	 * One status request, a single attempt, sent at once (its turn was given already): the loop
	 * itself decides about failures. `remainingMs` is what is left of the task's wait (in the
	 * clock's time): the request must not outlast it.
	 */
	poll(taskId: string, remainingMs: number): Promise<PollAnswer>;
	/** The queue that gives the checks their turns (default: no slots' bound, no budget). */
	queue?: CheckQueue;
	/**
	 * A virtual clock (tests) moves only when the loop sleeps: the loop then lets the checks on
	 * their way finish before it sleeps, so time does not run ahead of real answers. A real clock
	 * moves on its own, and the loop never waits for checks.
	 */
	settleBeforeSleep?: boolean;
	/** A number from 0 to 1 for each check sent again after a Retry-After (default 0: none). */
	jitter?: () => number;
}

export interface WatchSettings {
	intervalMs: number;
	maxWaitMs: number;
	/** When the task's submit went out (the clock's time); Max Wait counts from here. Default: now. */
	submittedAt?: number;
}

interface Watched {
	state: WatchState;
	dueAt: number;
	/** A check of it is waiting for a slot or on its way. */
	checking: boolean;
	settle(outcome: TaskOutcome): void;
}

export class TaskPoller {
	private readonly tasks = new Set<Watched>();
	/** Interrupts the loop's sleep when a check ends, a task comes in (its next due time changed), or the wait is cancelled or stopped. */
	private nudge = new AbortController();
	private halted?: 'cancelled' | 'stopped';
	private running = false;
	/** The checks on their way, so the node can let them finish before it returns. */
	private readonly inFlight = new Set<Promise<void>>();
	/** The wait loop while it runs. */
	private loop: Promise<void> = Promise.resolve();
	private readonly queue: CheckQueue;
	/** When the gateway last told a task's state (any task of the run): it is there. */
	private gatewayAnsweredAt = Number.NEGATIVE_INFINITY;

	constructor(private readonly options: PollerOptions) {
		const { signal } = options;
		this.queue = options.queue ?? new CheckQueue(options.clock);
		if (signal?.aborted) this.stop('cancelled');
		else signal?.addEventListener('abort', () => this.stop('cancelled'), { once: true });
	}

	/** Waits for a submitted task; resolves with how it ended (never rejects). */
	async watch(initial: TaskRecord, settings: WatchSettings): Promise<TaskOutcome> {
		return await new Promise<TaskOutcome>((resolve) => {
			if (this.halted) return resolve({ kind: this.halted, record: initial });
			const now = this.options.clock.now();
			const submittedAt = Math.min(settings.submittedAt ?? now, now);
			const state: WatchState = {
				record: initial,
				submittedAt,
				intervalMs: settings.intervalMs,
				deadline: submittedAt + settings.maxWaitMs,
				failedPolls: 0,
			};
			const task: Watched = {
				state,
				dueAt: firstCheckAt(state, now),
				checking: false,
				settle: (outcome) => {
					this.tasks.delete(task);
					resolve(outcome);
				},
			};
			this.tasks.add(task);
			this.nudge.abort();
			if (!this.running) {
				this.running = true;
				this.loop = this.run();
			}
		});
	}

	/**
	 * Resolves once the loop has ended and its checks are answered. After stop() the waits end at
	 * once, but checks already sent are still on their way: the node waits for them, so no request
	 * of its run is left going after it has returned.
	 */
	async finished(): Promise<void> {
		await this.loop;
		while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
	}

	/** Ends every wait now: another item failed and the node will not finish (or, from the signal, the execution was cancelled). */
	stop(kind: 'cancelled' | 'stopped' = 'stopped'): void {
		if (this.halted) return;
		this.halted = kind;
		this.queue.cancelAll();
		this.nudge.abort();
		for (const task of [...this.tasks]) task.settle({ kind, record: task.state.record });
	}

	private async run(): Promise<void> {
		const { clock } = this.options;
		while (this.tasks.size > 0 && !this.halted) {
			this.nudge = new AbortController();
			const tick = this.planIdle();
			if (!tick) {
				// Every task has a check on its way: wait for one to end (or a new task).
				await new Promise((resolve) => this.nudge.signal.addEventListener('abort', resolve, { once: true }));
				continue;
			}
			if (this.options.settleBeforeSleep && this.inFlight.size > 0) {
				await Promise.all([...this.inFlight]);
				continue;
			}
			const sleepMs = tick.wakeAt - clock.now();
			if (sleepMs > 0) {
				try {
					await clock.sleep(sleepMs, this.nudge.signal);
				} catch {
					// woken by stop() (every task is settled already) or by a change of due times
				}
				if (this.halted) break;
				if (this.nudge.signal.aborted) continue;
			}
			this.queueDue(tick);
		}
		// Checked and cleared in one synchronous step, so a task added later restarts the loop.
		this.running = false;
	}

	/** The next tick of the tasks without a check on its way (none: every task has one). */
	private planIdle(): ReturnType<typeof planTick<Watched>> | undefined {
		const idle = [...this.tasks].filter((task) => !task.checking);
		return idle.length > 0 ? planTick(idle, [...this.tasks].map((task) => task.state.intervalMs), this.queue.spacingMs) : undefined;
	}

	/** Queues the checks whose time has come in `tick` (by default: planned now), in the order they must go out: the budget sends them in this order. */
	private queueDue(tick = this.planIdle()): void {
		const now = this.options.clock.now();
		if (this.halted || !tick || tick.wakeAt > now) return;
		for (const task of tick.dueAt(now)) if (this.tasks.has(task) && !task.checking) this.check(task);
	}

	/** Queues one check of `task`, without holding up the loop. */
	private check(task: Watched): void {
		task.checking = true;
		const sent = this.pollOnce(task)
			.catch(() => undefined)
			.finally(() => {
				this.inFlight.delete(sent);
				this.nudge.abort();
			});
		this.inFlight.add(sent);
	}

	/**
	 * The check's turn in the queue (ranked anew at every turn), then the check. Once answered, the
	 * checks due now (its task's next among them: its last, at Max Wait, say) take their places
	 * before its slot goes on: a slot freed by an answer goes to the best check of that moment.
	 */
	private async pollOnce(task: Watched): Promise<void> {
		const { clock } = this.options;
		const dueAt = task.dueAt;
		const free = await this.queue.take({ taskId: task.state.record.task_id, rank: () => rankOf(task.state, dueAt, clock.now()), notAfter: waitEndOf(task.state) }).catch((refusal: unknown) => {
			if (!this.halted && this.tasks.has(task)) this.refused(task, refusal);
		});
		try {
			if (free) await this.sendCheck(task);
		} finally {
			task.checking = false;
			if (free) {
				this.queueDue();
				free();
			}
		}
	}

	private async sendCheck(task: Watched): Promise<void> {
		if (this.halted || !this.tasks.has(task)) return;
		const { clock } = this.options;
		const sentAt = clock.now();
		const remainingMs = waitEndOf(task.state) - sentAt;
		if (remainingMs <= 0) return this.refused(task, undefined);
		let answer: PollAnswer;
		try {
			answer = await this.options.poll(task.state.record.task_id, remainingMs);
		} catch (error) {
			answer = { error: error as Error, passing: false };
		}
		if (this.halted || !this.tasks.has(task)) return;
		if ('task' in answer) this.gatewayAnsweredAt = clock.now();
		const decision = decideAfterPoll(task.state, answer, sentAt, clock.now(), this.options.jitter?.() ?? 0, this.gatewayAnsweredAt);
		if ('outcome' in decision) return task.settle(decision.outcome);
		task.state = decision.state;
		task.dueAt = decision.nextPollAt;
	}

	/**
	 * No turn before the wait's end. A refused turn is no check: the gateway told nothing and failed
	 * nothing, so the task's record and its run of failures stay as they were. The check asks again a
	 * moment later (planned again at once, it would be refused again at once, for ever, without time
	 * moving on) while that comes before the wait's end; then the wait ends, not seen done, saying why.
	 */
	private refused(task: Watched, refusal: unknown): void {
		const now = this.options.clock.now();
		const again = afterNoTurn(now);
		if ((again.notBefore ?? now) < waitEndOf(task.state)) {
			// task.dueAt stays: still the check it was, due when it was, it ranks as behind (promise 1).
			task.state = { ...task.state, ...again };
			return;
		}
		const lastCheckError = noTurnError(task.state.record.task_id, refusal);
		task.settle({ kind: 'timeout', record: task.state.record, waitedMs: Math.max(0, now - task.state.submittedAt), lastCheckError });
	}
}

/** A check the queue gave no turn before its task's wait ended (a passing failure: the next one may get one). */
function noTurnError(taskId: string, refusal: unknown): GatewayError {
	const away = refusal instanceof PastDeadline ? ` (its turn was ${(refusal.waitMs / 1000).toFixed(1)} s away, ${(Math.max(0, refusal.leftMs) / 1000).toFixed(1)} s were left)` : '';
	return new GatewayError({
		kind: 'rate_limit',
		headline: `${checkingWhat(taskId)} failed: it found no turn in the run's Status Checks per Second before its wait ended${away}`,
	});
}
