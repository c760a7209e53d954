/**
 * The wait loop, one per execution and shared by all its items: every submitted task is
 * registered here, and one tick polls every task that is due (within the execution's
 * concurrency bound), so ten videos take about as long as the slowest, not ten times as long.
 * The first poll comes one interval after the submit, nothing sleeps after the last poll, and a
 * cancel stops the loop at once: no poll is sent after it. Max Wait is a hard limit: every poll is
 * told how long the task's wait has left, and no poll is sent once it is over. Time comes from an
 * injected Clock, so tests run the loop without waiting.
 */
import type { Limiter } from '../shared/items/itemRunner';
import type { Clock } from '../shared/wire/timing';
import { decideAfterPoll, nextWakeAt, timeoutOutcome, waitEndOf } from './pollDecision';
import type { PollAnswer, TaskOutcome, WatchState } from './pollDecision';
import type { TaskRecord } from './task';

/** Tasks due within this time of the earliest one are polled in the same tick. */
const COALESCE_MS = 1000;

export interface PollerOptions {
	clock: Clock;
	/** The execution's cancel signal. */
	signal?: AbortSignal;
	/**
	 * One status request, a single attempt: the loop itself decides about failures. `remainingMs`
	 * is what is left of the task's wait (in the clock's time): the request must not outlast it.
	 */
	poll(taskId: string, remainingMs: number): Promise<PollAnswer>;
	/** Runs a request within the execution's concurrency bound. */
	limit: Limiter;
}

export interface WatchSettings {
	intervalMs: number;
	maxWaitMs: number;
}

interface Watched {
	state: WatchState;
	dueAt: number;
	settle(outcome: TaskOutcome): void;
}

export class TaskPoller {
	private readonly tasks = new Set<Watched>();
	/** Interrupts the loop's sleep on cancel or stop. */
	private readonly wake = new AbortController();
	private halted?: 'cancelled' | 'stopped';
	private running = false;
	/** The wait loop while it runs, so the node can let its last polls finish before it returns. */
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
			const submittedAt = this.options.clock.now();
			const state: WatchState = {
				record: initial,
				submittedAt,
				intervalMs: settings.intervalMs,
				deadline: submittedAt + settings.maxWaitMs,
				failedPolls: 0,
			};
			const task: Watched = {
				state,
				dueAt: submittedAt + settings.intervalMs,
				settle: (outcome) => {
					this.tasks.delete(task);
					resolve(outcome);
				},
			};
			this.tasks.add(task);
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
	 * Resolves once the loop has ended. After stop() the waits end at once, but the polls of the
	 * current tick are still on their way: the node waits for them, so no request of its run is
	 * left going after it has returned.
	 */
	async finished(): Promise<void> {
		await this.loop;
	}

	private halt(kind: 'cancelled' | 'stopped'): void {
		if (this.halted) return;
		this.halted = kind;
		this.wake.abort();
		for (const task of [...this.tasks]) task.settle({ kind, record: task.state.record });
	}

	private async run(): Promise<void> {
		const { clock } = this.options;
		while (this.tasks.size > 0 && !this.halted) {
			const wakeAt = nextWakeAt([...this.tasks].map((task) => task.dueAt), COALESCE_MS) as number;
			const sleepMs = wakeAt - clock.now();
			if (sleepMs > 0) {
				try {
					await clock.sleep(sleepMs, this.wake.signal);
				} catch {
					// woken by halt(), which has settled every task already
				}
				if (this.halted) break;
			}
			const tickAt = clock.now();
			const due = [...this.tasks].filter((task) => task.dueAt <= tickAt);
			await Promise.all(due.map(async (task) => await this.options.limit(async () => await this.pollOnce(task, tickAt))));
		}
		// Checked and cleared in one synchronous step, so a task added later restarts the loop.
		this.running = false;
	}

	private async pollOnce(task: Watched, tickAt: number): Promise<void> {
		if (this.halted || !this.tasks.has(task)) return;
		const { clock } = this.options;
		const remainingMs = waitEndOf(task.state) - clock.now();
		// A tick that waited for a free slot past the task's wait end sends nothing more.
		if (remainingMs <= 0) return task.settle(timeoutOutcome(task.state, task.state.record, tickAt));
		let answer: PollAnswer;
		try {
			answer = await this.options.poll(task.state.record.task_id, remainingMs);
		} catch (error) {
			answer = { error: error as Error, passing: false };
		}
		if (this.halted || !this.tasks.has(task)) return;
		const decision = decideAfterPoll(task.state, answer, tickAt, clock.now());
		if ('outcome' in decision) return task.settle(decision.outcome);
		task.state = decision.state;
		task.dueAt = decision.nextPollAt;
	}
}
