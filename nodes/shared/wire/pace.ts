/**
 * The sending pace of one execution, shared by all its items and requests: relays limit requests
 * per key and answer bare 429s beyond the limit, so the whole batch must meet the limit, not each
 * item on its own with its own retries.
 *
 * AIMD under one shared hold: no pace until the first 429 (Concurrency is the only bound);
 * then requests are spaced just under what the gateway let through in the last second, the pace
 * climbs back a little with every success (about +0.5 requests/s each second), and the next 429
 * cuts it again. A Retry-After holds every request until then. Concurrency stays the upper bound:
 * the pace only ever slows requests down.
 *
 * Its turns, the hold's included, are a TurnQueue's, the one turn mechanism of the package (a
 * Generate run's status checks and its submit lane take theirs from one too).
 */
import { CancelledError, PastDeadline, realClock } from './timing';
import type { Clock } from './timing';

export const DEFAULT_PACE = {
	/** After a 429 the pace is this share of what got through in the last second. */
	decrease: 0.9,
	/** Requests per second added per second of successes. */
	increasePerSecond: 0.5,
	/** The slowest pace: one request every two seconds. */
	minPerSecond: 0.5,
	/** 429s within this time of a cut, for requests sent before it, cut nothing more. */
	cutGuardMs: 1000,
	/** The window "what got through" is counted over. */
	windowMs: 1000,
};

/** A wait for a turn. */
export interface Turn {
	/** Its place now, the lowest first, asked anew at every turn (default: all equal, so the order they came). */
	rank?: () => readonly [number, number];
	/** Its deadline: a turn that would come after it (or at it, see TurnGates) is refused at once (PastDeadline). */
	notAfter?: number;
}

export interface TurnGates {
	/** Turns given and not yet given back (default: no bound). */
	slots?: number;
	/** The least time between two turns, as it is now (default 0). */
	spacingMs?: () => number;
	/** No turn before this (a shared hold); a waiter it pushes past its deadline is refused for the hold. */
	heldUntil?: () => number;
	/** A turn exactly at a waiter's deadline is given (its caller then decides), not refused. */
	turnAtDeadline?: boolean;
}

/** The lower rank first: its first number, then its second. */
export function compareRanks(a: readonly [number, number], b: readonly [number, number]): number {
	return a[0] - b[0] || a[1] - b[1];
}

interface Waiting<T extends Turn> {
	turn: T;
	arrival: number;
	settle(error?: Error): void;
}

/**
 * Turns given out one at a time by one pump: the best rank first (equal ranks in the order they
 * came), within the slots, one spacing apart, after the hold. Every waiter's turn is reckoned anew
 * whenever something changes (a waiter comes or leaves, a slot frees, a sleep ends), with the
 * spacing and the hold as they are then: one whose turn would come too late is refused at once,
 * and, every slot held, when it becomes so in the order of the moment (a waiter that a rank
 * changing with time moves back is refused at the next wake-up, by its own deadline at the latest).
 */
export class TurnQueue<T extends Turn = Turn> {
	/** The most turns held at once (for tests and the benchmark). */
	peak = 0;
	/** When the last turn was given: the next comes one spacing later (a cut of the pace moves it to now). */
	lastTurnAt = Number.NEGATIVE_INFINITY;
	private held = 0;
	private arrivals = 0;
	private readonly waiting: Array<Waiting<T>> = [];
	private pumping = false;
	private pumpSleep?: AbortController;

	constructor(
		private readonly clock: Clock,
		private readonly gates: TurnGates = {},
	) {}

	get slots(): number {
		return this.gates.slots ?? Number.POSITIVE_INFINITY;
	}

	get spacingMs(): number {
		return this.gates.spacingMs?.() ?? 0;
	}

	/** Waiters for a turn. */
	get queued(): number {
		return this.waiting.length;
	}

	/**
	 * Waits for a turn; resolves with the function that gives it back once its work is done. A
	 * waiter whose `signal` aborts leaves at once without a turn (CancelledError).
	 */
	async take(turn: T, signal?: AbortSignal): Promise<() => void> {
		if (signal?.aborted) throw new CancelledError();
		await new Promise<void>((resolve, reject) => {
			const onAbort = () => {
				this.waiting.splice(this.waiting.indexOf(waiting), 1);
				this.wakePump();
				reject(new CancelledError());
			};
			const waiting: Waiting<T> = {
				turn,
				arrival: this.arrivals++,
				settle: (error) => {
					signal?.removeEventListener('abort', onAbort);
					if (error) reject(error);
					else resolve();
				},
			};
			signal?.addEventListener('abort', onAbort, { once: true });
			this.waiting.push(waiting);
			this.wakePump();
		});
		let givenBack = false;
		return () => {
			if (givenBack) return;
			givenBack = true;
			this.held--;
			this.wakePump();
		};
	}

	/** Ends every wait for a turn (CancelledError). */
	cancelAll(): void {
		for (const waiting of this.waiting.splice(0)) waiting.settle(new CancelledError());
		this.pumpSleep?.abort();
	}

	private wakePump(): void {
		if (this.pumping) this.pumpSleep?.abort();
		else void this.pump();
	}

	/** Ranks the waiters (stable), refuses those whose turn comes too late, and gives the next turn when the gates open. */
	private async pump(): Promise<void> {
		this.pumping = true;
		try {
			while (this.waiting.length > 0) {
				const now = this.clock.now();
				const heldUntil = this.gates.heldUntil?.() ?? now;
				const nextTurnAt = Math.max(this.lastTurnAt + this.spacingMs, heldUntil, now);
				const lateAt = this.refuseLate(now, nextTurnAt, heldUntil);
				if (this.waiting.length === 0) break;
				const slotFree = this.held < this.slots;
				if (slotFree && nextTurnAt <= now) {
					const next = this.waiting.shift() as Waiting<T>;
					this.lastTurnAt = now;
					this.held++;
					this.peak = Math.max(this.peak, this.held);
					next.settle();
					continue;
				}
				// Until the spacing or the hold is over, or (every slot held) until a slot frees or a
				// waiter's turn can no longer come before its deadline (it is refused then, not later).
				const sleep = (this.pumpSleep = new AbortController());
				try {
					if (slotFree || Number.isFinite(lateAt)) await this.clock.sleep((slotFree ? nextTurnAt : lateAt) - now, sleep.signal);
					else await new Promise((resolve) => sleep.signal.addEventListener('abort', resolve, { once: true }));
				} catch {
					// a slot freed, a waiter came or left
				}
			}
		} finally {
			this.pumping = false;
		}
	}

	/**
	 * Orders the waiters by rank, and refuses each whose turn, if those ahead take theirs, comes too
	 * late; returns when the next of those kept will be too late in this order, if no turn comes first.
	 */
	private refuseLate(now: number, nextTurnAt: number, heldUntil: number): number {
		let lateAt = Number.POSITIVE_INFINITY;
		const ranked = this.waiting.map((waiting) => ({ waiting, rank: waiting.turn.rank?.() ?? [0, 0] }));
		ranked.sort((a, b) => compareRanks(a.rank, b.rank) || a.waiting.arrival - b.waiting.arrival);
		this.waiting.splice(0, this.waiting.length, ...ranked.map(({ waiting }) => waiting));
		let position = 0;
		for (const { waiting } of ranked) {
			const { notAfter = Number.POSITIVE_INFINITY } = waiting.turn;
			// The latest the next turn may come for this waiter's own, `position` turns later, to come in
			// time: compared as it is, so the refusal and the wake-up below agree whatever the rounding.
			const lastServingAt = notAfter - this.spacingMs * position;
			if (nextTurnAt > lastServingAt || (nextTurnAt === lastServingAt && !this.gates.turnAtDeadline)) {
				this.waiting.splice(this.waiting.indexOf(waiting), 1);
				const turnAt = nextTurnAt + this.spacingMs * position;
				// The hold's when the hold alone ends too late, whatever is ahead in line: it names the hold the gateway asked for.
				const refusal = heldUntil > now && heldUntil >= notAfter ? new PastDeadline('hold', heldUntil - now, notAfter - now) : new PastDeadline('turn', turnAt - now, notAfter - now);
				waiting.settle(refusal);
				continue;
			}
			if (lastServingAt > now) lateAt = Math.min(lateAt, lastServingAt);
			position++;
		}
		return lateAt;
	}
}

/** Sends within the window that make a burst worth measuring when none got through yet. */
const BURST = 4;

export class SendPace {
	private lastCut = Number.NEGATIVE_INFINITY;
	/** When the first request went out: early in a run the window is not full yet. */
	private firstSend: number | undefined;
	/** Times of recent successes and sends, oldest first, within `windowMs`. */
	private readonly successes: number[] = [];
	private readonly sends: number[] = [];
	/** No request before this: the latest hold (a Retry-After, or a backoff the caller chose) ends here. */
	private heldUntil = 0;
	/**
	 * Requests waiting for their turn, in the order they came: each turn's time is computed when it
	 * comes, with the pace and the hold as they are then, so a cut slows down the requests already
	 * waiting too, and a Retry-After that came while they waited holds them too.
	 */
	private readonly turns: TurnQueue;

	constructor(
		private readonly clock: Clock = realClock,
		private readonly tuning: typeof DEFAULT_PACE = DEFAULT_PACE,
		/** Requests per second; Infinity (none) until the gateway first says 429, unless a pace is given from the start. */
		private perSecond = Number.POSITIVE_INFINITY,
	) {
		this.turns = new TurnQueue(clock, { spacingMs: () => 1000 / this.perSecond, heldUntil: () => this.heldUntil, turnAtDeadline: true });
	}

	/** The current pace in requests per second (Infinity: none). */
	get requestsPerSecond(): number {
		return this.perSecond;
	}

	/** Holds every request for `ms` (a Retry-After, or a backoff the caller chose); a shorter hold never shortens a longer one. */
	holdFor(ms: number): void {
		this.heldUntil = Math.max(this.heldUntil, this.clock.now() + ms);
	}

	/**
	 * Waits for the shared hold, then for this request's turn in the pace. `notAfter` is the
	 * request's deadline: a hold or a turn that would come after it is not waited for at all
	 * (PastDeadline, at once, or as soon as a cut or a hold pushes it past), and a waiter whose
	 * `signal` aborts leaves the queue at once without taking a turn. First come, first served.
	 */
	async wait(signal?: AbortSignal, notAfter?: number): Promise<void> {
		// Without a pace or a hold there is no turn to wait for (nor one to refuse).
		if (Number.isFinite(this.perSecond) || this.heldUntil > this.clock.now()) (await this.turns.take({ notAfter }, signal))();
		const sent = this.clock.now();
		this.firstSend ??= sent;
		this.sends.push(sent);
		this.trim(sent);
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
			this.turns.lastTurnAt = Math.max(this.turns.lastTurnAt, now);
			return true;
		}
		// Per second, over the part of the window the run has lasted.
		const span = Math.max(50, Math.min(this.tuning.windowMs, now - (this.firstSend ?? now)));
		const admitted = (this.successes.length * 1000) / span;
		// Still too fast after a cut: at least the decrease again.
		const cutAgain = sentAt >= this.lastCut ? this.perSecond * this.tuning.decrease : this.perSecond;
		this.lastCut = now;
		this.perSecond = Math.max(this.tuning.minPerSecond, Math.min(cutAgain, admitted * this.tuning.decrease));
		this.turns.lastTurnAt = Math.max(this.turns.lastTurnAt, now);
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
