/**
 * Generate: submit, wait, download, for all items at once. Every item's task is submitted
 * (within the concurrency bound) and registered with one shared wait loop, and each video is
 * downloaded as soon as its task is done, so N videos take about as long as the slowest one.
 *
 * A task that fails, times out or cannot be checked becomes an error quoting its task id; with
 * Continue On Fail, an item carrying the task id and status. Without it, the first error stops
 * the run (nothing more is submitted, the loop stops) and its description lists the tasks of the
 * other items, so none of the paid tasks is lost.
 */
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { asNodeError, createLimiter, errorItem, getConcurrency, prepareItems } from '../shared/itemRunner';
import { GatewayClient } from '../shared/transport';
import { CancelledError, realClock } from '../shared/timing';
import type { Clock } from '../shared/timing';
import type { TaskRecord } from './pollDecision';
import { TaskPoller } from './poller';
import { readOutputInput, readSubmitInput, readWaitInput } from './request';
import type { OutputInput, SubmitInput, WaitInput } from './request';
import { downloadVideo, outcomeError, pollStatus, submitTask, videoItem } from './taskApi';

export interface VideoRuntime {
	/** Where the wait loop gets its time; tests pass a fake one. */
	clock: Clock;
}

export const defaultRuntime: VideoRuntime = { clock: realClock };

type GenerateInput = SubmitInput & WaitInput & OutputInput;

/** At most this many other tasks are listed in a failing run's error. */
const LISTED_TASKS = 20;

function otherTasks(tasks: Map<number, TaskRecord>, failedItem: number): string {
	const lines = [...tasks]
		.filter(([itemIndex]) => itemIndex !== failedItem)
		.sort(([a], [b]) => a - b)
		.map(([itemIndex, record]) => `item ${itemIndex}: ${record.task_id} (${record.status}${record.progress ? `, ${record.progress}` : ''})`);
	if (lines.length === 0) return '';
	const more = lines.length > LISTED_TASKS ? `, and ${lines.length - LISTED_TASKS} more` : '';
	return ` Tasks of the other items, to fetch with Get Status or Download: ${lines.slice(0, LISTED_TASKS).join('; ')}${more}.`;
}

export async function generate(ctx: IExecuteFunctions, runtime: VideoRuntime = defaultRuntime): Promise<INodeExecutionData[][]> {
	const prepared = await prepareItems<GenerateInput>(ctx, (itemIndex) => ({
		...readSubmitInput(ctx, itemIndex),
		...readWaitInput(ctx, itemIndex),
		...readOutputInput(ctx, itemIndex),
	}));
	const outputs = new Map<number, INodeExecutionData[]>();
	for (const entry of prepared) if (entry.error) outputs.set(entry.itemIndex, [errorItem(entry.error, entry.itemIndex)]);
	const valid = prepared.filter((entry) => !entry.error);
	if (valid.length > 0) await generateAll(ctx, runtime, valid as Array<{ itemIndex: number; input: GenerateInput }>, outputs);
	return [prepared.flatMap(({ itemIndex }) => outputs.get(itemIndex) ?? [])];
}

async function generateAll(
	ctx: IExecuteFunctions,
	runtime: VideoRuntime,
	items: Array<{ itemIndex: number; input: GenerateInput }>,
	outputs: Map<number, INodeExecutionData[]>,
): Promise<void> {
	const client = await GatewayClient.create(ctx);
	const continueOnFail = ctx.continueOnFail();
	const limit = createLimiter(getConcurrency(ctx));
	const itemOfTask = new Map<string, number>();
	const poller = new TaskPoller({
		clock: runtime.clock,
		signal: client.cancelSignal,
		limit,
		poll: async (taskId) => await pollStatus(client, taskId, itemOfTask.get(taskId) ?? 0),
	});
	/** The latest known state of every submitted task, by item. */
	const tasks = new Map<number, TaskRecord>();
	let firstFailure: { error: Error; itemIndex: number } | undefined;
	const halted = () => firstFailure !== undefined || client.cancelSignal?.aborted === true;

	const runItem = async ({ itemIndex, input }: { itemIndex: number; input: GenerateInput }): Promise<INodeExecutionData> => {
		const submitted = await limit(async () => {
			// Nothing more is paid for once the run is failing or cancelled.
			if (halted()) throw new CancelledError('Not submitted: the run stopped before this item');
			return await submitTask(client, input.body, itemIndex);
		});
		const { model, ...record } = submitted;
		itemOfTask.set(record.task_id, itemIndex);
		tasks.set(itemIndex, record);
		const outcome = await poller.watch(record, input);
		tasks.set(itemIndex, outcome.record);
		if (outcome.kind !== 'success') throw outcomeError(ctx, outcome, itemIndex);
		const extra = { model: model ?? input.fields.model };
		if (!input.binaryPropertyName) return videoItem(outcome.record, extra);
		const binary = await limit(async () => await downloadVideo(ctx, client, outcome.record, itemIndex));
		return videoItem(outcome.record, extra, input.binaryPropertyName, binary);
	};

	await Promise.all(
		items.map(async (entry) => {
			try {
				outputs.set(entry.itemIndex, [{ ...(await runItem(entry)), pairedItem: { item: entry.itemIndex } }]);
			} catch (error) {
				if (continueOnFail) {
					outputs.set(entry.itemIndex, [errorItem(error as Error, entry.itemIndex)]);
				} else if (!firstFailure) {
					firstFailure = { error: error as Error, itemIndex: entry.itemIndex };
					poller.stop();
				}
			}
		}),
	);
	await poller.finished();
	if (firstFailure) {
		const error = asNodeError(ctx.getNode(), firstFailure.error, firstFailure.itemIndex);
		const others = otherTasks(tasks, firstFailure.itemIndex);
		if (others) error.description = `${error.description ?? ''}${others}`.trim();
		throw error;
	}
}
