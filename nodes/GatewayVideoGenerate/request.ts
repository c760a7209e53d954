/**
 * Reading and checking one item's parameters (before any request), and the submit body they
 * become. The checks and the body are pure functions, unit-tested; the readers only add the n8n
 * parameter access around them.
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { requestBody } from '../shared/body';
import { fieldError, readBinaryPropertyName, readExtraBody, readInteger, readModelId, requireText } from '../shared/validate';

export const DEFAULT_VIDEO_MODEL = 'video-2-0-fast-260128';
/** The interface document (docs/gateway-interface.md) asks for 5 to 10 seconds between polls; faster is refused. */
export const MIN_POLL_INTERVAL_SECONDS = 5;
export const MAX_POLL_INTERVAL_SECONDS = 600;
export const DEFAULT_MAX_WAIT_SECONDS = 900;
export const MAX_WAIT_LIMIT_SECONDS = 86_400;

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
}

/** The submit body (2.3): extra fields first, so the node's own fields win. */
export function buildSubmitBody(fields: VideoFields, extraBody: IDataObject = {}): IDataObject {
	return requestBody(extraBody, { model: fields.model, prompt: fields.prompt, seconds: fields.seconds, size: fields.size });
}

/** `1280x720` (also `1280 X 720`) -> `1280x720`; undefined when it is not a size. */
export function parseSize(raw: unknown): string | undefined {
	const match = /^(\d{1,5})\s*[xX×]\s*(\d{1,5})$/.exec(String(raw ?? '').trim());
	if (!match || Number(match[1]) < 1 || Number(match[2]) < 1) return undefined;
	return `${Number(match[1])}x${Number(match[2])}`;
}

export interface SubmitInput {
	fields: VideoFields;
	body: IDataObject;
}

export function readSubmitInput(ctx: IExecuteFunctions, itemIndex: number): SubmitInput {
	const model = readModelId(ctx, itemIndex);
	const prompt = requireText(ctx, itemIndex, 'prompt', 'Prompt', 'Describe the video to generate.');
	const seconds = String(readInteger(ctx, itemIndex, ctx.getNodeParameter('seconds', itemIndex, ''), 'Seconds', { min: 1 }));
	const size = parseSize(ctx.getNodeParameter('size', itemIndex, ''));
	if (size === undefined) {
		throw fieldError(ctx, itemIndex, 'Size', 'must have the form <width>x<height>', 'For example 1280x720 (landscape) or 720x1280 (portrait).');
	}
	const fields: VideoFields = { model, prompt, seconds, size };
	return { fields, body: buildSubmitBody(fields, readExtraBody(ctx, itemIndex)) };
}

export interface WaitInput {
	intervalMs: number;
	maxWaitMs: number;
}

/** Poll interval and maximum wait; an interval below 5 s is refused rather than quietly raised. */
export function readWaitInput(ctx: IExecuteFunctions, itemIndex: number): WaitInput {
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

export interface OutputInput {
	/** undefined: leave the video as a link (Download Video off). */
	binaryPropertyName?: string;
}

export function readOutputInput(ctx: IExecuteFunctions, itemIndex: number): OutputInput {
	const download = ctx.getNodeParameter('options.downloadVideo', itemIndex, true) !== false;
	return { binaryPropertyName: download ? readBinaryPropertyName(ctx, itemIndex) : undefined };
}

export function readTaskId(ctx: IExecuteFunctions, itemIndex: number): string {
	return requireText(ctx, itemIndex, 'taskId', 'Task ID', 'Use the task_id that the Submit operation returned, e.g. {{ $json.task_id }}.');
}
