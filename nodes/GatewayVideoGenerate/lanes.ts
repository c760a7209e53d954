/**
 * The lanes of a Generate run (issue 19): submits and status checks each have their own slots, so
 * a status check never waits behind queued submits (with one shared queue, 200 queued submits held
 * every check back until the last one had gone out, and tasks were reported still running without
 * ever being checked). Within a lane the most urgent work goes first (a check that fell behind
 * before one on time, see checkUrgency; a download before a new submit).
 */
import { urgencyNow } from '../shared/wire/pace';
import type { Urgency } from '../shared/wire/pace';

interface Waiting {
	priority: Urgency;
	order: number;
	start(): void;
}

export class Lane {
	private running = 0;
	private order = 0;
	private readonly waiting: Waiting[] = [];
	/** The most that were running at once (for tests and the benchmark). */
	peak = 0;

	constructor(readonly slots: number) {}

	/** Runs `task` in a free slot; a lower `priority` (when a slot frees) goes first, equal ones in the order they came. */
	async run<T>(task: () => Promise<T>, priority: Urgency = 0): Promise<T> {
		await new Promise<void>((resolve) => {
			this.waiting.push({ priority, order: this.order++, start: resolve });
			this.next();
		});
		try {
			return await task();
		} finally {
			this.running--;
			this.next();
		}
	}

	/** Work waiting for a slot. */
	get queued(): number {
		return this.waiting.length;
	}

	private next(): void {
		while (this.running < this.slots && this.waiting.length > 0) {
			const keys = this.waiting.map((waiting) => urgencyNow(waiting.priority));
			let best = 0;
			for (let i = 1; i < this.waiting.length; i++) {
				if (keys[i] < keys[best] || (keys[i] === keys[best] && this.waiting[i].order < this.waiting[best].order)) best = i;
			}
			const [chosen] = this.waiting.splice(best, 1);
			this.running++;
			this.peak = Math.max(this.peak, this.running);
			chosen.start();
		}
	}
}

/** Downloads go before submits in the submit lane: a finished video is fetched before new work starts. */
export const DOWNLOAD_PRIORITY = 0;
export const SUBMIT_PRIORITY = 1;
