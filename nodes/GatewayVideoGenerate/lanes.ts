/**
 * The lanes of a Generate run (issue 19): submits and status checks each have their own slots, so
 * a status check never waits behind queued submits (with one shared queue, 200 queued submits held
 * every check back until the last one had gone out, and tasks were reported still running without
 * ever being checked). Within a lane the most urgent work goes first: the check of the task that
 * was due earliest, a download before a new submit.
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

	/** Runs `task` in a free slot; a lower `priority` goes first, equal ones in the order they came. */
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
				const candidate = this.waiting[i];
				const current = this.waiting[best];
				if (candidate.priority < current.priority || (candidate.priority === current.priority && candidate.order < current.order)) best = i;
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
