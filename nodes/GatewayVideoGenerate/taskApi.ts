/**
 * The three calls of the video API (submit, status, download) through the shared transport, and
 * the errors about a task. Everything here fails with a GatewayError (no n8n error is built here:
 * the edge does that, masked), and every error raised after a task exists carries its task id in
 * its headline and its fields, so a paid task is never lost.
 */
import type { IBinaryData, IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { downloadToBinary } from '../shared/files/binary';
import { GatewayError, missingResultError } from '../shared/failures/errors';
import { itemDeadline } from '../shared/wire/transport';
import type { GatewayClient, ItemLimit } from '../shared/wire/transport';
import { isPassingPollFailure } from './poller';
import type { PollAnswer, TaskOutcome } from './poller';
import { VIDEO_PATH, statusPath } from './request';
import { FAILURE_STATES, checkingWhat, readStatusAnswer, readSubmitAnswer, shortTaskId, statusWithProgress, taskFields, taskIdProblem } from './task';
import type { SubmittedTask, TaskRecord } from './task';

/** A submit that has not answered within this time is given up (it may still create the task). */
export const SUBMIT_DEADLINE_MS = 120_000;
/** The submit's own limit, as its messages name it. */
export const SUBMIT_LIMIT_NAME = `the submit's limit of ${SUBMIT_DEADLINE_MS / 1000} s`;
/** The limit every request of a Generate task keeps, as messages name it. */
export const MAX_WAIT_FIELD = 'Max Wait (Seconds)';
/** A status answer is small: a poll that takes longer counts as a failed poll. */
export const STATUS_DEADLINE_MS = 30_000;
/** The whole download, to the last byte (a large video over a slow link needs minutes). */
export const DOWNLOAD_DEADLINE_MS = 15 * 60_000;

export const MAY_HAVE_CREATED_HINT =
	'The gateway may have created the task: it was not submitted again, so as not to pay twice. Check the gateway console before running this item again.';

function fetchLater(taskId: string): string {
	return `Nothing is lost: fetch the video later with the Get Status or Download operation and task ID ${shortTaskId(taskId)}.`;
}

/** Who ran the request, for log lines: n8n's default log format prints only the message. */
export interface LogPlace {
	executionId?: string;
	node: string;
}

/** Where a run's log lines belong: its execution (a context in tests and tools has none) and its node. */
export function placeOf(ctx: IExecuteFunctions): LogPlace {
	const node = ctx.getNode().name;
	try {
		return { executionId: typeof ctx.getExecutionId === 'function' ? ctx.getExecutionId() : undefined, node };
	} catch {
		return { executionId: undefined, node };
	}
}

/** `(item 3, execution 1234, node "Make Videos")`: where a log line's task belongs, in its text. */
export function placeText(itemIndex: number | undefined, place: LogPlace): string {
	const parts = [itemIndex === undefined ? undefined : `item ${itemIndex}`, place.executionId ? `execution ${place.executionId}` : undefined, `node "${place.node}"`];
	return `(${parts.filter(Boolean).join(', ')})`;
}

/** A log line about video tasks, masked: their ids in its text, as n8n's default log format prints only the message. */
export function logVideo(ctx: IExecuteFunctions, level: 'info' | 'warn', masker: GatewayClient['masker'], text: string, metadata: IDataObject): void {
	const logger = (ctx as Partial<IExecuteFunctions>).logger;
	if (typeof logger?.[level] === 'function') logger[level](masker.mask(`Model Gateway: ${text}`), masker.maskDeep(metadata));
}

/**
 * Submits one task. A submit starts paid work, so the transport repeats it only when the gateway
 * certainly refused it (429, a refused connection); after a failure that leaves it open (5xx,
 * dropped connection, deadline, Stop) the task may exist, and the error says so instead of paying
 * twice. An answer without a task id quotes what the gateway sent. `limit`: the item's (Generate:
 * the task's Max Wait), else the submit's own. `waitAlone`: a Retry-After holds only this submit,
 * in its own slot (Generate's submit lane, whose pace a 429 still cuts).
 */
export async function submitTask(ctx: IExecuteFunctions, client: GatewayClient, body: IDataObject, itemIndex: number, limit?: ItemLimit, waitAlone = false): Promise<SubmittedTask> {
	const what = 'Submitting the video task';
	// A task that may exist is said so once, where the failure is classified (ifActed).
	const answer = await client.json({ path: VIDEO_PATH, body, itemIndex, deadlineMs: SUBMIT_DEADLINE_MS, ...limit, retry: { idempotent: false }, ifActed: MAY_HAVE_CREATED_HINT, retryAfterHoldsCallOnly: waitAlone, what });
	const task = readSubmitAnswer(answer);
	if (!task) {
		// It answered 200: whatever it did, it may have started the task.
		throw missingResultError(what, 'task id', answer, { itemIndex, status: 200, mayHaveActed: true, hint: `The gateway's answer is quoted above. ${MAY_HAVE_CREATED_HINT}` });
	}
	// Logged at once (info), before its id is checked: n8n's log then names a paid task even when the run
	// is stopped, crashes or times out before its output is saved, or when its id cannot be polled.
	const place = placeOf(ctx);
	logVideo(ctx, 'info', client.masker, `video task created: ${task.task_id} ${placeText(itemIndex, place)}`, { taskId: task.task_id, itemIndex, ...place });
	const problem = taskIdProblem(task.task_id);
	if (problem) {
		// Polled as it is, it would name another path (`..` is the folder above): never followed.
		throw new GatewayError({
			kind: 'protocol',
			headline: `${what} failed: the gateway answered a task ID that ${problem}: "${shortTaskId(task.task_id)}"`,
			status: 200,
			mayHaveActed: true,
			hint: `It was not polled, so as not to fetch another task's video. ${MAY_HAVE_CREATED_HINT}`,
			fields: { task_id: task.task_id },
			itemIndex,
		});
	}
	return task;
}

/**
 * The task record of a status answer. `ending`: the wait ends here, so its errors say the task may
 * still run (said once, by whoever ends the wait: a check of the wait loop leaves it out).
 */
function recordOf(answer: IDataObject, taskId: string, itemIndex: number, baseUrl: string, ending: boolean): TaskRecord {
	const task = readStatusAnswer(answer, taskId, baseUrl);
	const then = ending ? ` The task ${shortTaskId(taskId)} may still be running: ${fetchLater(taskId)}` : '';
	if (task?.answeredFor !== undefined) throw foreignTaskError(taskId, task.answeredFor, itemIndex, then);
	if (task) return task;
	throw missingResultError(checkingWhat(taskId), 'task record', answer, {
		itemIndex,
		status: 200,
		fields: { task_id: taskId },
		hint: `The gateway's answer is quoted above.${then}`,
	});
}

/**
 * A status answer about another task than the one asked for: never followed (its status, its
 * link and its id belong to someone else's video), so the wait of this task ends with both ids.
 */
function foreignTaskError(taskId: string, answeredFor: string, itemIndex: number, then: string): GatewayError {
	return new GatewayError({
		kind: 'protocol',
		headline: `${checkingWhat(taskId)} failed: the gateway answered about another task, ${shortTaskId(answeredFor)}`,
		status: 200,
		mayHaveActed: false,
		hint: `The answer was not used: its status and video belong to the other task. If this repeats, the gateway mixes up tasks: tell its operator.${then}`,
		fields: { task_id: taskId, answered_task_id: answeredFor },
		itemIndex,
	});
}

/** The status request of a task: its words name the task, its errors carry its id. */
function statusCall(taskId: string, itemIndex: number) {
	return { path: statusPath(taskId), itemIndex, deadlineMs: STATUS_DEADLINE_MS, what: checkingWhat(taskId), errorFields: { task_id: taskId } };
}

/** Whether a failure is the gateway saying it does not know the task (then it is not "still running"). */
export function isUnknownTask(error: unknown): error is GatewayError {
	return error instanceof GatewayError && error.kind === 'not_found';
}

/** A status request's failure in a task's words: an item not found (404, new-api's 400 task_not_exist) is an unknown task id. */
function statusFailure(error: unknown, taskId: string): unknown {
	if (!isUnknownTask(error)) return error;
	return error.with({
		headline: `${checkingWhat(taskId)} failed: the gateway does not know this task ID`,
		hint: 'The gateway knows no such task for this key. Check the task ID (the task_id that Submit or Generate returned), and that the credential is the one that submitted it: the same API key, and the Base URL of the gateway that created it.',
	});
}

/** A status request as the user's own call (Get Status, Download): with the transport's retries. */
export async function fetchStatus(client: GatewayClient, taskId: string, itemIndex: number): Promise<TaskRecord> {
	const answer = await client.json(statusCall(taskId, itemIndex)).catch(async (error: unknown) => await Promise.reject(statusFailure(error, taskId)));
	return recordOf(answer, taskId, itemIndex, client.baseUrl, true);
}

/**
 * A check of the wait loop: one attempt, sent at once (its turn and pace are the check queue's,
 * checkSchedule.ts), bounded by what is left of the task's wait (so an answer that drips forever
 * ends with Max Wait), and whether its failure is a passing one.
 */
export async function pollStatus(client: GatewayClient, taskId: string, itemIndex: number, remainingMs: number): Promise<PollAnswer> {
	let answer: IDataObject;
	try {
		answer = await client.json({ ...statusCall(taskId, itemIndex), retry: false, ...itemDeadline(Math.max(1, remainingMs), MAX_WAIT_FIELD) });
	} catch (error) {
		return { error: statusFailure(error, taskId) as Error, passing: isPassingPollFailure(error) };
	}
	try {
		return { task: recordOf(answer, taskId, itemIndex, client.baseUrl, false) };
	} catch (error) {
		// An answer without the task will not change by asking again.
		return { error: error as Error, passing: false };
	}
}

/** A task that ended without a video: FAILURE, or CANCELLED, EXPIRED, ERROR, … */
export function taskFailedError(record: TaskRecord, itemIndex: number): GatewayError {
	const id = shortTaskId(record.task_id);
	const plainFailure = record.status === 'FAILURE' || record.status === 'FAILED' || !FAILURE_STATES.has(record.status);
	return new GatewayError({
		kind: 'task_failed',
		headline: plainFailure
			? `Video task ${id} failed${record.fail_reason ? '' : ' without a reason from the gateway'}`
			: `Video task ${id} ended with status ${record.status}${record.fail_reason ? '' : ' and no reason from the gateway'}`,
		gatewayMessage: record.fail_reason,
		hint: plainFailure
			? 'The charge for a failed task is usually refunded automatically. Check the prompt and the settings, then generate again.'
			: `The gateway ended the task without a video (${record.status}). Check the gateway console, then generate again.`,
		fields: taskFields(record),
		itemIndex,
	});
}

/** Download of a task that is not done yet. */
export function notFinishedError(record: TaskRecord, itemIndex: number): GatewayError {
	return new GatewayError({
		kind: 'bad_request',
		headline: `Video task ${shortTaskId(record.task_id)} is not finished yet (status ${statusWithProgress(record)})`,
		hint: 'Try again later, or use the Generate operation, which waits for the task.',
		fields: taskFields(record),
		itemIndex,
	});
}

/** What went wrong with a task's last check, without repeating "Checking video task … failed". */
export function lastCheckWords(error: Error, taskId: string): string {
	const headline = error instanceof GatewayError ? error.headline : error.message;
	const own = `${checkingWhat(taskId)} failed: `;
	return headline.startsWith(own) ? headline.slice(own.length) : headline;
}

/** Why a wait that ended at Max Wait did not see its task done, when its last check failed: how many in a row, and the last one's words. */
export function lastChecksWords(lastCheckError: Error, taskId: string, failedPolls = 1): string {
	const words = lastCheckWords(lastCheckError, taskId);
	return failedPolls > 1 ? `${failedPolls} checks in a row failed (the last: ${words})` : `its last check failed (${words})`;
}

/** The error of every outcome of the wait but success. */
export function outcomeError(outcome: Exclude<TaskOutcome, { kind: 'success' }>, itemIndex: number): GatewayError {
	const { record } = outcome;
	const id = shortTaskId(record.task_id);
	const fields = taskFields(record);
	switch (outcome.kind) {
		case 'failure':
			return taskFailedError(record, itemIndex);
		case 'timeout':
			return new GatewayError({
				kind: 'timeout',
				headline: outcome.lastCheckError
					? `Video task ${id} was not seen done within Max Wait (${Math.round(outcome.waitedMs / 1000)} s): ${lastChecksWords(outcome.lastCheckError, record.task_id, outcome.failedPolls)}; last status ${statusWithProgress(record)}, so the node stopped waiting`
					: `Video task ${id} is still running after ${Math.round(outcome.waitedMs / 1000)} s (last status ${statusWithProgress(record)}), so the node stopped waiting`,
				// Checks that kept failing: a longer wait would not have seen it either.
				hint: `${fetchLater(record.task_id)} ${
					(outcome.failedPolls ?? 0) > 1
						? "Its checks kept failing, so a longer Max Wait may not help: if that goes on, ask the gateway's operator about this task."
						: "Or raise Max Wait (Seconds) in the options (it counts from the task's submit)."
				}`,
				fields,
				itemIndex,
			});
		case 'unreachable': {
			// A gateway that does not know the task: it is not "still running", and fetching it later would fail again.
			const hint = isUnknownTask(outcome.error) ? '' : `The task may still be running (last status ${statusWithProgress(record)}). ${fetchLater(record.task_id)}`;
			const checking = `${checkingWhat(record.task_id)} failed${outcome.failedPolls > 1 ? ` ${outcome.failedPolls} times in a row` : ''}`;
			const error = outcome.error instanceof GatewayError ? outcome.error : new GatewayError({ kind: 'protocol', headline: checking, gatewayMessage: outcome.error?.message });
			const headline = error.headline === checking ? checking : `${checking}: ${lastCheckWords(error, record.task_id)}`;
			return error.with({ headline, hint: [error.hint, hint].filter(Boolean).join(' '), fields: { ...error.fields, ...fields }, itemIndex: error.itemIndex ?? itemIndex });
		}
		default: {
			const cancelled = outcome.kind === 'cancelled';
			return new GatewayError({
				kind: 'cancelled',
				headline: `${cancelled ? `The wait for video task ${id} was cancelled` : `Stopped waiting for video task ${id} because another item failed`} (last status ${statusWithProgress(record)})`,
				hint: `${cancelled ? 'The task may still be running on the gateway. ' : ''}${fetchLater(record.task_id)}`,
				fields,
				itemIndex,
			});
		}
	}
}

/**
 * Streams the finished task's video into binary data (binary.ts refuses what is not a video and
 * names n8n's storage limits). The transport sends the key only to a link on the gateway's own
 * origin, and says a link that answers 403, 404 or 410 has expired, with the way to a fresh one.
 * `limit`: Generate's, the task's Max Wait (the whole task is one limit).
 */
export async function downloadVideo(ctx: IExecuteFunctions, client: GatewayClient, record: TaskRecord, itemIndex: number, limit?: ItemLimit): Promise<IBinaryData> {
	const id = shortTaskId(record.task_id);
	const fields = taskFields(record);
	const again = `Run the Download operation with task ID ${id} to try again: it asks the gateway for a fresh link.`;
	if (!record.result_url) {
		// A result_url that is no link (text, another scheme) is quoted with the record, never fetched.
		throw missingResultError(`Video task ${id} finished, but downloading it`, 'result_url that is a link', record, { fields, itemIndex, hint: `The gateway reported SUCCESS without a link. ${again}` });
	}
	return await downloadToBinary(ctx, client, {
		link: record.result_url,
		what: `Downloading the video of task ${id}`,
		expected: 'a video',
		mediaPrefix: 'video/',
		baseName: `video-${record.task_id}`,
		itemIndex,
		deadlineMs: DOWNLOAD_DEADLINE_MS,
		...limit,
		errorFields: fields,
		nextStep: again,
		downloadOption: 'Download Video',
	});
}

/** The output item of a finished task: its fields, and the video when one was downloaded. */
export function videoItem(record: TaskRecord, extra: IDataObject, binaryPropertyName?: string, binary?: IBinaryData): INodeExecutionData {
	const item: INodeExecutionData = { json: { ...taskFields(record), ...extra } };
	if (binaryPropertyName && binary) item.binary = { [binaryPropertyName]: binary };
	return item;
}
