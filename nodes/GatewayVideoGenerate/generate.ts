/**
 * Generate: submit, wait, download, for all items at once. Every item's task is submitted
 * (within the concurrency bound) and registered with one shared wait loop, and each video is
 * downloaded as soon as its task is done, so N videos take about as long as the slowest one.
 * Submits and status checks go in lanes of their own (lanes.ts), each with its own sending pace
 * (the checks: Status Checks per Second, their slots following that budget, see lanesOf; the
 * submits: Concurrency slots and the execution's adaptive pace): a 429 to a submit does not hold
 * the checks back, nor the other way round.
 * Downloads share the submit lane and go first. Max Wait counts for each task from its own submit
 * (its 429 waits included): the submit, the checks and the download all end within it. A first
 * frame is read and encoded when its item's submit goes out, and released after it.
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
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { asNodeError, errorItem } from '../shared/failures/edge';
import { GatewayError } from '../shared/failures/errors';
import { getConcurrency, prepareItems } from '../shared/items/itemRunner';
import { BUDGET_PACE } from '../shared/wire/pace';
import { GatewayClient, itemDeadline } from '../shared/wire/transport';
import { realClock } from '../shared/wire/timing';
import type { Clock } from '../shared/wire/timing';
import { CheckQueue } from './checkSchedule';
import { DOWNLOAD_PRIORITY, Lane, SUBMIT_PRIORITY } from './lanes';
import { waitEndOf } from './pollDecision';
import type { TaskOutcome } from './pollDecision';
import { TaskPoller } from './poller';
import { readOutputInput, readResumeTaskId, readStatusBudget, readSubmitInput, readWaitInput, submitBody } from './request';
import type { OutputInput, SubmitInput, WaitInput } from './request';
import { VideoProgress } from './progress';
import { mergeRecords, refusedTaskText } from './task';
import type { SubmittedTask, TaskRecord } from './task';
import { MAX_WAIT_FIELD, STATUS_DEADLINE_MS, downloadVideo, executionIdOf, mayHaveCreatedTask, outcomeError, placeText, pollStatus, refusedTaskIdOf, submitTask, unconfirmedSubmitWords, videoItem } from './taskApi';
import type { LogPlace } from './taskApi';

export interface VideoRuntime {
	/** Where the wait loop gets its time; tests pass a fake one. */
	clock: Clock;
	/** Called with the lanes of a run once they exist (tests and the benchmark read their peaks). */
	onLanes?: (lanes: { submits: Lane; checks: CheckQueue }) => void;
	/** The clock moves only when the wait loop sleeps (a test's fake clock); default: any clock but the real one. */
	virtualTime?: boolean;
}

export const defaultRuntime: VideoRuntime = { clock: realClock };

/** One item: what to submit, or the task it already has (Resume Task ID: a retried run pays nothing twice). */
type GenerateInput = WaitInput & OutputInput & ({ submit: SubmitInput; resumeTaskId?: undefined } | { submit?: undefined; resumeTaskId: string });

/** One submitted task, as errors list it (in their description and their data). */
export interface ListedTask extends IDataObject {
	item: number;
	task_id: string;
	status: string;
	progress: string | null;
}

export function listTasks(tasks: Map<number, TaskRecord>): ListedTask[] {
	return [...tasks]
		.sort(([a], [b]) => a - b)
		.map(([item, record]) => ({ item, task_id: record.task_id, status: record.status, progress: record.progress ?? null }));
}

function taskLine(task: ListedTask): string {
	return `item ${task.item}: ${task.task_id} (${task.status}${task.progress ? `, ${task.progress}` : ''})`;
}

function itemList(items: number[]): string {
	return items.sort((a, b) => a - b).join(', ');
}

/** A submit answered with a task ID that was refused (`..`): the task may exist and be charged. */
export interface RefusedTask {
	item: number;
	task_id: string;
}

/** A submit that failed after it may have created a task, and how it ended. */
export interface UnconfirmedSubmit {
	item: number;
	words: string;
}

/** The words about the run's other tasks: every one of them, and the items that may have one. */
export function otherTasksText(tasks: ListedTask[], failedItem: number | undefined, unconfirmed: UnconfirmedSubmit[], notSubmitted: number[], refused: RefusedTask[] = []): string {
	const others = tasks.filter((task) => task.item !== failedItem);
	const parts: string[] = [];
	if (others.length) parts.push(`${failedItem === undefined ? 'Video tasks of this run' : 'Tasks of the other items'}, to fetch with Get Status or Download: ${others.map(taskLine).join('; ')}.`);
	const otherRefused = refused.filter((task) => task.item !== failedItem);
	if (otherRefused.length) parts.push(`Paid tasks that cannot be checked: ${otherRefused.map((task) => `item ${task.item}: ${refusedTaskText(task.task_id)}`).join('; ')}.`);
	const maybe = unconfirmed.filter(({ item }) => item !== failedItem);
	// One sentence per way the submits ended ("got no answer", "was answered HTTP 502").
	for (const words of new Set(maybe.map((entry) => entry.words))) {
		const items = maybe.filter((entry) => entry.words === words).map(({ item }) => item);
		parts.push(`The submit of item${items.length > 1 ? 's' : ''} ${itemList(items)} ${words}: the gateway may have created a task (check its console).`);
	}
	if (notSubmitted.length) parts.push(`Not submitted: item${notSubmitted.length > 1 ? 's' : ''} ${itemList(notSubmitted)}.`);
	return parts.join(' ');
}

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

/** A task an earlier run already paid for: waited on and downloaded, never submitted again. */
function resumedTask(taskId: string): SubmittedTask {
	return { task_id: taskId, status: 'UNKNOWN' };
}

/** Task lines per log line: a run of 1,000 videos logs its list in readable pieces. */
const TASKS_PER_LOG_LINE = 100;

/**
 * Warns with the run's task list in the message text itself (n8n's default log format prints only
 * the message), in pieces of 100 tasks; the metadata keeps the list as data.
 */
function logTaskList(ctx: IExecuteFunctions, headline: string, listed: ListedTask[], place: LogPlace, masker: GatewayClient['masker'], extra: IDataObject = {}): void {
	const logger = (ctx as Partial<IExecuteFunctions>).logger;
	if (typeof logger?.warn !== 'function') return;
	const pieces = Math.max(1, Math.ceil(listed.length / TASKS_PER_LOG_LINE));
	for (let piece = 0; piece < pieces; piece++) {
		const part = listed.slice(piece * TASKS_PER_LOG_LINE, (piece + 1) * TASKS_PER_LOG_LINE);
		const counter = pieces > 1 ? ` [${piece + 1}/${pieces}]` : '';
		const list = part.length ? `: ${part.map(taskLine).join('; ')}` : '';
		logger.warn(masker.mask(`${headline} ${placeText(undefined, place)}${counter}${list}`), masker.maskDeep({ ...place, tasks: part, ...extra }));
	}
}

/** A task that ended without its video but may still be running (and charged): its id in the log line's text. */
function logUnfinished(ctx: IExecuteFunctions, outcome: TaskOutcome, itemIndex: number, place: LogPlace, masker: GatewayClient['masker']): void {
	if (outcome.kind !== 'timeout' && outcome.kind !== 'unreachable') return;
	const logger = (ctx as Partial<IExecuteFunctions>).logger;
	if (typeof logger?.warn !== 'function') return;
	const waited = outcome.kind === 'timeout' ? Math.round(outcome.waitedMs / 1000) : 0;
	const why =
		outcome.kind !== 'timeout' ? 'could not be checked' : outcome.lastCheckError ? `was not seen done within Max Wait (${waited} s; its last check failed)` : `is still running after ${waited} s (Max Wait)`;
	const text = `Model Gateway: video task ${outcome.record.task_id} ${why}; fetch it later with Get Status or Download ${placeText(itemIndex, place)}`;
	logger.warn(masker.mask(text), masker.maskDeep({ ...place, itemIndex, taskId: outcome.record.task_id, status: outcome.record.status }));
}

/** The most status checks of one run waiting for their answer at once, whatever the budget. */
export const MAX_CHECKS_IN_FLIGHT = 100;

/**
 * The lanes of a run. Submits (and downloads) are the paid work: Concurrency slots. Status checks
 * are cheap GETs whose rate is already bounded by Status Checks per Second (the check queue's
 * budget, one gap apart with a margin of BUDGET_PACE's), so their slots follow the budget, not Concurrency: to spend a budget of B checks/s while answers take L
 * seconds, B × L checks must be on their way at once (Little's law). With Concurrency slots the
 * checks were bounded by Concurrency / L instead: 10 slots and answers of 0.5–3 s (1.75 s on
 * average) gave at most 5.7 checks/s of a budget of 10, so checks queued and a task's gap between
 * two checks grew past its Poll Interval (bench rows 11a/11b). The slots cover answers as slow as
 * a check may take (STATUS_DEADLINE_MS, 30 s), at most MAX_CHECKS_IN_FLIGHT (100, Concurrency's
 * own maximum): a gateway that stalls never holds more than 100 open checks of one run, and the
 * rate it sees stays the budget. Never fewer slots than Concurrency (what they had before).
 */
export function lanesOf(concurrency: number, checksPerSecond: number, clock: Clock = realClock): { submits: Lane; checks: CheckQueue } {
	const slots = Math.max(concurrency, Math.min(MAX_CHECKS_IN_FLIGHT, Math.ceil((checksPerSecond * STATUS_DEADLINE_MS) / 1000)));
	return { submits: new Lane(concurrency), checks: new CheckQueue(clock, { slots, spacingMs: (1000 / checksPerSecond) * BUDGET_PACE.gapMargin }) };
}

async function generateAll(
	ctx: IExecuteFunctions,
	runtime: VideoRuntime,
	items: Array<{ itemIndex: number; input: GenerateInput }>,
	outputs: Map<number, INodeExecutionData[]>,
): Promise<void> {
	const { clock } = runtime;
	const client = await GatewayClient.create(ctx);
	const node = ctx.getNode();
	const place: LogPlace = { executionId: executionIdOf(ctx), node: node.name };
	const continueOnFail = ctx.continueOnFail();
	const checksPerSecond = readStatusBudget(ctx);
	const lanes = lanesOf(getConcurrency(ctx), checksPerSecond, clock);
	runtime.onLanes?.(lanes);
	const itemOfTask = new Map<string, number>();
	// Status checks are paced by the check queue alone: outside the execution's pace of submits.
	const checksClient = client.unpaced();
	/** A test's virtual clock moves only when the loop sleeps: its timers are never late. */
	const virtualTime = runtime.virtualTime ?? clock !== realClock;
	const poller = new TaskPoller({
		clock,
		signal: client.cancelSignal,
		queue: lanes.checks,
		// No lead: a check goes out when its interval is over, so Poll Interval means what it says
		// (a lead of a tenth, tried for timers running late on a loaded machine, compounded into a
		// tenth more checks and an extra one before Max Wait).
		settleBeforeSleep: virtualTime,
		// A check sent again after a Retry-After, a little later by chance, falls out of step with a gateway that refuses by turn.
		jitter: Math.random,
		poll: async (taskId, remainingMs) => {
			const item = itemOfTask.get(taskId);
			const answer = await pollStatus(checksClient, taskId, item ?? 0, remainingMs);
			const known = item === undefined ? undefined : tasks.get(item);
			if ('task' in answer && known && item !== undefined) {
				tasks.set(item, mergeRecords(known, answer.task));
				progress.update();
			}
			return answer;
		},
	});
	/** The latest known state of every submitted task, by item. */
	const tasks = new Map<number, TaskRecord>();
	const progress = new VideoProgress(ctx, tasks, items.length);
	/** Items whose submit failed in a way that may have created a task anyway. */
	const unconfirmed: UnconfirmedSubmit[] = [];
	/** Items whose submit answered a task ID that was refused (never polled). */
	const refused: RefusedTask[] = [];
	/** Items never submitted because the run stopped first. */
	const notSubmitted: number[] = [];
	let firstFailure: { error: unknown; itemIndex: number } | undefined;
	const cancelled = () => client.cancelSignal?.aborted === true;
	const halted = () => firstFailure !== undefined || cancelled();

	const runItem = async ({ itemIndex, input }: { itemIndex: number; input: GenerateInput }): Promise<INodeExecutionData> => {
		const { task: submitted, submittedAt } =
			input.submit === undefined ? { task: resumedTask(input.resumeTaskId), submittedAt: clock.now() } : await submitItem(itemIndex, input.submit, input.maxWaitMs);
		const { model, ...record } = submitted;
		itemOfTask.set(record.task_id, itemIndex);
		tasks.set(itemIndex, record);
		progress.update();
		const outcome = await poller.watch(record, { ...input, submittedAt });
		tasks.set(itemIndex, outcome.record);
		progress.update();
		if (outcome.kind !== 'success') {
			logUnfinished(ctx, outcome, itemIndex, place, client.masker);
			throw outcomeError(outcome, itemIndex);
		}
		const extra = { model: model ?? input.submit?.fields.model ?? null };
		if (!input.binaryPropertyName) return videoItem(outcome.record, extra);
		// The download too ends within the task's Max Wait: what is left of it on the run's clock.
		const limit = itemDeadline(Math.max(1, waitEndOf({ deadline: submittedAt + input.maxWaitMs }) - clock.now()), MAX_WAIT_FIELD);
		const binary = await lanes.submits.run(async () => await downloadVideo(ctx, client, outcome.record, itemIndex, limit), DOWNLOAD_PRIORITY);
		return videoItem(outcome.record, extra, input.binaryPropertyName, binary);
	};

	const submitItem = async (itemIndex: number, submit: SubmitInput, maxWaitMs: number): Promise<{ task: SubmittedTask; submittedAt: number }> =>
		await lanes.submits.run(async () => {
			// Nothing more is paid for once the run is failing or cancelled.
			if (halted()) {
				notSubmitted.push(itemIndex);
				throw new GatewayError({ kind: 'cancelled', headline: `Item ${itemIndex} was not submitted: the run stopped before it`, itemIndex });
			}
			// Max Wait counts from here, the submit's 429 waits included.
			const submittedAt = clock.now();
			// The first frame is read and encoded now, and released with the body after the submit.
			const limit = itemDeadline(maxWaitMs, MAX_WAIT_FIELD);
			const body = await submitBody(ctx, client, itemIndex, submit, limit);
			// A submit's Retry-After holds that submit in its slot, not the lane, and does not cut the
			// pace (a bare 429 still does): holding every submit for 1-3 s and cutting the pace at each
			// refusal of a gateway that refuses one submit in seven more than halved the submit rate
			// (bench row 11e: 510 s for 1,000 videos).
			const task = await submitTask(ctx, client, body, itemIndex, limit, true).catch(async (error: unknown) => {
				const refusedId = refusedTaskIdOf(error);
				if (refusedId !== undefined) refused.push({ item: itemIndex, task_id: refusedId });
				else if (mayHaveCreatedTask(error)) unconfirmed.push({ item: itemIndex, words: unconfirmedSubmitWords(error) });
				return await Promise.reject(error);
			});
			return { task, submittedAt };
		}, SUBMIT_PRIORITY);

	// The run's scope ends with the items: no retry wait of this run can send anything afterwards.
	try {
		await Promise.all(
			items.map(async (entry) => {
				try {
					outputs.set(entry.itemIndex, [{ ...(await runItem(entry)), pairedItem: { item: entry.itemIndex } }]);
				} catch (error) {
					// A Stop is reported once, for the whole run, below.
					if (cancelled()) return;
					if (continueOnFail) {
						outputs.set(entry.itemIndex, [errorItem(node, error, entry.itemIndex, client.masker)]);
					} else if (!firstFailure) {
						firstFailure = { error, itemIndex: entry.itemIndex };
						poller.stop();
					}
				}
			}),
		);
		await poller.finished();
	} finally {
		client.close();
	}
	const listed = listTasks(tasks);

	if (cancelled()) {
		// n8n keeps nothing a node returns or throws after a Stop (see the README): the log keeps the
		// list, in the text of its lines, and the execution's custom data keeps what fits.
		progress.update();
		logTaskList(ctx, `Model Gateway: video run stopped while ${listed.length} task${listed.length === 1 ? '' : 's'} may still be running`, listed, place, client.masker, {
			unconfirmedItems: unconfirmed.map(({ item }) => item),
			refusedTasks: refused,
		});
		const paid = listed.length > 0 || unconfirmed.length > 0 || refused.length > 0;
		const error = new GatewayError({
			kind: 'cancelled',
			headline: listed.length
				? `The run was stopped while waiting for ${listed.length} video task${listed.length > 1 ? 's' : ''}`
				: 'The run was stopped before the gateway confirmed any video task',
			hint: paid
				? `The tasks may still be running on the gateway (and be charged). ${otherTasksText(listed, undefined, unconfirmed, [], refused)}`
				: 'No video task was created.',
			fields: { tasks: listed, unconfirmedItems: unconfirmed.map(({ item }) => item), refusedTasks: refused },
		});
		throw asNodeError(node, error, undefined, client.masker);
	}
	if (firstFailure) {
		const { error, itemIndex } = firstFailure;
		const others = otherTasksText(listed, itemIndex, unconfirmed, notSubmitted, refused);
		const extraFields = { tasks: listed, unconfirmedItems: unconfirmed.map(({ item }) => item), refusedTasks: refused, notSubmittedItems: notSubmitted.sort((a, b) => a - b) };
		if (listed.length) logTaskList(ctx, `Model Gateway: video run failed at item ${itemIndex}; its tasks`, listed, place, client.masker);
		if (error instanceof GatewayError) {
			const hint = others ? (error.hint ? `${error.hint} ${others}` : others) : error.hint;
			throw asNodeError(node, error.with({ hint, fields: { ...error.fields, ...extraFields } }), itemIndex, client.masker);
		}
		// Not ours (a bug): its words go through the edge, and the list is added, masked too.
		const nodeError = asNodeError(node, error, itemIndex, client.masker);
		if (others) nodeError.description = client.masker.mask(`${nodeError.description ?? ''} ${others}`.trim());
		nodeError.context = { ...(nodeError.context ?? {}), itemFields: client.masker.maskDeep({ ...((nodeError.context?.itemFields as IDataObject) ?? {}), ...extraFields }) };
		throw nodeError;
	}
}
