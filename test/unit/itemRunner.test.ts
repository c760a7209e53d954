import { NodeOperationError } from 'n8n-workflow';

import { mapConcurrent, runPerItem } from '../../nodes/shared/items/itemRunner';
import type { FailedRun } from '../../nodes/shared/items/itemRunner';
import { fieldError } from '../../nodes/shared/items/validate';
import { createExecuteContext } from '../helpers/executeContext';

const credentials = { apiKey: 'sk-unit', baseUrl: 'http://127.0.0.1:9' };
const tick = async (n: number) => {
	for (let i = 0; i < n; i++) await Promise.resolve();
};

describe('mapConcurrent', () => {
	it('keeps input order and never runs more than the limit at once', async () => {
		let running = 0;
		let peak = 0;
		const results = await mapConcurrent([5, 1, 4, 2, 3, 0], 3, async (value) => {
			running++;
			peak = Math.max(peak, running);
			await tick(value * 3);
			running--;
			return value * 10;
		});
		expect(results).toEqual([50, 10, 40, 20, 30, 0]);
		expect(peak).toBe(3);
	});

	it('starts nothing new after a failure', async () => {
		const started: number[] = [];
		await expect(
			mapConcurrent([0, 1, 2, 3, 4], 1, async (value) => {
				started.push(value);
				if (value === 1) throw new Error('boom');
				return value;
			}),
		).rejects.toThrow('boom');
		expect(started).toEqual([0, 1]);
	});

	it('after a failure, ends the other lanes (onFail) and returns only once every lane has settled', async () => {
		const settled: number[] = [];
		let ended = false;
		let release: () => void = () => undefined;
		const endOthers = new Promise<void>((resolve) => (release = resolve));
		const run = mapConcurrent(
			[0, 1, 2],
			3,
			async (value) => {
				try {
					if (value === 0) throw new Error('boom');
					// The other lanes wait (as for a Retry-After) until the run ends them.
					await endOthers;
					throw new Error('ended');
				} finally {
					settled.push(value);
				}
			},
			() => {
				ended = true;
				release();
			},
		);
		await expect(run).rejects.toThrow('boom');
		expect(ended).toBe(true);
		expect(settled.sort()).toEqual([0, 1, 2]);
	});
});

describe('runPerItem', () => {
	const items = [0, 1, 2, 3].map((n) => ({ json: { n } }));

	it('checks every item before running any, and names field and item', async () => {
		const { ctx } = createExecuteContext({ parameters: {}, items, credentials });
		const ran: number[] = [];
		await expect(
			runPerItem(ctx, {
				prepare: (itemIndex) => {
					if (itemIndex === 2) throw fieldError(ctx, itemIndex, 'Prompt', 'must not be empty');
					return itemIndex;
				},
				run: async (input) => {
					ran.push(input);
					return { json: { ok: input } };
				},
			}),
		).rejects.toThrow('"Prompt" must not be empty (item 2)');
		expect(ran).toEqual([]);
	});

	it('with Continue On Fail: bad items become error items, the others run, order and pairing kept', async () => {
		const { ctx } = createExecuteContext({ parameters: { options: { concurrency: 4 } }, items, credentials, continueOnFail: true });
		const [output] = await runPerItem(ctx, {
			prepare: (itemIndex) => {
				if (itemIndex === 1) throw fieldError(ctx, itemIndex, 'N', 'must be from 1 to 10, not 11');
				return itemIndex;
			},
			run: async (input) => {
				await tick((4 - input) * 5); // later items answer first
				if (input === 3) throw new NodeOperationError(ctx.getNode(), 'gateway said no', { itemIndex: input });
				return [{ json: { image: `${input}a` } }, { json: { image: `${input}b` } }];
			},
		});
		expect(output.map((item) => item.json)).toEqual([
			{ image: '0a' },
			{ image: '0b' },
			{ error: '"N" must be from 1 to 10, not 11 (item 1)' },
			{ image: '2a' },
			{ image: '2b' },
			{ error: 'gateway said no' },
		]);
		expect(output.map((item) => item.pairedItem)).toEqual([
			{ item: 0 },
			{ item: 0 },
			{ item: 1 },
			{ item: 2 },
			{ item: 2 },
			{ item: 3 },
		]);
	});

	it('refuses a key without the sk- prefix before any request', async () => {
		const { ctx, requests } = createExecuteContext({ parameters: {}, credentials: { apiKey: 'pk-wrong-key-123', baseUrl: 'http://127.0.0.1:9' } });
		const run = jest.fn();
		const failure = runPerItem(ctx, { prepare: () => 1, run });
		await expect(failure).rejects.toThrow('must begin with "sk-"');
		await expect(failure).rejects.not.toThrow('pk-wrong-key-123');
		expect(run).not.toHaveBeenCalled();
		expect(requests).toEqual([]);
	});
});

describe('runPerItem: the paid work of a failed run', () => {
	const items = [0, 1, 2, 3, 4].map((n) => ({ json: { n } }));

	it('hands the operation how every item got on, and the edge puts its words and data into the one error', async () => {
		const { ctx } = createExecuteContext({ parameters: { options: { concurrency: 3 } }, items, credentials });
		let seen: FailedRun | undefined;
		const error = (await runPerItem(ctx, {
			prepare: (itemIndex) => itemIndex,
			run: async (input) => {
				await tick(input === 2 ? 1 : 20); // item 2 fails first; 0 and 1 are still on their way
				if (input === 2) throw new NodeOperationError(ctx.getNode(), 'item 2 refused', { itemIndex: 2 });
				if (input === 1) throw new NodeOperationError(ctx.getNode(), 'item 1 broke too', { itemIndex: 1 });
				return { json: { task_id: `task_${input}` } };
			},
			paidWork: (run) => {
				seen = run;
				return { text: 'Paid: item 0.', fields: { paid: [0] } };
			},
		}).catch((caught: unknown) => caught)) as NodeOperationError;
		expect(error.message).toBe('item 2 refused');
		expect(error.description).toBe('Paid: item 0.');
		expect(error.context.itemFields).toEqual({ paid: [0] });
		expect(seen?.failedItem).toBe(2);
		expect([...(seen?.outputs.keys() ?? [])]).toEqual([0]);
		expect([...(seen?.failures.keys() ?? [])].sort()).toEqual([1, 2]);
		expect(seen?.notStarted).toEqual([3, 4]);
	});
});
