/**
 * The sending pace of one execution, shared by all its items and requests: relays limit requests
 * per key and answer bare 429s beyond the limit, so the whole batch must meet the limit, not each
 * item on its own with its own retries.
 *
 * AIMD over the shared backoff gate: no pace until the first 429 (Concurrency is the only bound);
 * then requests are spaced just under what the gateway let through in the last second, the pace
 * climbs back a little with every success (about +0.5 requests/s each second), and the next 429
 * cuts it again. A Retry-After holds every request until then. Concurrency stays the upper bound:
 * the pace only ever slows requests down.
 */
import { BackoffGate, CancelledError, PastDeadline, realClock } from './timing';
import type { Clock } from './timing';

export interface PaceTuning {
	/** After a 429 the pace is this share of what got through in the last second. */
	decrease: number;
	/** Requests per second added per second of successes. */
	increasePerSecond: number;
	/** The slowest pace: one request every two seconds. */
	minPerSecond: number;
	/** 429s within this time of a cut, for requests sent before it, cut nothing more. */
	cutGuardMs: number;
	/** The window "what got through" is counted over. */
	windowMs: number;
}

export const DEFAULT_PACE: PaceTuning = { decrease: 0.9, increasePerSecond: 0.5, minPerSecond: 0.5, cutGuardMs: 1000, windowMs: 1000 };

interface PaceWaiter {
	notAfter?: number;
	/** Gives the slot (no error) or refuses it. */
	settle(error?: Error): void;
}

/** Sends within the window that make a burst worth measuring when none got through yet. */
const BURST = 4;

export class SendPace {
	/** Requests per second; Infinity until the gateway first says 429. */
	private perSecond = Number.POSITIVE_INFINITY;
	/** When the last paced request went out. */
	private lastRelease = Number.NEGATIVE_INFINITY;
	/**
	 * Requests waiting for their slot, in the order they came. One pump gives the slots out: each slot's time is computed when it comes, with the
	 * pace and the hold as they are then, so a cut slows down the requests already waiting too.
	 */
	private readonly queue: PaceWaiter[] = [];
	private pumping = false;
	/** Ends the pump's sleep once nobody waits any more (every waiter gave up). */
	private pumpSleep?: AbortController;
	private lastCut = Number.NEGATIVE_INFINITY;
	/** When the first request went out: early in a run the window is not full yet. */
	private firstSend: number | undefined;
	/** Times of recent successes and sends, oldest first, within `windowMs`. */
	private readonly successes: number[] = [];
	private readonly sends: number[] = [];
	private readonly gate: BackoffGate;

	/** `startPerSecond`: a pace from the start, instead of none until the first 429. */
	constructor(
		private readonly clock: Clock = realClock,
		private readonly tuning: PaceTuning = DEFAULT_PACE,
		startPerSecond = Number.POSITIVE_INFINITY,
	) {
		this.gate = new BackoffGate(clock);
		this.perSecond = startPerSecond;
	}

	/** The current pace in requests per second (Infinity: none). */
	get requestsPerSecond(): number {
		return this.perSecond;
	}

	/** Holds every request for `ms` (a Retry-After, or a backoff the caller chose). */
	holdFor(ms: number): void {
		this.gate.holdFor(ms);
	}

	/** When the shared hold ends (epoch ms on the pace's clock; in the past when there is none). */
	get heldUntil(): number {
		return this.gate.heldUntil;
	}

	/**
	 * Waits for the shared hold, then for this request's slot in the pace. `notAfter` is the
	 * request's deadline: a hold or a slot that would come after it is not waited for at all
	 * (PastDeadline, at once, or as soon as a cut or a hold pushes it past), and a waiter whose
	 * `signal` aborts leaves the queue at once without taking a slot. First come, first served.
	 */
	async wait(signal?: AbortSignal, notAfter?: number): Promise<void> {
		await this.gate.wait(signal, notAfter);
		this.firstSend ??= this.clock.now();
		if (Number.isFinite(this.perSecond)) {
			const now = this.clock.now();
			// The earliest this request's slot can come, if every request ahead of it takes its own.
			const expected = Math.max(this.lastRelease + this.gap(), now) + this.gap() * this.queue.length;
			if (notAfter !== undefined && expected > notAfter) throw new PastDeadline('turn', expected - now, notAfter - now);
			await this.slot(signal, notAfter);
		}
		const sent = this.clock.now();
		this.sends.push(sent);
		this.trim(sent);
	}

	private gap(): number {
		return 1000 / this.perSecond;
	}

	/** Queues for a slot and waits until the pump gives it (or refuses it, or the signal aborts). */
	private async slot(signal: AbortSignal | undefined, notAfter: number | undefined): Promise<void> {
		if (signal?.aborted) throw new CancelledError();
		await new Promise<void>((resolve, reject) => {
			const onAbort = () => {
				this.leave(waiter);
				reject(new CancelledError());
			};
			const waiter: PaceWaiter = {
				notAfter,
				settle: (error) => {
					signal?.removeEventListener('abort', onAbort);
					if (error) reject(error);
					else resolve();
				},
			};
			signal?.addEventListener('abort', onAbort, { once: true });
			this.queue.push(waiter);
			void this.pump();
		});
	}

	private leave(waiter: PaceWaiter): void {
		const index = this.queue.indexOf(waiter);
		if (index >= 0) this.queue.splice(index, 1);
		// Nobody left to give a slot to: the pump stops sleeping towards one.
		if (this.queue.length === 0) this.pumpSleep?.abort();
	}

	/** Gives the slots out, one gap apart, in the order they came, until nobody waits. */
	private async pump(): Promise<void> {
		if (this.pumping) return;
		this.pumping = true;
		try {
			while (this.queue.length > 0) {
				const now = this.clock.now();
				// A Retry-After or a cut that came while requests waited holds them too (they would only meet another 429).
				const held = this.gate.heldUntil > now;
				const due = Math.max(this.lastRelease + this.gap(), this.gate.heldUntil, now);
				const ordered = [...this.queue];
				// Each waiter's slot if those ahead take theirs: one that now comes too late is refused at once.
				let position = 0;
				for (const waiter of ordered) {
					const slotAt = due + this.gap() * position;
					if (waiter.notAfter !== undefined && slotAt > waiter.notAfter) {
						this.leave(waiter);
						waiter.settle(new PastDeadline(held && position === 0 ? 'hold' : 'turn', slotAt - now, waiter.notAfter - now));
					} else position++;
				}
				if (this.queue.length === 0) break;
				if (due > now) {
					this.pumpSleep = new AbortController();
					try {
						await this.clock.sleep(due - now, this.pumpSleep.signal);
					} catch {
						// every waiter left
					}
					continue;
				}
				const next = this.queue.shift() as PaceWaiter;
				this.lastRelease = now;
				next.settle();
			}
		} finally {
			this.pumping = false;
		}
	}

	/** An answer that was not a 429: the pace climbs back a little. */
	succeeded(): void {
		const now = this.clock.now();
		this.successes.push(now);
		this.trim(now);
		if (Number.isFinite(this.perSecond)) this.perSecond += this.tuning.increasePerSecond / this.perSecond;
	}

	/** Now, on the pace's clock: what a request's `sentAt` is measured with. */
	now(): number {
		return this.clock.now();
	}

	/**
	 * A 429 for a request sent at `sentAt`: the pace is set just under what the gateway let
	 * through in the last second. A 429 for a request sent before the last cut answers the old
	 * pace and cuts nothing more (within cutGuardMs); one sent after it says the new pace is still
	 * too fast. Returns whether requests are now paced; when nothing got through yet there is
	 * nothing to measure, and the caller backs the batch off instead (holdFor).
	 */
	rateLimited(sentAt: number = Number.NEGATIVE_INFINITY): boolean {
		const now = this.clock.now();
		if (sentAt < this.lastCut && now - this.lastCut < this.tuning.cutGuardMs) return Number.isFinite(this.perSecond);
		this.trim(now);
		if (this.successes.length === 0) {
			// A burst refused before any answer got through: half of what was sent in the last window.
			// A lone request refused is no measure: the caller backs off instead.
			if (this.sends.length < BURST || sentAt < this.lastCut) return Number.isFinite(this.perSecond);
			this.lastCut = now;
			this.perSecond = Math.max(this.tuning.minPerSecond, Math.min(this.perSecond, (this.sends.length * 1000) / this.tuning.windowMs / 2));
			this.lastRelease = Math.max(this.lastRelease, now);
			return true;
		}
		// Per second, over the part of the window the run has lasted.
		const span = Math.max(50, Math.min(this.tuning.windowMs, now - (this.firstSend ?? now)));
		const admitted = (this.successes.length * 1000) / span;
		// Still too fast after a cut: at least the decrease again.
		const cutAgain = sentAt >= this.lastCut ? this.perSecond * this.tuning.decrease : this.perSecond;
		this.lastCut = now;
		this.perSecond = Math.max(this.tuning.minPerSecond, Math.min(cutAgain, admitted * this.tuning.decrease));
		this.lastRelease = Math.max(this.lastRelease, now);
		return true;
	}

	private trim(now: number): void {
		for (const list of [this.successes, this.sends]) {
			let drop = 0;
			while (drop < list.length && list[drop] <= now - this.tuning.windowMs) drop++;
			if (drop > 0) list.splice(0, drop);
		}
	}
}
