'use strict';
// Helpers for jest tests that run against the gateway.
const { startGateway } = require('./index');

const TEST_KEY = 'sk-test-0123456789';

/** fetch wrappers that send JSON and, unless `key` is null, the bearer key. */
function gatewayClient(baseUrl, key = TEST_KEY) {
	const headers = (extra) => ({
		'content-type': 'application/json',
		...(key ? { authorization: `Bearer ${key}` } : {}),
		...extra,
	});
	return {
		get: (path, init = {}) => fetch(baseUrl + path, { ...init, headers: headers(init.headers) }),
		post: (path, body, init = {}) =>
			fetch(baseUrl + path, {
				method: 'POST',
				...init,
				headers: headers(init.headers),
				body: typeof body === 'string' ? body : JSON.stringify(body),
			}),
	};
}

/**
 * Registers jest hooks that start one gateway for the test file, reset it before each test and
 * close it at the end. The returned object's `gateway` and `api` (a gatewayClient) are set once
 * the file's tests run.
 */
function useGateway(options) {
	const env = { gateway: undefined, api: undefined };
	beforeAll(async () => {
		env.gateway = await startGateway(options);
		env.api = gatewayClient(env.gateway.baseUrl);
	});
	afterAll(() => env.gateway?.close());
	beforeEach(() => env.gateway.reset());
	return env;
}

/** Submits a video task (expects a 200) and returns its task id. */
async function submitVideoTask(api, body) {
	const response = await api.post('/v1/video/generations', body);
	expect(response.status).toBe(200);
	return (await response.json()).task_id;
}

/** One status poll of a video task: expects a 200 `{code:'success', message:''}` answer and returns its record. */
async function pollVideoTask(api, taskId) {
	const response = await api.get(`/v1/video/generations/${taskId}`);
	expect(response.status).toBe(200);
	const body = await response.json();
	expect(body).toMatchObject({ code: 'success', message: '' });
	return body.data;
}

/** `count` status polls of a video task, each as "<status> <progress>". */
async function videoTaskStates(api, taskId, count) {
	const states = [];
	for (let i = 0; i < count; i++) {
		const data = await pollVideoTask(api, taskId);
		states.push(`${data.status} ${data.progress}`);
	}
	return states;
}

/** Top-level ISO BMFF boxes of an MP4 buffer: [{ type, size }], sizes summing to its length. */
function mp4TopLevelBoxes(buffer) {
	const boxes = [];
	let at = 0;
	while (at + 8 <= buffer.length && boxes.length < 1000) {
		let size = buffer.readUInt32BE(at);
		const type = buffer.toString('ascii', at + 4, at + 8);
		if (size === 1) size = Number(buffer.readBigUInt64BE(at + 8));
		if (size === 0) size = buffer.length - at; // box runs to the end of the file
		if (size < 8) throw new Error(`bad MP4 box size ${size} at ${at}`);
		boxes.push({ type, size });
		at += size;
	}
	if (at !== buffer.length) throw new Error(`MP4 boxes end at ${at}, file is ${buffer.length} bytes`);
	return boxes;
}

module.exports = { TEST_KEY, gatewayClient, useGateway, mp4TopLevelBoxes, submitVideoTask, pollVideoTask, videoTaskStates };
