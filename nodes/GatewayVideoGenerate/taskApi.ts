/**
 * The three calls of the video API (submit, status, download) through the shared transport, and
 * the errors that carry the task id: every error raised after a task exists names it and puts
 * it on the error item, so a paid task is never lost.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { IBinaryData, IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { isPageContentType, streamToBinary } from '../shared/binary';
import type { FileType } from '../shared/binary';
import { attachItemFields } from '../shared/errors';
import { asNodeError } from '../shared/itemRunner';
import type { ByteStream, GatewayClient } from '../shared/transport';
import { describeOutcome, isPassingPollFailure, readStatusAnswer, readSubmitAnswer, taskFields } from './pollDecision';
import type { PollAnswer, TaskOutcome, TaskRecord } from './pollDecision';
import { VIDEO_PATH, statusPath } from './request';

const SUBMIT_TIMEOUT_MS = 120_000;
/** A status answer is small; a poll that hangs longer than this counts as a failed poll. */
const STATUS_TIMEOUT_MS = 30_000;
const DOWNLOAD_TIMEOUT_MS = 300_000;
const MP4 = { mimeType: 'video/mp4', extension: 'mp4' };

/** An error about a task, carrying the task's fields onto the Continue On Fail item. */
export function taskError(ctx: IExecuteFunctions, record: TaskRecord, itemIndex: number, message: string, description?: string): NodeOperationError {
	return attachItemFields(new NodeOperationError(ctx.getNode(), message, { itemIndex, description }), taskFields(record));
}

export function outcomeError(ctx: IExecuteFunctions, outcome: Exclude<TaskOutcome, { kind: 'success' }>, itemIndex: number): NodeOperationError {
	const words = describeOutcome(outcome);
	return taskError(ctx, outcome.record, itemIndex, words.message, words.description);
}

/**
 * Submits one task. A submit starts paid work, so the transport repeats it only when the gateway
 * certainly refused it (429); after an answer that leaves it open (5xx, dropped connection) the
 * task may exist, and the error says so instead of paying twice.
 */
export async function submitTask(client: GatewayClient, body: IDataObject, itemIndex: number): Promise<TaskRecord & { model?: string }> {
	let answer: IDataObject;
	try {
		answer = await client.json({ path: VIDEO_PATH, body, itemIndex, timeoutMs: SUBMIT_TIMEOUT_MS, retry: { idempotent: false }, what: 'Submitting the video task' });
	} catch (error) {
		const failure = asNodeError(client.node, error, itemIndex);
		if (mayHaveBeenCreated(failure) && !client.cancelSignal?.aborted) {
			failure.description = `${failure.description ?? ''} The gateway may have created the task even so; it was not submitted again, so as not to pay twice. Check the gateway console before running this item again.`.trim();
		}
		throw failure;
	}
	const { task, problem } = readSubmitAnswer(answer);
	if (!task) throw new NodeOperationError(client.node, `Submitting the video task failed: ${problem}`, { itemIndex });
	return task;
}

/** A server error or a connection lost after sending: the gateway may have acted on the request. */
function mayHaveBeenCreated(error: unknown): boolean {
	const status = statusOf(error);
	if (status !== undefined) return status >= 500 && (error as { errorResponse?: { kind?: unknown } }).errorResponse?.kind !== 'unknown_model';
	return !/refused|could not be resolved/.test((error as Error).message ?? '');
}

function statusOf(error: unknown): number | undefined {
	const code = Number((error as { httpCode?: unknown })?.httpCode);
	return Number.isFinite(code) && code > 0 ? code : undefined;
}

/**
 * One status request. `retry: false` is the wait loop's form: it counts failed polls itself
 * and tries again at the next tick, instead of stacking the transport's retries on top.
 */
async function requestStatus(client: GatewayClient, taskId: string, itemIndex: number, retry: boolean): Promise<{ task?: TaskRecord; problem?: string }> {
	const answer = await client.json({
		path: statusPath(taskId),
		itemIndex,
		retry: retry ? undefined : false,
		timeoutMs: STATUS_TIMEOUT_MS,
		what: `Checking video task ${taskId}`,
		errorFields: { task_id: taskId },
	});
	return readStatusAnswer(answer, taskId);
}

function unreadableStatus(client: GatewayClient, taskId: string, itemIndex: number, problem?: string): NodeOperationError {
	return attachItemFields(new NodeOperationError(client.node, `Checking video task ${taskId} failed: ${problem}`, { itemIndex }), { task_id: taskId });
}

/** A status request as the user's own call (Get Status, Download): with the transport's retries. */
export async function fetchStatus(client: GatewayClient, taskId: string, itemIndex: number): Promise<TaskRecord> {
	let answer: { task?: TaskRecord; problem?: string };
	try {
		answer = await requestStatus(client, taskId, itemIndex, true);
	} catch (error) {
		const failure = asNodeError(client.node, error, itemIndex);
		if (!failure.message.includes(taskId)) failure.message = `Checking video task ${taskId} failed: ${failure.message}`;
		if (statusOf(failure) === 404) failure.description = 'The gateway does not know this task ID. Check it: it is the task_id that Submit or Generate returned.';
		throw failure;
	}
	if (!answer.task) throw unreadableStatus(client, taskId, itemIndex, answer.problem);
	return answer.task;
}

/** A poll of the wait loop: one attempt, and whether its failure is a passing one. */
export async function pollStatus(client: GatewayClient, taskId: string, itemIndex: number): Promise<PollAnswer> {
	try {
		const { task, problem } = await requestStatus(client, taskId, itemIndex, false);
		// An answer that reports an error instead of the task will not change by asking again.
		return task ? { task } : { error: unreadableStatus(client, taskId, itemIndex, problem), passing: false };
	} catch (error) {
		return { error: error as Error, passing: isPassingPollFailure(statusOf(error)) };
	}
}

/** What the file host said: an object store's `<Message>Request has expired</Message>`, or its text. */
function quotedReason(error: Error): string {
	const said = (error as { errorResponse?: { gatewayMessage?: unknown } }).errorResponse?.gatewayMessage;
	const text = typeof said === 'string' ? said : '';
	const reason = /<Message>([^<]{1,200})<\/Message>/.exec(text)?.[1] ?? (text.startsWith('<') ? '' : text.slice(0, 120));
	return reason ? `: "${reason}"` : '';
}

/**
 * Streams the finished task's MP4 into binary data. The transport sends the key only to a link
 * on the gateway's own origin. A link that answers 403, 404 or 410 has expired.
 */
export async function downloadVideo(ctx: IExecuteFunctions, client: GatewayClient, record: TaskRecord, itemIndex: number): Promise<IBinaryData> {
	const id = record.task_id;
	if (!record.result_url) {
		throw taskError(ctx, record, itemIndex, `Video task ${id} finished but the gateway gave no result_url to download`);
	}
	const what = `Downloading the video of task ${id}`;
	let stream: ByteStream;
	let contentType: unknown;
	try {
		const response = await client.download(record.result_url, { itemIndex, timeoutMs: DOWNLOAD_TIMEOUT_MS, what });
		stream = response.body;
		contentType = response.headers['content-type'];
	} catch (error) {
		const status = statusOf(error);
		if (status === 403 || status === 404 || status === 410) {
			throw taskError(
				ctx,
				record,
				itemIndex,
				`The video link of task ${id} has expired or is no longer available (HTTP ${status}${quotedReason(error as Error)})`,
				`Links to generated videos are temporary. Run the Download operation with task ID ${id} soon: it asks the gateway for the current link. If the link stays expired, generate the video again.`,
			);
		}
		const failure = error as Error;
		if (!failure.message.includes(id)) failure.message = `${what} failed: ${failure.message}`;
		throw attachItemFields(failure, taskFields(record));
	}
	let refused: NodeOperationError | undefined;
	const refusePages = (sniffed: FileType | undefined) => {
		if (sniffed || !isPageContentType(contentType)) return;
		refused = taskError(
			ctx,
			record,
			itemIndex,
			`${what} failed: the link answered with ${String(contentType).split(';')[0]} instead of a video`,
			'The file host sent a page (often an error or login page) instead of the MP4. Check result_url in the output.',
		);
		throw refused;
	};
	try {
		return await streamToBinary(ctx, stream, { baseName: `video-${id}`, fallback: MP4 }, refusePages);
	} catch (error) {
		stream.destroy();
		if (refused) throw refused;
		throw taskError(
			ctx,
			record,
			itemIndex,
			`${what} failed: the connection broke while the video was being received (${client.scrub((error as Error).message ?? String(error))})`,
			`Run the Download operation with task ID ${id} to try again.`,
		);
	}
}

/** The output item of a finished task: its fields, and the video when one was downloaded. */
export function videoItem(record: TaskRecord, extra: IDataObject, binaryPropertyName?: string, binary?: IBinaryData): INodeExecutionData {
	const item: INodeExecutionData = { json: { ...taskFields(record), ...extra } };
	if (binaryPropertyName && binary) item.binary = { [binaryPropertyName]: binary };
	return item;
}
