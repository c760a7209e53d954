'use strict';
// Asynchronous video generation: submit a task, poll it, download the result. The task moves
// one step per status poll (not per second) so tests are deterministic and fast.
const { sendJson } = require('./http');
const { GatewayError, invalidRequest } = require('./errors');
const { requireModel } = require('./models');
const { has, bigMegabytes, rateLimitOnce } = require('./magic');
const { parseFault, serveFault } = require('./faults');
const { deliverVideo } = require('./files');
const { randomHex, unixNow } = require('./util');
const { videoImage } = require('./attachments');

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

function validateSubmit(ctx, body) {
	const model = requireModel(ctx, body.model, 'video');
	if (typeof body.prompt !== 'string' || body.prompt.trim() === '') {
		throw invalidRequest(ctx, 'prompt is required and must be a non-empty string', { param: 'prompt' });
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
	const task = {
		id: `task_${randomHex(16)}`,
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
		image,
	};
	ctx.gw.tasks.set(task.id, task);
	sendJson(ctx.res, 200, {
		id: task.id,
		task_id: task.id,
		object: 'video',
		model: task.model,
		status: 'queued',
		progress: 0,
		created_at: task.submitTime,
	});
}

/**
 * The state reported on answered poll number `poll` (1-based). Without magic words and with
 * N = pollsToFinish: poll 1 NOT_START, poll 2 QUEUED (when N >= 4), then IN_PROGRESS with a
 * rising percentage, and SUCCESS at poll N (FAILURE with `[fail]`).
 */
function stateAtPoll(poll, finishAt, flags) {
	let k = poll;
	if (flags.unknown) {
		if (k <= UNKNOWN_POLLS) return { status: 'UNKNOWN', progress: 0 };
		if (k <= 2 * UNKNOWN_POLLS) return { status: 'SUBMITTED', progress: 0 };
		k -= 2 * UNKNOWN_POLLS;
	}
	if (flags.never) {
		if (k === 1) return { status: 'NOT_START', progress: 0 };
		return { status: 'IN_PROGRESS', progress: Math.min(99, 10 * k) };
	}
	if (k >= finishAt) return { status: flags.fail ? 'FAILURE' : 'SUCCESS', progress: 100 };
	if (k === 1) return { status: 'NOT_START', progress: 0 };
	if (k === 2 && finishAt >= 4) return { status: 'QUEUED', progress: 0 };
	return { status: 'IN_PROGRESS', progress: Math.floor((100 * (k - 1)) / (finishAt - 1)) };
}

function advance(task) {
	task.polls += 1;
	Object.assign(task, stateAtPoll(task.polls, task.pollsToFinish, task.flags));
	const now = unixNow();
	if (!task.startTime && ['IN_PROGRESS', 'SUCCESS', 'FAILURE'].includes(task.status)) task.startTime = now;
	if (!task.finishTime && ['SUCCESS', 'FAILURE'].includes(task.status)) task.finishTime = now;
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

async function status(ctx) {
	const task = ctx.gw.tasks.get(ctx.params[0]);
	if (!task) throw new GatewayError(404, { code: 'task_not_exist', message: 'task_not_exist', data: null });
	task.requests += 1;
	const fault = task.flags.flaky ? FLAKY_PLAN[task.requests] : undefined;
	if (fault && (await serveFault(ctx, fault))) return;
	advance(task);
	sendJson(ctx.res, 200, { code: 'success', message: '', data: describeTask(ctx.gw, task) });
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
