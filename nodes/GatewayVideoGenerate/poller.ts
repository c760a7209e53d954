/**
 * The wait loop, one per execution and shared by all its items: every submitted task is
 * registered here, and one loop sends the checks of every task that is due, each in the status
 * lane (lanes.ts: checks never wait behind submits), the most urgent first (checkUrgency: by due
 * time, and a check that fell behind before those on time, the task nearest its Max Wait first). A tick does not wait for its checks: a task submitted while
 * others are being checked is checked on its own interval, from its own submit, and not late while
 * the budget allows: checks due together are spread within the budget ahead of time, and the next
 * one is planned from when the last one went out. The first check is due one interval after the
 * submit (or at Max Wait, if sooner), the last one at Max Wait, nothing sleeps after it, and a cancel stops the loop at once: no check
 * is sent after it. Max Wait is a hard limit that counts from the task's submit: every check is
 * told when the task's wait ends, and none is sent once it is over. Time comes from an injected
 * Clock, so tests run the loop without waiting.
 */
import type { Urgency } from '../shared/wire/pace';
import type { Clock } from '../shared/wire/timing';
import { budgetIsShort, checkUrgency, decideAfterPoll, earliestSendAt, firstCheckAt, isDueInTick, latestSendTimes, nextWakeAt, timeoutOutcome, waitEndOf } from './pollDecision';
import type { PollAnswer, TaskOutcome, WatchState } from './pollDecision';
import type { TaskRecord } from './task';

/** Tasks due within this time after the earliest one are polled in the same tick (early, never late). */
const COALESCE_MS = 1000;

/** A check refused a turn in the budget goes again no sooner than this. */
const NO_TURN_PAUSE_MS = 1000;

/** Runs a check in the status lane; `priority` is its urgency (checkUrgency: the lowest goes first). */
export type CheckLane = <T>(task: () => Promise<T>, priority: Urgency) => Promise<T>;

export interface PollerOptions {
	clock: Clock;
	/** The execution's cancel signal. */
	signal?: AbortSignal;
	/**
	 * One status request, a single attempt: the loop itself decides about failures. `remainingMs`
	 * is what is left of the task's wait (in the clock's time): the request must not outlast it.
	 * `sent` is called when the request goes out, after its turn in the budget of checks per
	 * second: the task's next check is planned one interval after that moment, so time spent
	 * waiting for a turn never stretches the gap between two checks the gateway sees. `urgency`:
	 * the check's place in the budget's queue (checkUrgency), the same as in the status lane's.
	 */
	poll(taskId: string, remainingMs: number, sent: () => void, urgency: Urgency): Promise<PollAnswer>;
	/** Runs a check within the status lane's slots. */
	limit: CheckLane;
	/**
	 * The time between two checks in the budget of checks per second (default 0: none). Checks due
	 * at the same moment are sent early enough, this far apart, that none goes out after it is due.
	 */
	spacingMs?: number;
	/**
	 * How long before its due time a task's check is sent, by its interval (default: not early),
	 * so that timers running late on a busy machine (the loop's, and the budget's spacing sleeps)
	 * do not make it late. Not for the check at Max Wait, which must come at the deadline to be
	 * the last.
	 */
	leadMs?: (intervalMs: number) => number;
	/**
	 * A virtual clock (tests) moves only when the loop sleeps: the loop then lets the checks on
	 * their way finish before it sleeps, so time does not run ahead of real answers. A real clock
	 * moves on its own, and the loop never waits for checks.
	 */
	settleBeforeSleep?: boolean;
	/** A number from 0 to 1 for each check sent again after a Retry-After (RETRY_JITTER; default 0: none). */
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
	/** Interrupts the loop's sleep on cancel or stop. */
	private readonly wake = new AbortController();
	/** Interrupts the loop's sleep when a check ends or a task comes in (its next due time changed). */
	private nudge = new AbortController();
	private nudged: () => void = () => undefined;
	private halted?: 'cancelled' | 'stopped';
	private running = false;
	/** The checks on their way, so the node can let them finish before it returns. */
	private readonly inFlight = new Set<Promise<void>>();
	/** The wait loop while it runs. */
	private loop: Promise<void> = Promise.resolve();

	constructor(private readonly options: PollerOptions) {
		const { signal } = options;
		if (signal?.aborted) this.halt('cancelled');
		else signal?.addEventListener('abort', () => this.halt('cancelled'), { once: true });
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
			this.poke();
			if (!this.running) {
				this.running = true;
				this.loop = this.run();
			}
		});
	}

	/** Ends every wait now (another item failed and the node will not finish). */
	stop(): void {
		this.halt('stopped');
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

	private halt(kind: 'cancelled' | 'stopped'): void {
		if (this.halted) return;
		this.halted = kind;
		this.wake.abort();
		this.poke();
		for (const task of [...this.tasks]) task.settle({ kind, record: task.state.record });
	}

	/** Wakes the loop to look at the due times again. */
	private poke(): void {
		this.nudge.abort();
		this.nudged();
	}

	private async run(): Promise<void> {
		const { clock } = this.options;
		while (this.tasks.size > 0 && !this.halted) {
			this.nudge = new AbortController();
			const changed = new Promise<void>((resolve) => (this.nudged = resolve));
			const idle = [...this.tasks].filter((task) => !task.checking);
			if (idle.length === 0) {
				// Every task has a check on its way: wait for one to end (or a new task).
				await changed;
				continue;
			}
			if (this.options.settleBeforeSleep && this.inFlight.size > 0) {
				await Promise.all([...this.inFlight]);
				continue;
			}
			const { leadMs = () => 0, spacingMs = 0 } = this.options;
			// Spread within the budget, early by at most an interval (half of one when the budget is short,
			// counting every task watched); a check after a Retry-After goes no sooner than it says.
			const short = budgetIsShort([...this.tasks].map((task) => task.state.intervalMs), spacingMs);
			const sendAt = latestSendTimes(
				idle.map((task) => (task.dueAt >= task.state.deadline ? task.dueAt : task.dueAt - leadMs(task.state.intervalMs))),
				spacingMs,
			).map((at, index) => Math.max(at, earliestSendAt(idle[index].dueAt, idle[index].state.intervalMs, short), idle[index].state.notBefore ?? at));
			const wakeAt = nextWakeAt(sendAt) as number;
			const sleepMs = wakeAt - clock.now();
			if (sleepMs > 0) {
				try {
					await clock.sleep(sleepMs, AbortSignal.any([this.wake.signal, this.nudge.signal]));
				} catch {
					// woken by halt() (every task is settled already) or by a change of due times
				}
				if (this.halted) break;
				if (this.nudge.signal.aborted) continue;
			}
			const tickAt = clock.now();
			// In the order they must go out: the budget sends them one after another in this order.
			const due = idle.map((task, index) => ({ task, at: sendAt[index] })).filter(({ task, at }) => isDueInTick(at, tickAt, COALESCE_MS) && this.tasks.has(task));
			for (const { task } of due.sort((a, b) => a.at - b.at)) this.check(task);
		}
		// Checked and cleared in one synchronous step, so a task added later restarts the loop.
		this.running = false;
	}

	/** Sends one check of `task` in the status lane, without holding up the loop. */
	private check(task: Watched): void {
		task.checking = true;
		const { clock } = this.options;
		const dueAt = task.dueAt;
		// Asked whenever a slot is given out: a check that falls behind while it waits moves up.
		const urgency = () => checkUrgency(task.state, dueAt, clock.now());
		const sent = this.options
			.limit(async () => await this.pollOnce(task, urgency), urgency)
			.catch(() => undefined)
			.finally(() => {
				task.checking = false;
				this.inFlight.delete(sent);
				this.poke();
			});
		this.inFlight.add(sent);
	}

	private async pollOnce(task: Watched, urgency: Urgency): Promise<void> {
		if (this.halted || !this.tasks.has(task)) return;
		const { clock } = this.options;
		let sentAt = clock.now();
		const remainingMs = waitEndOf(task.state) - sentAt;
		// A check that waited for a slot past the task's wait end sends nothing more.
		if (remainingMs <= 0) return task.settle(timeoutOutcome(task.state, task.state.record, sentAt, new Error('it found no turn in the status checks before the wait ended')));
		let answer: PollAnswer;
		let wentOut = false;
		try {
			// When it really went out (after its turn in the budget): the next check is planned from then.
			const sent = () => {
				wentOut = true;
				sentAt = clock.now();
			};
			answer = await this.options.poll(task.state.record.task_id, remainingMs, sent, urgency);
		} catch (error) {
			answer = { error: error as Error, passing: false };
		}
		if (this.halted || !this.tasks.has(task)) return;
		const decision = decideAfterPoll(task.state, answer, sentAt, clock.now(), this.options.jitter?.() ?? 0);
		if ('outcome' in decision) return task.settle(decision.outcome);
		if (!wentOut) {
			// Refused a turn in the budget before the wait's end, and not the last check: the next one goes
			// a moment later (the last one, at Max Wait, goes first of all). Planned again at once, it was
			// refused again at once, for ever, without time moving on.
			const notBefore = Math.max(decision.state.notBefore ?? 0, clock.now() + NO_TURN_PAUSE_MS);
			task.state = { ...decision.state, lastSentAt: task.state.lastSentAt, notBefore };
			task.dueAt = Math.max(decision.nextPollAt, notBefore);
			return;
		}
		task.state = decision.state;
		task.dueAt = decision.nextPollAt;
	}
}
