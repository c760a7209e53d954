/**
 * Reading and checking one item's parameters (before any request), and the submit body they
 * become. The checks and the body are pure functions, unit-tested; the readers only add the n8n
 * parameter access around them.
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { attachmentType, checkedFileToSend, fileToCheck } from '../shared/files/attachments';
import { imageDataUrlProblem } from '../shared/files/base64';
import { streamableId } from '../shared/files/binary';
import { formatSize } from '../shared/failures/errors';
import { Base64Text } from '../shared/wire/jsonBody';
import type { FileWaitLimit } from '../shared/wire/fileWait';
import type { GatewayClient, ItemLimit } from '../shared/wire/transport';
import { requestBody } from '../shared/items/body';
import { fieldError, readBinaryPropertyName, readExtraBody, readInteger, readModelId, readText, requireText } from '../shared/items/validate';
import { shortTaskId, taskIdProblem } from './task';
import type { WatchSettings } from './poller';

export const DEFAULT_VIDEO_MODEL = 'video-2-0-fast-260128';
/** The interface document (docs/gateway-interface.md) asks for 5 to 10 seconds between polls; faster is refused. */
export const MIN_POLL_INTERVAL_SECONDS = 5;
export const MAX_POLL_INTERVAL_SECONDS = 600;
export const DEFAULT_MAX_WAIT_SECONDS = 900;
export const MAX_WAIT_LIMIT_SECONDS = 86_400;
/** Status checks per second of one run: 200 videos are checked 10 a second, not 200 at once. */
export const DEFAULT_STATUS_CHECKS_PER_SECOND = 10;
export const MAX_STATUS_CHECKS_PER_SECOND = 1000;

export const VIDEO_PATH = '/v1/video/generations';

export function statusPath(taskId: string): string {
	return `${VIDEO_PATH}/${encodeURIComponent(taskId)}`;
}

export interface VideoFields {
	model: string;
	prompt: string;
	/** Whole seconds, already as the string of digits the gateway takes. */
	seconds: string;
	/** `<width>x<height>`. */
	size: string;
	/**
	 * A first frame: a link as given, or a Base64 data URL (a binary frame's bytes, written into the
	 * request as Base64 only when it is sent); undefined (not sent) when neither option is set.
	 */
	image?: string | Base64Text;
}

/** The submit body (2.3): extra fields first, so the node's own fields win. */
export function buildSubmitBody(fields: VideoFields, extraBody: IDataObject = {}): IDataObject {
	return requestBody(extraBody, { model: fields.model, prompt: fields.prompt, seconds: fields.seconds, size: fields.size, image: fields.image });
}

/** A first frame in the input item's binary data: at most this big (what image-to-video models commonly take). */
export const MAX_FIRST_FRAME_BYTES = 10 * 1024 * 1024;
const IMAGE_URL_FIELD = 'Image URL';
const IMAGE_BINARY_FIELD = 'Image From Binary Field';

/** Image URL: an http(s) link, or a data URL of an image, sent as given. */
export function checkImageUrl(link: string): boolean {
	if (/^data:image\/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=\s]+$/i.test(link)) return true;
	try {
		const url = new URL(link);
		return /^https?:$/.test(url.protocol) && url.hostname !== '' && !/\s/.test(link);
	} catch {
		return false;
	}
}

/**
 * Checks that the item has the binary field, before any request, without reading its bytes: a
 * frame is read only when its submit goes out (submitBody), so a run never holds every frame.
 */
function checkFrameField(ctx: IExecuteFunctions, itemIndex: number, property: string): void {
	const binary = ctx.getInputData()[itemIndex]?.binary ?? {};
	if (!binary[property]) {
		const has = Object.keys(binary);
		throw fieldError(
			ctx,
			itemIndex,
			IMAGE_BINARY_FIELD,
			`names the binary field "${property}", which this item does not have (${has.length ? `it has: ${has.join(', ')}` : 'it has no binary data at all'})`,
			'Use a name shown in the Binary tab of the input panel, e.g. data.',
		);
	}
	ctx.helpers.assertBinaryData(itemIndex, property);
	// The size n8n recorded for the file, where it did: a frame too big is refused before any request.
	const recorded = (binary[property] as { bytes?: unknown }).bytes;
	if (typeof recorded === 'number' && recorded > MAX_FIRST_FRAME_BYTES) throw frameTooBig(ctx, itemIndex, property, recorded);
}

function frameTooBig(ctx: IExecuteFunctions, itemIndex: number, property: string, size: number, over = false): Error {
	return fieldError(ctx, itemIndex, IMAGE_BINARY_FIELD, `field "${property}" is an image of ${over ? 'over ' : ''}${formatSize(size)}; at most ${formatSize(MAX_FIRST_FRAME_BYTES)}`, 'Make it smaller first (e.g. with the Edit Image node), or give it as a link in Image URL.');
}

/**
 * The binary image as `data:<type from its bytes>;base64,…`, checked when the item's submit goes
 * out (its type and size, still before this item's request), as every file the nodes send: a frame
 * n8n keeps outside the item (filesystem, database, S3 mode) is only typed from its first bytes here
 * (and counted, no further than past the limit, where n8n recorded no size), every wait on the store ending with the item,
 * then streamed into the request as it is sent, checked again as it is read; one in the item is read
 * whole.
 */
async function binaryImage(ctx: IExecuteFunctions, itemIndex: number, property: string, limit: FileWaitLimit): Promise<Base64Text> {
	const field = { itemIndex, parameter: IMAGE_BINARY_FIELD, property };
	const tooBig = (size: number, over?: boolean) => frameTooBig(ctx, itemIndex, property, size, over);
	const checked = await fileToCheck(ctx, field, limit, FRAME_HEAD_BYTES, MAX_FIRST_FRAME_BYTES, tooBig);
	if (checked.size > MAX_FIRST_FRAME_BYTES) throw tooBig(checked.size);
	const type = frameType(ctx, itemIndex, property, checked.bytes);
	// One in the item was read whole by the check, when its submit goes out: sent as read, not read twice.
	const inItem = streamableId(ctx, checked.binary) === undefined;
	const file = inItem ? checked.bytes : await checkedFileToSend(ctx, field, { size: checked.size, mimeType: type.mimeType }, (head) => attachmentType(head)?.mimeType);
	return Base64Text.dataUrl(file, type.mimeType);
}

/** Enough of a frame's start for its type. */
const FRAME_HEAD_BYTES = 64;

/** The frame's image type from its first bytes, or the item's error. */
function frameType(ctx: IExecuteFunctions, itemIndex: number, property: string, bytes: Buffer): { mimeType: string } {
	const type = attachmentType(bytes);
	if (type?.kind !== 'image') {
		const what = type ? type.mimeType : bytes.length === 0 ? 'an empty file' : 'no image';
		throw fieldError(ctx, itemIndex, IMAGE_BINARY_FIELD, `field "${property}" holds ${what}: the first frame must be a PNG, JPEG, GIF or WebP image`, 'The type is read from the file itself, not from its name.');
	}
	return type;
}

/** A first frame: a link sent as given, or the binary field read when the submit goes out. */
export type FirstFrame = { link: string } | { binaryProperty: string };

/**
 * Which first frame an item has, from Image URL or Image From Binary Field (both set is refused;
 * undefined for neither), checked before any request without reading a binary frame's bytes.
 */
export function planFirstFrame(ctx: IExecuteFunctions, itemIndex: number): FirstFrame | undefined {
	const link = readText(ctx, itemIndex, 'options.imageUrl', IMAGE_URL_FIELD);
	const property = readText(ctx, itemIndex, 'options.imageBinaryProperty', IMAGE_BINARY_FIELD);
	if (link !== '' && property !== '') {
		throw fieldError(ctx, itemIndex, IMAGE_URL_FIELD, `and "${IMAGE_BINARY_FIELD}" are both set; the video takes one first frame`, 'Remove one of the two options.');
	}
	if (link !== '') {
		if (!checkImageUrl(link)) {
			throw fieldError(ctx, itemIndex, IMAGE_URL_FIELD, `must be an http(s) link or a data URL of an image, not "${link.slice(0, 60)}"`, 'For example https://example.com/first-frame.png.');
		}
		const problem = imageDataUrlProblem(link);
		if (problem) throw fieldError(ctx, itemIndex, IMAGE_URL_FIELD, problem, `The type after "data:" must be the type of the bytes, e.g. data:image/jpeg;base64,… for a JPEG. Or give the image as a link, or put the file in a binary field and name it in "${IMAGE_BINARY_FIELD}".`);
		return { link };
	}
	if (property === '') return undefined;
	checkFrameField(ctx, itemIndex, property);
	return { binaryProperty: property };
}

/** The planned first frame as sent in `image`: the link, or the binary image as a data URL (read now, within `limit`). */
export async function readFirstFrame(ctx: IExecuteFunctions, itemIndex: number, frame: FirstFrame | undefined, limit: FileWaitLimit): Promise<string | Base64Text | undefined> {
	if (frame === undefined || 'link' in frame) return frame?.link;
	return await binaryImage(ctx, itemIndex, frame.binaryProperty, limit);
}

/** `1280x720` (also `1280 X 720`) -> `1280x720`; undefined when it is not a size. */
export function parseSize(raw: unknown): string | undefined {
	const match = /^(\d{1,5})\s*[xX×]\s*(\d{1,5})$/.exec(String(raw ?? '').trim());
	if (!match || Number(match[1]) < 1 || Number(match[2]) < 1) return undefined;
	return `${Number(match[1])}x${Number(match[2])}`;
}

export interface SubmitInput {
	fields: VideoFields;
	extraBody: IDataObject;
	/** The first frame, read by submitBody. */
	frame?: FirstFrame;
}

/**
 * The submit body of a checked item. A binary first frame is read and encoded here, when the
 * submit goes out, so a run holds as many frames as submits in flight (Concurrency), not one per
 * item; its reads of the binary store end with the submit's limit (or a Stop), as the submit does.
 */
export async function submitBody(ctx: IExecuteFunctions, client: GatewayClient, itemIndex: number, input: SubmitInput, limit: ItemLimit): Promise<IDataObject> {
	const frameLimit = { scope: client.fileWaits(limit.notAfter), name: limit.limitName };
	const image = await readFirstFrame(ctx, itemIndex, input.frame, frameLimit);
	return buildSubmitBody({ ...input.fields, image }, input.extraBody);
}

export async function readSubmitInput(ctx: IExecuteFunctions, itemIndex: number): Promise<SubmitInput> {
	const model = readModelId(ctx, itemIndex);
	const prompt = requireText(ctx, itemIndex, 'prompt', 'Prompt', 'Describe the video to generate.');
	const seconds = String(readInteger(ctx, itemIndex, ctx.getNodeParameter('seconds', itemIndex, ''), 'Seconds', { min: 1 }));
	const size = parseSize(ctx.getNodeParameter('size', itemIndex, ''));
	if (size === undefined) {
		throw fieldError(ctx, itemIndex, 'Size', 'must have the form <width>x<height>', 'For example 1280x720 (landscape) or 720x1280 (portrait).');
	}
	const extraBody = readExtraBody(ctx, itemIndex);
	return { fields: { model, prompt, seconds, size }, extraBody, frame: planFirstFrame(ctx, itemIndex) };
}

/** Poll interval and maximum wait; an interval below 5 s is refused rather than quietly raised. */
export function readWaitInput(ctx: IExecuteFunctions, itemIndex: number): WatchSettings {
	const interval = Number(ctx.getNodeParameter('options.pollIntervalSeconds', itemIndex, MIN_POLL_INTERVAL_SECONDS));
	if (!Number.isFinite(interval) || interval < MIN_POLL_INTERVAL_SECONDS || interval > MAX_POLL_INTERVAL_SECONDS) {
		throw fieldError(
			ctx,
			itemIndex,
			'Poll Interval (Seconds)',
			`must be from ${MIN_POLL_INTERVAL_SECONDS} to ${MAX_POLL_INTERVAL_SECONDS}, not ${String(interval)}`,
			'The gateway asks clients to poll every 5 to 10 seconds.',
		);
	}
	const maxWait = Number(ctx.getNodeParameter('options.maxWaitSeconds', itemIndex, DEFAULT_MAX_WAIT_SECONDS));
	if (!Number.isFinite(maxWait) || maxWait < interval || maxWait > MAX_WAIT_LIMIT_SECONDS) {
		throw fieldError(
			ctx,
			itemIndex,
			'Max Wait (Seconds)',
			`must be from the poll interval (${interval}) to ${MAX_WAIT_LIMIT_SECONDS}, not ${String(maxWait)}`,
		);
	}
	return { intervalMs: Math.round(interval * 1000), maxWaitMs: Math.round(maxWait * 1000) };
}

/**
 * Generate's `options.resumeTaskId`: the task an earlier run already submitted for this item
 * (e.g. `{{ $json.task_id }}` from the failed run's output). Set, the item is waited on and
 * downloaded instead of submitted; empty, it is submitted as usual.
 */
export function readResumeTaskId(ctx: IExecuteFunctions, itemIndex: number): string | undefined {
	const taskId = readText(ctx, itemIndex, 'options.resumeTaskId', 'Resume Task ID');
	return taskId === '' ? undefined : checkedTaskId(ctx, itemIndex, taskId, 'Resume Task ID');
}

/** `options.statusChecksPerSecond`, the run's budget (read from the first item: it is the run's, not an item's). */
export function readStatusBudget(ctx: IExecuteFunctions): number {
	const value = Number(ctx.getNodeParameter('options.statusChecksPerSecond', 0, DEFAULT_STATUS_CHECKS_PER_SECOND));
	if (!Number.isFinite(value) || value <= 0 || value > MAX_STATUS_CHECKS_PER_SECOND) {
		throw fieldError(ctx, 0, 'Status Checks per Second', `must be a number above 0 and at most ${MAX_STATUS_CHECKS_PER_SECOND}, not ${String(value)}`);
	}
	return value;
}

/** Where the video goes: its binary field, or undefined to leave it as a link (Download Video off). */
export function readOutputInput(ctx: IExecuteFunctions, itemIndex: number): { binaryPropertyName?: string } {
	const download = ctx.getNodeParameter('options.downloadVideo', itemIndex, true) !== false;
	return { binaryPropertyName: download ? readBinaryPropertyName(ctx, itemIndex) : undefined };
}

export function readTaskId(ctx: IExecuteFunctions, itemIndex: number): string {
	return checkedTaskId(ctx, itemIndex, requireText(ctx, itemIndex, 'taskId', 'Task ID', TASK_ID_HINT), 'Task ID');
}

const TASK_ID_HINT = 'Use the task_id that the Submit operation returned, e.g. {{ $json.task_id }}.';

/** A task id goes into the status path as one segment: one that cannot is refused before any request. */
function checkedTaskId(ctx: IExecuteFunctions, itemIndex: number, taskId: string, field: string): string {
	const problem = taskIdProblem(taskId);
	if (problem) throw fieldError(ctx, itemIndex, field, `${problem} ("${shortTaskId(taskId)}")`, TASK_ID_HINT);
	return taskId;
}
