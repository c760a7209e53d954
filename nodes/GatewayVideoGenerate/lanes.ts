/**
 * The submit lane of a Generate run: Concurrency slots for the paid work, a download before a new
 * submit. Status checks have a lane of their own, the check queue (checkSchedule.ts), so a check
 * never waits behind queued submits.
 */
interface Waiting {
	priority: number;
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
	async run<T>(task: () => Promise<T>, priority = 0): Promise<T> {
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
			let best = 0;
			for (let i = 1; i < this.waiting.length; i++) {
				const [candidate, chosen] = [this.waiting[i], this.waiting[best]];
				if (candidate.priority < chosen.priority || (candidate.priority === chosen.priority && candidate.order < chosen.order)) best = i;
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
