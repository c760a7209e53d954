'use strict';
// Asynchronous video generation: submit a task, poll it, download the result. The task moves
// one step per status poll (not per second) so tests are deterministic and fast. The new-api
// mode (chosen when the task is submitted) reports new-api's own states and task record.
const { sendJson } = require('./http');
const { GatewayError, invalidRequest } = require('./errors');
const { requireModel } = require('./models');
const { has, bigMegabytes, rateLimitOnce } = require('./magic');
const { parseFault, serveFault } = require('./faults');
const { deliverVideo } = require('./files');
const { randomHex, unixNow } = require('./util');
const { videoImage } = require('./attachments');
const { isNewApi, charge, videoQuota, refund } = require('./newapi');

const FAIL_REASON = 'content policy violation: the prompt was rejected by the safety system';
const UNKNOWN_POLLS = 2; // `[unknown]`: polls answering UNKNOWN, then as many answering SUBMITTED
// `[flaky]`: which status requests (1-based, counting failed ones) fail, and how.
const FLAKY_PLAN = { 1: parseFault('502-html'), 3: parseFault('429'), 5: parseFault('reset') };

function readFlags(prompt) {
	return {
		fail: has(prompt, 'fail'),
		never: has(prompt, 'never'),
		unknown: has(prompt, 'unknown'),
		flaky: has(prompt, 'flaky'),
		sameOrigin: has(prompt, 'same-origin'),
		expired: has(prompt, 'expired'),
		bigMb: bigMegabytes(prompt),
	};
}

// new-api's own check of a video submit's prompt (relay/common/relay_utils.go validatePrompt).
const NEWAPI_NO_PROMPT = { layer: 'relay', status: 400, code: 'invalid_request', message: 'prompt is required' };

function validateSubmit(ctx, body) {
	const model = requireModel(ctx, body.model, 'video');
	if (typeof body.prompt !== 'string' || body.prompt.trim() === '') {
		throw invalidRequest(ctx, 'prompt is required and must be a non-empty string', { param: 'prompt', newApi: NEWAPI_NO_PROMPT });
	}
	if (body.seconds !== undefined) {
		// The document shows no allowed values: any whole number of seconds from 1, as a string.
		if (typeof body.seconds !== 'string' || !/^\d{1,4}$/.test(body.seconds) || Number(body.seconds) < 1) {
			throw invalidRequest(ctx, 'seconds must be a string of digits, at least "1", e.g. "5"', {
				param: 'seconds',
				code: 'invalid_value',
			});
		}
	}
	if (body.size !== undefined) {
		const m = typeof body.size === 'string' ? /^(\d{1,5})x(\d{1,5})$/.exec(body.size) : null;
		if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) {
			throw invalidRequest(ctx, 'size must have the form <width>x<height>, e.g. "1280x720"', {
				param: 'size',
				code: 'invalid_value',
			});
		}
	}
	return model;
}

async function submit(ctx) {
	const body = ctx.json();
	const model = validateSubmit(ctx, body);
	// A first frame (image-to-video): a link, or a data URL whose bytes must match its type.
	const image = videoImage(ctx, body.image);
	if (rateLimitOnce(ctx, body.prompt)) return;
	const quota = charge(ctx, videoQuota(ctx, model.id, body.seconds));
	const task = {
		id: `task_${randomHex(16)}`,
		seq: ++ctx.gw.taskCount,
		newApi: isNewApi(ctx.gw),
		key: ctx.key,
		quota,
		action: image ? 'generate' : 'textGenerate',
		model: model.id,
		flags: readFlags(body.prompt),
		pollsToFinish: Math.max(1, ctx.gw.options.videoPollsToFinish),
		polls: 0, // answered status polls: what moves the task on
		requests: 0, // status requests including the ones `[flaky]` fails
		status: 'NOT_START',
		progress: 0,
		submitTime: unixNow(),
		startTime: 0,
		finishTime: 0,
		updatedAt: 0,
		image,
	};
	task.updatedAt = task.submitTime;
	task.answer = {
		id: task.id,
		task_id: task.id,
		object: 'video',
		model: task.model,
		status: 'queued',
		progress: 0,
		created_at: task.submitTime,
	};
	ctx.gw.tasks.set(task.id, task);
	sendJson(ctx.res, 200, task.answer);
}

/** new-api's states of a running task, poll by poll (its progress per state), the last repeated. */
const NEWAPI_RUNNING = [
	{ status: 'NOT_START', progress: 0 },
	{ status: 'SUBMITTED', progress: 10 },
	{ status: 'QUEUED', progress: 20 },
	{ status: 'IN_PROGRESS', progress: 30 },
];

/** The state of a task still running at (adjusted) poll k of N, in the gateway's own words. */
function runningState(k, finishAt, newApi) {
	if (newApi) return NEWAPI_RUNNING[Math.min(k, NEWAPI_RUNNING.length) - 1];
	if (k === 1) return { status: 'NOT_START', progress: 0 };
	if (k === 2 && finishAt >= 4) return { status: 'QUEUED', progress: 0 };
	return { status: 'IN_PROGRESS', progress: Math.floor((100 * (k - 1)) / (finishAt - 1)) };
}

/**
 * The state reported on answered poll number `poll` (1-based). Without magic words and with
 * N = pollsToFinish: poll 1 NOT_START, poll 2 QUEUED (when N >= 4), then IN_PROGRESS with a
 * rising percentage, and SUCCESS at poll N (FAILURE with `[fail]`). The new-api mode runs
 * NOT_START 0%, SUBMITTED 10%, QUEUED 20%, IN_PROGRESS 30% instead (as far as N allows).
 */
function stateAtPoll(poll, finishAt, flags, newApi = false) {
	let k = poll;
	if (flags.unknown) {
		if (k <= UNKNOWN_POLLS) return { status: 'UNKNOWN', progress: 0 };
		if (k <= 2 * UNKNOWN_POLLS) return { status: 'SUBMITTED', progress: 0 };
		k -= 2 * UNKNOWN_POLLS;
	}
	if (flags.never) {
		if (newApi) return runningState(k, Infinity, true);
		if (k === 1) return { status: 'NOT_START', progress: 0 };
		return { status: 'IN_PROGRESS', progress: Math.min(99, 10 * k) };
	}
	if (k >= finishAt) return { status: flags.fail ? 'FAILURE' : 'SUCCESS', progress: 100 };
	return runningState(k, finishAt, newApi);
}

function advance(gw, task) {
	const before = task.status;
	task.polls += 1;
	Object.assign(task, stateAtPoll(task.polls, task.pollsToFinish, task.flags, task.newApi));
	const now = unixNow();
	if (!task.startTime && ['IN_PROGRESS', 'SUCCESS', 'FAILURE'].includes(task.status)) task.startTime = now;
	if (!task.finishTime && ['SUCCESS', 'FAILURE'].includes(task.status)) task.finishTime = now;
	if (task.status !== before) task.updatedAt = now;
	if (task.status === 'FAILURE') refund(gw, task); // "a failed task is usually refunded automatically"
}

function resultUrl(gw, task) {
	return task.flags.sameOrigin
		? `${gw.baseUrl}/v1/videos/${task.id}/content`
		: `${gw.fileBaseUrl}/files/videos/${task.id}.mp4`;
}

function describeTask(gw, task) {
	const data = {
		task_id: task.id,
		action: 'generate',
		status: task.status,
		progress: `${task.progress}%`,
		submit_time: task.submitTime,
		start_time: task.startTime,
		finish_time: task.finishTime,
	};
	if (task.status === 'SUCCESS') data.result_url = resultUrl(gw, task);
	if (task.status === 'FAILURE') data.fail_reason = FAIL_REASON;
	return data;
}

/**
 * new-api's task record (dto.TaskDto): `fail_reason` always present; `result_url` only when
 * there is one, and for a failed task it is the failure sentence (the record keeps no link, so
 * new-api falls back to the reason: model/task.go GetResultURL).
 */
function describeNewApiTask(gw, task) {
	const failReason = task.status === 'FAILURE' ? FAIL_REASON : '';
	const link = task.status === 'SUCCESS' ? resultUrl(gw, task) : failReason;
	return {
		id: task.seq,
		created_at: task.submitTime,
		updated_at: task.updatedAt,
		task_id: task.id,
		platform: '55',
		user_id: 1,
		group: 'default',
		channel_id: 1,
		quota: task.quota,
		action: task.action,
		status: task.status,
		fail_reason: failReason,
		...(link ? { result_url: link } : {}),
		submit_time: task.submitTime,
		start_time: task.startTime,
		finish_time: task.finishTime,
		progress: `${task.progress}%`,
		properties: { input: '', upstream_model_name: task.model, origin_model_name: task.model },
		data: task.answer,
	};
}

/** new-api answers an unknown task id with HTTP 400; the default mode with 404. */
function taskNotExist(ctx) {
	const body = { code: 'task_not_exist', message: 'task_not_exist', data: null };
	return new GatewayError(isNewApi(ctx.gw) ? 400 : 404, body, {}, { layer: 'task', code: body.code, message: body.message });
}

async function status(ctx) {
	const task = ctx.gw.tasks.get(ctx.params[0]);
	if (!task) throw taskNotExist(ctx);
	task.requests += 1;
	const fault = task.flags.flaky ? FLAKY_PLAN[task.requests] : undefined;
	if (fault && (await serveFault(ctx, fault))) return;
	advance(ctx.gw, task);
	const data = task.newApi ? describeNewApiTask(ctx.gw, task) : describeTask(ctx.gw, task);
	sendJson(ctx.res, 200, { code: 'success', message: '', data });
}

/** GET /v1/videos/{task_id}/content: the same-origin download, behind the bearer key. */
function content(ctx) {
	const task = ctx.gw.tasks.get(ctx.params[0]);
	if (!task || task.status !== 'SUCCESS') {
		throw new GatewayError(404, {
			error: {
				message: `video of task ${ctx.params[0]} is not available`,
				type: 'invalid_request_error',
				param: 'task_id',
				code: 'task_not_exist',
			},
		});
	}
	deliverVideo(ctx, task);
}

module.exports = { submit, status, content, stateAtPoll, FAIL_REASON };
