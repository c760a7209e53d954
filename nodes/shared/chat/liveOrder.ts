/**
 * Live text of several items, in item order: a chat widget shows what a run streams as one
 * bubble per item, and interleaved chunks of items answering side by side would mix into one. So
 * the first item that starts streams live; each later item's chunks are held until every item
 * before it has ended, then sent whole, in order. Items run concurrently as before: only what
 * reaches the client waits.
 */
type Send = () => Promise<void>;

interface Slot {
	held: Send[];
	ended: boolean;
}

export class LiveOrder {
	/** Items that have started, in start order; the first one is live. */
	private readonly slots: Slot[] = [];
	/** Every send goes through this chain, so chunks leave in the order they are released. */
	private chain: Promise<void> = Promise.resolve();

	/** An item starts: its chunks go through `send` of the returned writer. */
	enter(): { send: (chunk: Send) => Promise<void>; end: () => Promise<void> } {
		const slot: Slot = { held: [], ended: false };
		this.slots.push(slot);
		return {
			send: async (chunk) => {
				if (this.slots[0] === slot) await this.enqueue(chunk);
				else slot.held.push(chunk);
			},
			end: async () => {
				slot.ended = true;
				if (this.slots[0] === slot) await this.advance();
			},
		};
	}

	/** The live item ended: release the next ones, whole, as long as they have ended too. */
	private async advance(): Promise<void> {
		// All released chunks join the chain at once, before anything else can.
		while (this.slots.length > 0 && this.slots[0].ended) {
			this.slots.shift();
			for (const chunk of this.slots[0]?.held.splice(0) ?? []) void this.enqueue(chunk).catch(() => undefined);
		}
		// A chunk n8n refuses fails the send that carried it, never an item's end: that would replace
		// the item's own outcome (and a released item's refusal is not the live item's).
		await this.chain.catch(() => undefined);
	}

	private async enqueue(chunk: Send): Promise<void> {
		this.chain = this.chain.then(chunk, chunk);
		await this.chain;
	}
}

/** One LiveOrder per node run: n8n hands every item of a run the same context object. */
const orders = new WeakMap<object, LiveOrder>();

export function liveOrderOf(run: object): LiveOrder {
	let order = orders.get(run);
	if (!order) {
		order = new LiveOrder();
		orders.set(run, order);
	}
	return order;
}
