/**
 * The video download against hosts that misbehave in ways the loopback gateway does not stage:
 * a connection that breaks mid-file and a host that answers a page instead of the MP4. Both must
 * become errors that quote the task id and keep it on the Continue On Fail item. Also a large
 * file from the loopback gateway, which must reach n8n as a stream.
 */
import * as http from 'http';
import type { AddressInfo } from 'net';

import { downloadVideo } from '../../nodes/GatewayVideoGenerate/taskApi';
import { executeVideo } from '../../nodes/GatewayVideoGenerate/router';
import { errorItem } from '../../nodes/shared/itemRunner';
import { GatewayClient } from '../../nodes/shared/transport';
import { startGateway } from '../gateway';
import type { Gateway } from '../gateway';
import { createExecuteContext } from '../helpers/executeContext';
import { createFakeClock } from '../helpers/fakeClock';

const MP4_HEAD = Buffer.from('000000206674797069736f6d0000020069736f6d69736f32617663316d703431', 'hex');
let host: http.Server;
let hostUrl: string;
let gateway: Gateway;

beforeAll(async () => {
	host = http.createServer((req, res) => {
		if (req.url === '/broken.mp4') {
			res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': 1_000_000 });
			res.write(Buffer.concat([MP4_HEAD, Buffer.alloc(64 * 1024)]), () => setTimeout(() => res.destroy(), 20));
			return;
		}
		res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
		res.end('<html><body>Please sign in</body></html>');
	});
	await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
	hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
	gateway = await startGateway();
});
afterAll(async () => {
	await new Promise((resolve) => host.close(resolve));
	await gateway.close();
});

async function download(link: string) {
	const { ctx } = createExecuteContext({ parameters: {}, credentials: { apiKey: 'sk-download-test-123', baseUrl: 'http://127.0.0.1:9' } });
	const client = await GatewayClient.create(ctx);
	const record = { task_id: 'task_dl1', status: 'SUCCESS', progress: '100%', result_url: link };
	try {
		await downloadVideo(ctx, client, record, 0);
	} catch (error) {
		return errorItem(error as Error, 0).json;
	}
	throw new Error('expected the download to fail');
}

describe('video download from a misbehaving host', () => {
	it('reports a connection that breaks mid-file, with the task id', async () => {
		const json = await download(`${hostUrl}/broken.mp4`);
		expect(json.error).toMatch(/^Downloading the video of task task_dl1 failed: the connection broke while the video was being received/);
		expect(json).toMatchObject({ task_id: 'task_dl1', status: 'SUCCESS', result_url: `${hostUrl}/broken.mp4` });
		expect(json.errorDescription).toContain('Download operation with task ID task_dl1');
	});

	it('refuses a page served instead of the video', async () => {
		const json = await download(`${hostUrl}/login`);
		expect(json.error).toBe('Downloading the video of task task_dl1 failed: the link answered with text/html instead of a video');
		expect(json.task_id).toBe('task_dl1');
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
