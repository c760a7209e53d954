/**
 * The per-item loop every gateway node shares: all items are checked before any request is sent,
 * then run with bounded concurrency; output keeps input order and `pairedItem` whatever order the
 * answers arrive in, and Continue On Fail turns a failed item into an item with `json.error`.
 */
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { asNodeError, errorItem } from '../failures/edge';
import type { RunAddendum } from '../failures/edge';
import { GatewayClient } from '../wire/transport';

export const DEFAULT_CONCURRENCY = 10;
export const MAX_CONCURRENCY = 100;

export interface PreparedItem<P> {
	itemIndex: number;
	input?: P;
	error?: Error;
}

/**
 * Runs `worker` over `inputs` with at most `limit` running at once. Fails fast: after the first
 * rejection no further input is started, `onFail` is called (to end the other lanes' waits and
 * requests), and once every lane has settled that first rejection is returned. So nothing of the
 * run goes on after it returns or throws.
 */
export async function mapConcurrent<T, R>(
	inputs: readonly T[],
	limit: number,
	worker: (input: T, position: number) => Promise<R>,
	onFail?: () => void,
): Promise<R[]> {
	const results = new Array<R>(inputs.length);
	let next = 0;
	let failure: { error: unknown } | undefined;
	const lane = async () => {
		while (!failure && next < inputs.length) {
			const position = next++;
			try {
				results[position] = await worker(inputs[position], position);
			} catch (error) {
				if (!failure) {
					failure = { error };
					onFail?.();
				}
				return;
			}
		}
	};
	const lanes = Math.max(1, Math.min(Math.floor(limit) || 1, inputs.length));
	await Promise.all(Array.from({ length: lanes }, lane));
	if (failure) throw failure.error;
	return results;
}

export type Settled<R> = { value: R } | { error: unknown };

/** Like mapConcurrent, but runs every input whatever fails, and says how each ended. */
export async function settleConcurrent<T, R>(inputs: readonly T[], limit: number, worker: (input: T, position: number) => Promise<R>): Promise<Array<Settled<R>>> {
	return await mapConcurrent(inputs, limit, async (input, position) => {
		try {
			return { value: await worker(input, position) };
		} catch (error) {
			return { error };
		}
	});
}

/**
 * Checks every item before anything is sent; a bad item fails the node unless Continue On Fail.
 * Items are checked side by side, as they run: a file store that stalls holds the run for one
 * item's limit, not for one limit per item.
 */
export async function prepareItems<P>(ctx: IExecuteFunctions, prepare: (itemIndex: number) => P | Promise<P>): Promise<Array<PreparedItem<P>>> {
	const indexes = Array.from({ length: ctx.getInputData().length }, (_, itemIndex) => itemIndex);
	const continueOnFail = ctx.continueOnFail();
	const settled = await settleConcurrent(indexes, getConcurrency(ctx), async (itemIndex) => await prepare(itemIndex));
	return settled.map((result, itemIndex) => {
		if ('value' in result) return { itemIndex, input: result.value };
		if (!continueOnFail) throw asNodeError(ctx.getNode(), result.error, itemIndex);
		return { itemIndex, error: result.error as Error };
	});
}

/** Reads the node's concurrency option (shared name across nodes), clamped to the allowed range. */
export function getConcurrency(ctx: IExecuteFunctions): number {
	const raw = Number(ctx.getNodeParameter('options.concurrency', 0, DEFAULT_CONCURRENCY));
	if (!Number.isFinite(raw)) return DEFAULT_CONCURRENCY;
	return Math.min(MAX_CONCURRENCY, Math.max(1, Math.floor(raw)));
}

export interface PerItemOperation<P> {
	/** Reads and checks one item's parameters, throwing an error that names field and item. */
	prepare(itemIndex: number): P | Promise<P>;
	/** Calls the gateway for one item; its output items are paired with it. */
	run(input: P, itemIndex: number, client: GatewayClient): Promise<INodeExecutionData | INodeExecutionData[]>;
	/**
	 * For paid work that leaves something to fetch later (a video task): what the run's error adds
	 * when an item fails the run. n8n keeps no output of a failed node, and the other items'
	 * errors are shown nowhere else, so the error lists what they paid for.
	 */
	paidWork?(run: FailedRun): RunAddendum | undefined;
}

/** A run that an item's failure ended: how each item got on. */
export interface FailedRun {
	/** The item whose failure ended the run. */
	failedItem: number;
	/** The output of every item that finished. */
	outputs: ReadonlyMap<number, INodeExecutionData[]>;
	/** The error of every item that failed, the first one included. */
	failures: ReadonlyMap<number, unknown>;
	/** The items that never started, in order. */
	notStarted: number[];
}

/** Checks every item, then runs them concurrently; returns the node's single output. */
export async function runPerItem<P>(ctx: IExecuteFunctions, operation: PerItemOperation<P>): Promise<INodeExecutionData[][]> {
	const prepared = await prepareItems(ctx, (itemIndex) => operation.prepare(itemIndex));
	const valid = prepared.filter((entry) => !entry.error);
	const outputs = new Map<number, INodeExecutionData[]>();
	for (const entry of prepared) if (entry.error) outputs.set(entry.itemIndex, [errorItem(ctx.getNode(), entry.error, entry.itemIndex)]);

	if (valid.length > 0) {
		const client = await GatewayClient.create(ctx);
		const continueOnFail = ctx.continueOnFail();
		let failedItem: number | undefined;
		const failures = new Map<number, unknown>();
		try {
			// The first failure ends the run: every other lane's waits end and nothing new starts; a
			// request in flight runs to its answer (a paid task it created is named in the error), and
			// the node throws only once every lane has settled.
			await mapConcurrent(
				valid,
				getConcurrency(ctx),
				async ({ itemIndex, input }) => {
					try {
						const output = [await operation.run(input as P, itemIndex, client)].flat();
						outputs.set(itemIndex, output.map((item) => ({ ...item, pairedItem: { item: itemIndex } })));
					} catch (error) {
						if (!continueOnFail) {
							failedItem ??= itemIndex;
							failures.set(itemIndex, error);
							// Ends the run; its error is built once every lane has settled, below.
							throw asNodeError(ctx.getNode(), error, itemIndex, client.masker);
						}
						outputs.set(itemIndex, [errorItem(ctx.getNode(), error, itemIndex, client.masker)]);
					}
				},
				() => client.windDown(),
			);
		} catch (error) {
			// The first failure, with the paid work of the other items (masked with it, at the edge).
			const first = failedItem === undefined ? error : failures.get(failedItem);
			const notStarted = valid.map(({ itemIndex }) => itemIndex).filter((itemIndex) => !outputs.has(itemIndex) && !failures.has(itemIndex));
			const paidWork = failedItem === undefined ? undefined : operation.paidWork?.({ failedItem, outputs, failures, notStarted });
			throw asNodeError(ctx.getNode(), first, failedItem, client.masker, paidWork);
		} finally {
			client.close();
		}
	}
	return [prepared.flatMap(({ itemIndex }) => outputs.get(itemIndex) ?? [])];
}
