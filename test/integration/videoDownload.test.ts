/**
 * The video download against hosts that misbehave in ways the loopback gateways do not stage: a
 * connection that breaks mid-file, hosts that answer 200 with a page, an error body or a few bytes
 * of text instead of the MP4, a body that drips its page forever, and n8n refusing to store the
 * file (its binary-data limits). Each must become an error that names the task, keeps it on the
 * Continue On Fail item, and says what to do. Also a large file from the loopback gateway, which
 * must reach n8n as a stream.
 */
import * as fs from 'fs';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as path from 'path';
import type { IDataObject } from 'n8n-workflow';

import { executeVideo } from '../../nodes/GatewayVideoGenerate/router';
import { downloadVideo } from '../../nodes/GatewayVideoGenerate/taskApi';
import { errorItem } from '../../nodes/shared/failures/edge';
import { GatewayError } from '../../nodes/shared/failures/errors';
import { GatewayClient } from '../../nodes/shared/wire/transport';
import { startGateway } from '../gateway';
import type { Gateway } from '../gateway';
import { createExecuteContext } from '../helpers/executeContext';
import type { TestContext } from '../helpers/executeContext';
import { createFakeClock } from '../helpers/fakeClock';

const KEY = 'sk-video-test-0123456789abcdef';
const MP4_HEAD = Buffer.from('000000206674797069736f6d0000020069736f6d69736f32617663316d703431', 'hex');
const sampleVideo = fs.readFileSync(path.join(__dirname, '../fixtures/sample-video.mp4'));
const JSON_ERROR = JSON.stringify({ error: { message: 'Request has expired', code: 'AccessDenied' }, hint: 'x'.repeat(5000) });
let host: http.Server;
let hostUrl: string;
let gateway: Gateway;
const hostRequests: string[] = [];

beforeAll(async () => {
	host = http.createServer((req, res) => {
		hostRequests.push(req.url ?? '');
		switch (req.url) {
			case '/broken.mp4':
				res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': 1_000_000 });
				res.write(Buffer.concat([MP4_HEAD, Buffer.alloc(64 * 1024)]), () => setTimeout(() => res.destroy(), 20));
				return;
			case '/error.json':
				res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
				res.end(JSON_ERROR);
				return;
			case '/forbidden.mp4':
				res.writeHead(200, { 'content-type': 'video/mp4' });
				res.end('Forbidden');
				return;
			case '/forbidden.bin':
				// text long enough to fill the peek, served as a generic binary type
				res.writeHead(200, { 'content-type': 'application/octet-stream' });
				res.end('AccessDenied: the signature of this link does not match, please request a new one.');
				return;
			case '/empty.mp4':
				res.writeHead(200, { 'content-type': 'video/mp4' });
				res.end();
				return;
			case '/drip.html': {
				// a page that never ends: it is quoted from what came within a few seconds
				res.writeHead(200, { 'content-type': 'text/html' });
				res.write('<html><body>Please sign in');
				const timer = setInterval(() => res.write(' '), 200);
				res.on('close', () => clearInterval(timer));
				return;
			}
			case '/video.mp4':
				res.writeHead(200, { 'content-type': 'application/octet-stream' });
				res.end(sampleVideo);
				return;
			default:
				res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
				res.end('<html><body>Please sign in</body></html>');
		}
	});
	await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
	hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
	gateway = await startGateway();
});
afterAll(async () => {
	host.closeAllConnections();
	await new Promise((resolve) => host.close(resolve));
	await gateway.close();
});

async function attempt(link: string, tweak?: (context: TestContext) => void) {
	const context = createExecuteContext({ parameters: {}, credentials: { apiKey: KEY, baseUrl: 'http://127.0.0.1:9' } });
	tweak?.(context);
	const client = await GatewayClient.create(context.ctx);
	const record = { task_id: 'task_dl1', status: 'SUCCESS', progress: '100%', result_url: link };
	try {
		return { binary: await downloadVideo(context.ctx, client, record, 0), context };
	} catch (error) {
		return { error: error as GatewayError, json: errorItem(context.ctx.getNode(), error, 0, client.masker).json, context };
	}
}

async function download(link: string, tweak?: (context: TestContext) => void): Promise<IDataObject & { gatewayError: GatewayError }> {
	const result = await attempt(link, tweak);
	if (!result.error) throw new Error('expected the download to fail');
	expect(result.error).toBeInstanceOf(GatewayError);
	return { ...result.json, gatewayError: result.error };
}

describe('video download from a misbehaving host', () => {
	it('reports a connection that breaks mid-file as a network error, with the task id and how to download again', async () => {
		const json = await download(`${hostUrl}/broken.mp4`);
		expect(json.gatewayError.kind).toBe('network');
		expect(json.error).toMatch(/^Downloading the video of task task_dl1 failed: the connection to 127\.0\.0\.1:\d+ was dropped before the answer was complete/);
		expect(json).toMatchObject({ kind: 'network', task_id: 'task_dl1', status: 'SUCCESS', result_url: `${hostUrl}/broken.mp4` });
		expect(json.errorDescription).toContain('Run the Download operation with task ID task_dl1');
	});

	it('refuses a page served instead of the video, quoting it', async () => {
		const json = await download(`${hostUrl}/login`);
		expect(json.error).toBe('Downloading the video of task task_dl1 failed: the link answered with text/html instead of a video: "<html><body>Please sign in</body></html>"');
		expect(json).toMatchObject({ kind: 'protocol', task_id: 'task_dl1', httpCode: 200 });
	});

	it('refuses a JSON error served with status 200, quoting its start (read at most 2 KB of it)', async () => {
		const json = await download(`${hostUrl}/error.json`);
		// The error keeps what it read whole (masked, then shortened only where it is shown).
		const kept = String(json.gatewayError.gatewayMessage);
		expect(kept.length).toBeGreaterThan(300);
		expect(kept.length).toBeLessThanOrEqual(2048);
		expect(JSON_ERROR.replace(/\s+/g, ' ').startsWith(kept)).toBe(true);
		expect(String(json.error)).toMatch(/…"$/);
		expect(String(json.error).length).toBeLessThan(600);
		expect(json.error).toMatch(/^Downloading the video of task task_dl1 failed: the link answered with application\/json instead of a video: "\{"error":\{"message":"Request has expired"/);
		expect(json.errorDescription).toContain('Run the Download operation with task ID task_dl1');
	});

	it('refuses a page that never ends within a few seconds, quoting what came', async () => {
		const started = Date.now();
		const json = await download(`${hostUrl}/drip.html`);
		expect(Date.now() - started).toBeLessThan(4500);
		expect(json.error).toBe('Downloading the video of task task_dl1 failed: the link answered with text/html instead of a video: "<html><body>Please sign in"');
	});

	it('refuses a few bytes of text served as video/mp4 or as a generic file, and an empty body, quoting them', async () => {
		const forbidden = await download(`${hostUrl}/forbidden.mp4`);
		expect(forbidden.error).toBe('Downloading the video of task task_dl1 failed: the link answered with text (served as video/mp4) instead of a video: "Forbidden"');
		expect(forbidden).toMatchObject({ kind: 'protocol', task_id: 'task_dl1' });
		const longer = await download(`${hostUrl}/forbidden.bin`);
		expect(longer.error).toBe(
			'Downloading the video of task task_dl1 failed: the link answered with text (served as application/octet-stream) instead of a video: "AccessDenied: the signature of this link does not match, please request a new one."',
		);
		const empty = await download(`${hostUrl}/empty.mp4`);
		expect(empty.error).toBe('Downloading the video of task task_dl1 failed: the link answered with an empty body instead of a video');
	});

	it('stores a real video served as application/octet-stream, typed from its bytes', async () => {
		const result = await attempt(`${hostUrl}/video.mp4`);
		expect(result.error).toBeUndefined();
		expect(result.binary).toMatchObject({ mimeType: 'video/mp4', fileName: 'video-task_dl1.mp4' });
		expect(result.context.binaries[0].streamed).toBe(true);
	});

	it('names n8n\'s own binary-data limit when n8n refuses to store the file (not "the connection broke")', async () => {
		// what n8n 2.x throws in its `database` binary data mode for a file over 512 MB
		const tooLarge = new Error(
			'Failed to write binary file "video-task_dl1.mp4" (f1) because its size of 600 MB exceeds the max size limit of 512 MB set for `database` mode. Consider increasing `N8N_BINARY_DATA_DATABASE_MAX_FILE_SIZE` up to 1 GB, or using S3 storage mode if you require writes larger than 1 GB.',
		);
		const json = await download(`${hostUrl}/video.mp4`, (context) => {
			context.ctx.helpers.prepareBinaryData = async (data: unknown) => {
				// n8n reads the stream into memory first, then refuses it
				for await (const chunk of data as AsyncIterable<Buffer>) void chunk;
				throw tooLarge;
			};
		});
		expect(json.gatewayError.kind).toBe('storage');
		expect(json.error).toMatch(/^Downloading the video of task task_dl1 failed: n8n could not store the file \(Failed to write binary file .* exceeds the max size limit of 512 MB/);
		expect(json.errorDescription).toContain("n8n's own limit for binary data");
		expect(json.errorDescription).toContain('N8N_DEFAULT_BINARY_DATA_MODE=filesystem');
		expect(json.errorDescription).toContain('Download Video option off');
		expect(json).toMatchObject({ kind: 'storage', task_id: 'task_dl1' });
		expect(String(json.error)).not.toMatch(/connection/);

		// n8n 1.x's default mode: the file as one base64 string, over V8's string limit
		const tooLong = Object.assign(new Error('Cannot create a string longer than 0x1fffffe8 characters'), { code: 'ERR_STRING_TOO_LONG' });
		const json1 = await download(`${hostUrl}/video.mp4`, (context) => {
			context.ctx.helpers.prepareBinaryData = async () => await Promise.reject(tooLong);
		});
		expect(json1).toMatchObject({ kind: 'storage' });
		expect(json1.errorDescription).toContain('N8N_DEFAULT_BINARY_DATA_MODE=filesystem');
	});
});

describe('a large video', () => {
	it('is handed to n8n as a stream, byte for byte', async () => {
		const context = createExecuteContext({
			parameters: { operation: 'generate', model: { __rl: true, mode: 'id', value: 'video-2-0-mini-260615' }, prompt: 'long take [big:16]', seconds: 10, size: '1920x1080' },
			credentials: { apiKey: 'sk-integration-video-big', baseUrl: gateway.baseUrl },
		});
		const [[item]] = await executeVideo(context.ctx, { clock: createFakeClock() });
		expect(context.binaries).toHaveLength(1);
		expect(context.binaries[0].streamed).toBe(true);
		expect(context.binaries[0].binary.bytes).toBe(16 * 1024 * 1024);
		expect(item.binary?.data.mimeType).toBe('video/mp4');
	});
});
