/**
 * Generate: submit, wait, download, for all items at once. Every item's task is submitted
 * (within the concurrency bound) and registered with one shared wait loop, and each video is
 * downloaded as soon as its task is done, so N videos take about as long as the slowest one.
 * Submits (and downloads, which go first) and status checks go in lanes of their own, each with
 * its own sending pace (lanesOf): a 429 to a submit does not hold the checks back, nor the other
 * way round. Max Wait counts for each task from its own submit (its 429 waits included): the
 * submit, the checks and the download all end within it. A first frame is read and encoded when
 * its item's submit goes out, and released after it.
 * One clock: the run's (VideoRuntime.clock) measures Max Wait and what is left of it; a request
 * takes what is left as its deadline (itemDeadline), and the transport keeps it in its own time.
 * The run's state (its tasks, its paid work, its first failure) is one object (videoRun.ts).
 *
 * Every paid task stays findable. Each is logged at info level the moment it is created, its id in
 * the log line's text. A task that fails, times out or cannot be checked becomes an error quoting
 * its task id; with Continue On Fail, an item carrying the task id and status. Without it, the
 * first error stops the run (nothing more is submitted, the loop stops) and lists every other
 * submitted task, in its description and in its data. A Stop ends the wait at once with one error
 * listing every task (n8n keeps no node output after a Stop, so the list is logged too).
 *
 * This loop is the node's own (not runPerItem: the items share one wait), but its errors leave
 * through the same edge, masked.
 */
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { errorItem } from '../shared/failures/edge';
import { getConcurrency, prepareItems } from '../shared/items/itemRunner';
import { GatewayClient, itemDeadline } from '../shared/wire/transport';
import { TurnQueue } from '../shared/wire/pace';
import { realClock } from '../shared/wire/timing';
import type { Clock } from '../shared/wire/timing';
import { CheckQueue, budgetSpacingMs, waitEndOf } from './checkSchedule';
import { TaskPoller } from './poller';
import type { TaskOutcome, WatchSettings } from './poller';
import { readOutputInput, readResumeTaskId, readStatusBudget, readSubmitInput, readWaitInput, submitBody } from './request';
import type { SubmitInput } from './request';
import type { SubmittedTask } from './task';
import { MAX_WAIT_FIELD, STATUS_DEADLINE_MS, downloadVideo, lastCheckWords, lastChecksWords, logVideo, outcomeError, placeText, placeOf, pollStatus, submitTask, videoItem } from './taskApi';
import type { LogPlace } from './taskApi';
import { VideoRun } from './videoRun';

export interface VideoRuntime {
	/** Where the wait loop gets its time; tests pass a fake one. */
	clock: Clock;
	/** Called with the lanes of a run once they exist (tests and the benchmark read their peaks). */
	onLanes?: (lanes: Lanes) => void;
}

export const defaultRuntime: VideoRuntime = { clock: realClock };

/** One item: what to submit, or the task it already has (Resume Task ID: a retried run pays nothing twice). */
type GenerateInput = WatchSettings & ReturnType<typeof readOutputInput> & ({ submit: SubmitInput; resumeTaskId?: undefined } | { submit?: undefined; resumeTaskId: string });

export async function generate(ctx: IExecuteFunctions, runtime: VideoRuntime = defaultRuntime): Promise<INodeExecutionData[][]> {
	const prepared = await prepareItems<GenerateInput>(ctx, async (itemIndex) => {
		const resumeTaskId = readResumeTaskId(ctx, itemIndex);
		const wait = { ...readWaitInput(ctx, itemIndex), ...readOutputInput(ctx, itemIndex) };
		return resumeTaskId !== undefined ? { ...wait, resumeTaskId } : { ...wait, submit: await readSubmitInput(ctx, itemIndex) };
	});
	const outputs = new Map<number, INodeExecutionData[]>();
	for (const entry of prepared) if (entry.error) outputs.set(entry.itemIndex, [errorItem(ctx.getNode(), entry.error, entry.itemIndex)]);
	const valid = prepared.filter((entry) => !entry.error);
	if (valid.length > 0) await generateAll(ctx, runtime, valid as Array<{ itemIndex: number; input: GenerateInput }>, outputs);
	return [prepared.flatMap(({ itemIndex }) => outputs.get(itemIndex) ?? [])];
}

/** A task that ended without its video but may still be running (and charged): its id in the log line's text. */
function logUnfinished(ctx: IExecuteFunctions, outcome: TaskOutcome, itemIndex: number, place: LogPlace, masker: GatewayClient['masker']): void {
	if (outcome.kind !== 'timeout' && outcome.kind !== 'unreachable') return;
	const taskId = outcome.record.task_id;
	const waited = outcome.kind === 'timeout' ? Math.round(outcome.waitedMs / 1000) : 0;
	const why =
		outcome.kind === 'unreachable'
			? `could not be checked (${outcome.failedPolls > 1 ? `${outcome.failedPolls} checks in a row failed; the last: ` : ''}${lastCheckWords(outcome.error, taskId)})`
			: outcome.lastCheckError
				? `was not seen done within Max Wait (${waited} s; ${lastChecksWords(outcome.lastCheckError, taskId, outcome.failedPolls)})`
				: `is still running after ${waited} s (Max Wait)`;
	const text = `video task ${taskId} ${why}; fetch it later with Get Status or Download ${placeText(itemIndex, place)}`;
	logVideo(ctx, 'warn', masker, text, { ...place, itemIndex, taskId, status: outcome.record.status });
}

/** The most status checks of one run waiting for their answer at once, whatever the budget. */
export const MAX_CHECKS_IN_FLIGHT = 100;

/**
 * The lanes of a run. Submits (and downloads) are the paid work: Concurrency slots. Status checks
 * are cheap GETs whose rate the check queue's budget already bounds, so their slots follow the
 * budget: to spend B checks/s while answers take L seconds, B × L checks must be on their way at
 * once (Little's law). The slots cover answers as slow as a check may take (STATUS_DEADLINE_MS),
 * at most MAX_CHECKS_IN_FLIGHT (a gateway that stalls never holds more open checks of one run),
 * never fewer than Concurrency.
 */
export function lanesOf(concurrency: number, checksPerSecond: number, clock: Clock) {
	const slots = Math.max(concurrency, Math.min(MAX_CHECKS_IN_FLIGHT, Math.ceil((checksPerSecond * STATUS_DEADLINE_MS) / 1000)));
	return { submits: new TurnQueue(clock, { slots: concurrency }), checks: new CheckQueue(clock, { slots, spacingMs: budgetSpacingMs(checksPerSecond) }) };
}

type Lanes = ReturnType<typeof lanesOf>;

/** Downloads go before submits in the submit lane: a finished video is fetched before new work starts. */
const DOWNLOAD_PRIORITY = 0;
const SUBMIT_PRIORITY = 1;

/** What every item of a run shares: the node's context, the one clock, the client, the lanes, the wait loop and the run's state. */
interface RunParts {
	ctx: IExecuteFunctions;
	clock: Clock;
	client: GatewayClient;
	lanes: Lanes;
	poller: TaskPoller;
	run: VideoRun;
	place: LogPlace;
}

async function generateAll(ctx: IExecuteFunctions, runtime: VideoRuntime, items: Array<{ itemIndex: number; input: GenerateInput }>, outputs: Map<number, INodeExecutionData[]>): Promise<void> {
	const client = await GatewayClient.create(ctx);
	const continueOnFail = ctx.continueOnFail();
	const run = new VideoRun(ctx, items.length, { cancelSignal: client.cancelSignal, continueOnFail });
	const lanes = lanesOf(getConcurrency(ctx), readStatusBudget(ctx), runtime.clock);
	runtime.onLanes?.(lanes);
	const parts: RunParts = { ctx, clock: runtime.clock, client, lanes, run, poller: waitLoopOf(runtime, client, lanes, run), place: placeOf(ctx) };
	// The run's scope ends with the items: no retry wait of this run can send anything afterwards.
	try {
		await Promise.all(
			items.map(async (entry) => {
				try {
					outputs.set(entry.itemIndex, [{ ...(await runItem(parts, entry)), pairedItem: { item: entry.itemIndex } }]);
				} catch (error) {
					// A Stop is reported once, for the whole run (VideoRun.endError).
					if (run.cancelled) return;
					if (continueOnFail) {
						outputs.set(entry.itemIndex, [errorItem(ctx.getNode(), error, entry.itemIndex, client.masker)]);
					} else {
						run.failed(entry.itemIndex, error);
						parts.poller.stop();
					}
				}
			}),
		);
		await parts.poller.finished();
	} finally {
		client.close();
	}
	const error = run.endError(ctx.getNode(), client.masker, parts.place);
	if (error) throw error;
}

/** The run's one wait loop: its checks go through the check queue, on the run's clock. */
function waitLoopOf(runtime: VideoRuntime, client: GatewayClient, lanes: Lanes, run: VideoRun): TaskPoller {
	// Status checks are paced by the check queue alone: outside the execution's pace of submits.
	const checksClient = client.unpaced();
	return new TaskPoller({
		clock: runtime.clock,
		signal: client.cancelSignal,
		queue: lanes.checks,
		// A test's clock moves only when the loop sleeps: its timers are never late.
		settleBeforeSleep: runtime.clock !== realClock,
		// A check sent again after a Retry-After, a little later by chance, falls out of step with a gateway that refuses by turn.
		jitter: Math.random,
		poll: async (taskId, remainingMs) => await run.check(taskId, async (itemIndex) => await pollStatus(checksClient, taskId, itemIndex, remainingMs)),
	});
}

/** One item: its submit (or the task it resumes), its wait, and its download, all within its Max Wait. */
async function runItem(parts: RunParts, { itemIndex, input }: { itemIndex: number; input: GenerateInput }): Promise<INodeExecutionData> {
	const { clock, run } = parts;
	// A task an earlier run already paid for is waited on and downloaded, never submitted again.
	const { task: submitted, submittedAt } =
		input.submit === undefined ? { task: { task_id: input.resumeTaskId, status: 'UNKNOWN' }, submittedAt: clock.now() } : await submitItem(parts, itemIndex, input.submit, input.maxWaitMs);
	const { model, ...record } = submitted;
	run.setTask(itemIndex, record);
	const outcome = await parts.poller.watch(record, { ...input, submittedAt });
	run.setTask(itemIndex, outcome.record);
	if (outcome.kind !== 'success') {
		logUnfinished(parts.ctx, outcome, itemIndex, parts.place, parts.client.masker);
		throw outcomeError(outcome, itemIndex);
	}
	const extra = { model: model ?? input.submit?.fields.model ?? null };
	if (!input.binaryPropertyName) return videoItem(outcome.record, extra);
	// The download too ends within the task's Max Wait: what is left of it on the run's clock.
	const limit = itemDeadline(Math.max(1, waitEndOf({ deadline: submittedAt + input.maxWaitMs }) - clock.now()), MAX_WAIT_FIELD);
	const binary = await inSubmitLane(parts, itemIndex, DOWNLOAD_PRIORITY, async () => await downloadVideo(parts.ctx, parts.client, outcome.record, itemIndex, limit));
	return videoItem(outcome.record, extra, input.binaryPropertyName, binary);
}

/** An item's submit, in its turn of the submit lane; Max Wait counts from when it goes out (its 429 waits included). */
async function submitItem(parts: RunParts, itemIndex: number, submit: SubmitInput, maxWaitMs: number): Promise<{ task: SubmittedTask; submittedAt: number }> {
	const { ctx, client, run } = parts;
	return await inSubmitLane(parts, itemIndex, SUBMIT_PRIORITY, async () => {
		run.refuseIfHalted(itemIndex);
		const submittedAt = parts.clock.now();
		// The first frame is read and encoded now, and released with the body after the submit.
		const limit = itemDeadline(maxWaitMs, MAX_WAIT_FIELD);
		const body = await submitBody(ctx, client, itemIndex, submit, limit);
		// A submit's Retry-After holds that submit in its slot, not the lane, and does not cut the
		// pace (a bare 429 still does): a gateway that refuses a share of submits would otherwise
		// hold and slow them all.
		const task = await submitTask(ctx, client, body, itemIndex, limit, true).catch(async (error: unknown) => {
			run.submitFailed(itemIndex, error);
			return await Promise.reject(error);
		});
		return { task, submittedAt };
	});
}

/** Paid work in a slot of the submit lane: its failure fails the run before the slot passes on, so no submit goes out after it. */
async function inSubmitLane<T>(parts: RunParts, itemIndex: number, priority: number, work: () => Promise<T>): Promise<T> {
	const failing = async (error: unknown): Promise<T> => {
		parts.run.failed(itemIndex, error);
		return await Promise.reject(error);
	};
	const giveBack = await parts.lanes.submits.take({ rank: () => [priority, 0] });
	return await work().catch(failing).finally(giveBack);
}
