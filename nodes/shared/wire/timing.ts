/**
 * Waiting without the `setTimeout` global (n8n's community rules forbid it): `sleep` from
 * n8n-workflow, raced against the execution's cancel signal so a cancelled run stops at once,
 * on n8n lines whose `sleep` takes no signal too.
 */
import { sleep } from 'n8n-workflow';

export interface Clock {
	now(): number;
	sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export class CancelledError extends Error {
	constructor(message = 'The execution was cancelled') {
		super(message);
		this.name = 'CancelledError';
	}
}

/**
 * A wait that would end after the caller's deadline, given up before it began: `waitMs` is how
 * long it would have taken, `leftMs` what was left of the deadline.
 */
export class PastDeadline extends Error {
	constructor(
		readonly reason: 'hold' | 'turn',
		readonly waitMs: number,
		readonly leftMs: number,
	) {
		super(`a wait of ${waitMs} ms would pass the deadline (${leftMs} ms left)`);
		this.name = 'PastDeadline';
	}
}

/** Deadlines not reached yet, each held here until its timer fires (see deadlineSignal). */
const pendingDeadlines = new Set<AbortSignal>();

/**
 * An AbortSignal that aborts `ms` from now: every deadline of a wait or a request is made here.
 * Node's `AbortSignal.timeout` alone is held only weakly by its own timer, and on Node 20 a signal
 * made from it by `AbortSignal.any` does not keep it alive: a wait on something that never settles
 * (a file store that stalls) could be collected together with its deadline, and never end. Held
 * here until it fires, a deadline always fires; its timer stays unref'd, as Node's is.
 */
export function deadlineSignal(ms: number): AbortSignal {
	const signal = AbortSignal.timeout(Math.max(1, ms));
	pendingDeadlines.add(signal);
	signal.addEventListener('abort', () => pendingDeadlines.delete(signal), { once: true });
	return signal;
}

/** What an idle watch's timer needs: the time, and a deadline `ms` from now (deadlineSignal; tests pass a virtual one). */
export interface TimerSource {
	now(): number;
	deadline(ms: number): AbortSignal;
}

export const realTimers: TimerSource = { now: () => Date.now(), deadline: deadlineSignal };

/**
 * The idle limit of an answer: `signal` aborts once `idleMs` pass without a sign of life (`alive`).
 * Unarmed until the first sign of life. One timer at a time, not one per chunk: a sign of life only
 * notes the time, and the timer, when it fires, measures the silence since then and either aborts
 * or sets itself for what is left of the window. `stop` ends the watch (the answer is done, or
 * another limit ended it first): it never fires afterwards.
 */
export class IdleWatch {
	private readonly ended = new AbortController();
	private lastLife: number | undefined;
	private armed = false;
	private stopped = false;

	constructor(
		readonly idleMs: number,
		private readonly timers: TimerSource = realTimers,
	) {}

	get signal(): AbortSignal {
		return this.ended.signal;
	}

	/** A sign of life: a byte of the answer, or the request sent whole. */
	alive(): void {
		if (this.stopped || this.ended.signal.aborted) return;
		this.lastLife = this.timers.now();
		if (!this.armed) this.arm(this.idleMs);
	}

	/** A request body on its way: its time is no silence, so the watch waits for the next sign of life. */
	pause(): void {
		this.lastLife = undefined;
	}

	stop(): void {
		this.stopped = true;
	}

	private arm(ms: number): void {
		this.armed = true;
		this.timers.deadline(ms).addEventListener('abort', () => this.check(), { once: true });
	}

	private check(): void {
		this.armed = false;
		if (this.stopped || this.lastLife === undefined) return;
		const now = this.timers.now();
		const silent = now - this.lastLife;
		if (silent < this.idleMs) return this.arm(this.idleMs - silent);
		this.ended.abort();
	}
}

/** A deadline and a cancel signal as one: `signal` aborts on either, `reason()` says which, once one has. */
export interface DeadlineScope {
	readonly signal: AbortSignal;
	reason(): 'deadline' | 'cancelled';
}

/** The scope of a deadline at `notAfter` (epoch ms) and the execution's cancel signal. */
export function deadlineScope(notAfter: number, cancel?: AbortSignal): DeadlineScope {
	const deadline = deadlineSignal(notAfter - Date.now());
	const signal = cancel ? AbortSignal.any([deadline, cancel]) : deadline;
	return { signal, reason: () => (cancel?.aborted ? 'cancelled' : 'deadline') };
}

export async function pause(ms: number, signal?: AbortSignal): Promise<void> {
	if (signal?.aborted) throw new CancelledError();
	if (ms <= 0) return;
	if (!signal) return await sleep(ms);
	await new Promise<void>((resolve, reject) => {
		const onAbort = () => reject(new CancelledError());
		signal.addEventListener('abort', onAbort, { once: true });
		sleep(ms, signal).then(
			() => {
				signal.removeEventListener('abort', onAbort);
				resolve();
			},
			() => undefined, // n8n 2.x's sleep rejects on abort too; onAbort already answered
		);
	});
}

export const realClock: Clock = { now: () => Date.now(), sleep: pause };
