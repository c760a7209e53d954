/**
 * Issue 26, the video words: a long refused task id whole where it must be found, the foreign-id
 * error said once, a relative result_url resolved against the gateway's origin, new-api's failure
 * sentence in result_url quoted as the reason (never as a link), and the hints of a 400
 * task_not_exist and a 413. Against loopback gateways over real HTTP.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import { startGateway } from '../gateway';
import { binaryItem, sampleJpeg, withBinaryHelpers } from '../helpers/files';
import { SAMPLE_VIDEO, runVideoNode, startScriptedVideoGateway } from './videoLoopback';
import type { ScriptedGateway, VideoRun } from './videoLoopback';

let gw: ScriptedGateway | undefined;
afterEach(async () => {
	await gw?.close();
	gw = undefined;
});

const shown = (run: VideoRun) => `${run.error?.message} ${run.error?.description}`;
const LONG_REFUSED = `a/${'z'.repeat(70)}MIDDLE${'y'.repeat(70)}`;

describe('a refused task id over 100 characters', () => {
	it.each(['submit', 'generate'])('%s: whole in the error and in the log line, not only in metadata', async (operation) => {
		gw = await startScriptedVideoGateway({ submit: () => ({ body: { task_id: LONG_REFUSED, status: 'queued' } }) });
		const run = await runVideoNode(gw, { operation, options: { maxWaitSeconds: 20 } });
		expect(shown(run)).toContain(LONG_REFUSED);
		expect(run.logs.map((line) => line.message).join('\n')).toContain(LONG_REFUSED);
	});

	it('generate, two items: the other item\'s refused id is whole in the run\'s error', async () => {
		gw = await startScriptedVideoGateway({ submit: (n) => (n === 1 ? { status: 400, body: { error: { message: 'bad prompt' } } } : { body: { task_id: LONG_REFUSED, status: 'queued' }, delayMs: 300 }) });
		const run = await runVideoNode(gw, { operation: 'generate', options: { concurrency: 2, maxWaitSeconds: 20 } }, { items: 2 });
		expect(shown(run)).toContain('bad prompt');
		expect(shown(run)).toContain(LONG_REFUSED);
	});
});

describe('a status answer about another task', () => {
	it.each(['getStatus', 'generate'])('%s: says how to fetch the task later once', async (operation) => {
		gw = await startScriptedVideoGateway({ status: () => ({ body: { code: 'success', data: { task_id: 'task_other', status: 'SUCCESS' } } }) });
		const run = await runVideoNode(gw, { operation, taskId: 'task_1', options: { maxWaitSeconds: 20 } });
		expect(run.error?.message).toContain('answered about another task, task_other');
		expect(shown(run).match(/fetch the video later/g)).toHaveLength(1);
		expect(shown(run).match(/may still be running/g)).toHaveLength(1);
	});
});

describe('new-api answers', () => {
	it('a 400 task_not_exist says the task is unknown to this gateway and key, and what to check', async () => {
		// The loopback gateway's new-api mode answers an unknown task id as new-api writes it.
		const newApi = await startGateway({ flavor: 'newapi' });
		try {
			const run = await runVideoNode(newApi, { operation: 'getStatus', taskId: 'task_9' });
			expect(newApi.requests.map((r) => r.path)).toEqual(['/v1/video/generations/task_9']);
			expect(run.error?.message).toContain('Checking video task task_9 failed: the gateway does not know this task ID');
			expect(run.error?.description).not.toContain('Check the fields the gateway names');
			expect(run.error?.description).toMatch(/Check the task ID/);
			expect(run.error?.description).toMatch(/credential .*submitted it/);
		} finally {
			await newApi.close();
		}
	});

	it('a 413 on a submit with a first frame says the request is too large, naming the field and its size', async () => {
		gw = await startScriptedVideoGateway({ submit: () => ({ status: 413, headers: { 'content-type': 'text/html' }, body: Buffer.from('<html><head><title>413 Request Entity Too Large</title></head></html>') }) });
		const jpeg = sampleJpeg();
		const run = await runVideoNode(gw, { operation: 'submit', options: { imageBinaryProperty: 'frame' } }, { items: [binaryItem({ frame: { bytes: jpeg, fileName: 'frame.jpg', mimeType: 'image/jpeg' } })], extend: (ctx) => void withBinaryHelpers(ctx) });
		expect(run.error?.message).toContain('the request is too large for this gateway');
		expect(shown(run)).toMatch(/field image \([\d.]+ KB\)/);
		expect(run.error?.description).not.toContain('Check the fields the gateway names');
	});

	it('a FAILURE whose result_url holds the failure sentence: quoted as the reason, never given as a link', async () => {
		const sentence = 'task failed: the upstream refused the prompt';
		gw = await startScriptedVideoGateway({ status: (id) => ({ body: { code: 'success', data: { task_id: id, status: 'FAILURE', progress: '100%', result_url: sentence } } }) });
		const status = await runVideoNode(gw, { operation: 'getStatus', taskId: 'task_3' });
		expect(status.output[0].json).toEqual({ task_id: 'task_3', status: 'FAILURE', progress: '100%', fail_reason: sentence });
		const failed = await runVideoNode(gw, { operation: 'download', taskId: 'task_3' });
		expect(failed.error?.message).toContain(`Video task task_3 failed: "${sentence}"`);
	});

	it('a SUCCESS whose result_url is no link is not fetched, and the error quotes it', async () => {
		gw = await startScriptedVideoGateway({ status: (id) => ({ body: { code: 'success', data: { task_id: id, status: 'SUCCESS', progress: '100%', result_url: 'video not stored' } } }) });
		const run = await runVideoNode(gw, { operation: 'download', taskId: 'task_4' });
		expect(run.error?.message).toContain('video not stored');
		expect(gw.requests.filter((request) => !request.path.startsWith('/v1/'))).toEqual([]);
	});
});

describe('a relative result_url', () => {
	let server: http.Server;
	let origin: string;
	const seen: string[] = [];
	beforeAll(async () => {
		server = http.createServer((req, res) => {
			seen.push(req.url ?? '');
			if (req.url === '/gw/v1/video/generations/task_5') {
				res.writeHead(200, { 'content-type': 'application/json' });
				res.end(JSON.stringify({ code: 'success', data: { task_id: 'task_5', status: 'SUCCESS', progress: '100%', result_url: '/files/v.mp4' } }));
			} else if (req.url === '/files/v.mp4') {
				res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(SAMPLE_VIDEO.length) });
				res.end(SAMPLE_VIDEO);
			} else {
				res.writeHead(404, { 'content-type': 'application/json' });
				res.end('{"error":{"message":"not found"}}');
			}
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	});
	afterAll(async () => await new Promise((resolve) => server.close(resolve)));

	it('is resolved against the gateway\'s origin, not its base path, fetched and given whole', async () => {
		const run = await runVideoNode({ baseUrl: `${origin}/gw` }, { operation: 'download', taskId: 'task_5' });
		expect(run.error).toBeUndefined();
		expect(seen).toContain('/files/v.mp4');
		expect(run.output[0].json.result_url).toBe(`${origin}/files/v.mp4`);
		expect(run.output[0].binary?.data).toBeDefined();
	});
});
