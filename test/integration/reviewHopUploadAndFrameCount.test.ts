/**
 * Findings of the review of the sixth session, kept as tests (real loopback servers, n8n's own request
 * function): where an upload was is a fact of each redirect hop; a stored file of no recorded size is
 * counted no further than past its limit.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import type { IDataObject } from 'n8n-workflow';

import { GatewayVideoGenerate } from '../../nodes/GatewayVideoGenerate/GatewayVideoGenerate.node';
import { frameOnDisk, pngHeader } from '../helpers/files';
import { streamedFrameSubmit } from '../helpers/streamedFrame';

jest.setTimeout(60_000);

const KEY = 'sk-rev6-review-0123456789abcdef';
const SIZE = 8 * 1024 * 1024;
const frame = frameOnDisk(SIZE);

describe('a 307 that came before the body was sent, then a 502 after the next hop had the whole body', () => {
	it('the second hop was sent whole: the gateway may have acted, so the paid submit is not sent again', async () => {
		let firstHops = 0;
		let secondHops = 0;
		let secondWhole = 0;
		const server = http.createServer((request, response) => {
			request.on('error', () => undefined);
			if (request.url?.startsWith('/moved') !== true) {
				firstHops++;
				// A relay's `return 307`: answered at the head, the body never read.
				response.writeHead(307, { location: '/moved/v1/video/generations', 'content-length': '0' });
				response.end();
				return;
			}
			secondHops++;
			let got = 0;
			request.on('data', (part: Buffer) => (got += part.length));
			request.on('end', () => {
				if (got >= SIZE) secondWhole++;
				const body = JSON.stringify({ error: { message: 'upstream timed out', type: 'bad_gateway' } });
				response.writeHead(502, { 'content-type': 'application/json', 'content-length': String(body.length) });
				response.end(body);
			});
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
		try {
			const test = streamedFrameSubmit({
				baseUrl,
				apiKey: KEY,
				size: SIZE,
				continueOnFail: true,
				stream: async (chunkSize) => fs.createReadStream(frame, chunkSize ? { highWaterMark: chunkSize } : {}),
			});
			const [output] = await new GatewayVideoGenerate().execute.call(test.ctx);
			const json = output[0].json as IDataObject;
			expect(secondWhole).toBeGreaterThanOrEqual(1);
			// The hop that had the whole body answered 502: it may have created the task.
			expect(json.mayHaveActed).toBe(true);
			expect(secondHops).toBe(1);
			expect(firstHops).toBe(1);
		} finally {
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		}
	});
});

describe('a stored first frame whose size n8n did not record (1.x without `bytes`)', () => {
	it('is refused as too big after reading little more than the limit, not counted to its end', async () => {
		const MAX = 10 * 1024 * 1024;
		const TOTAL = 512 * 1024 * 1024;
		const chunk = Buffer.alloc(1024 * 1024, 0);
		pngHeader(64, 64, 64).copy(chunk);
		let pulled = 0;
		async function* file() {
			for (let sent = 0; sent < TOTAL; sent += chunk.length) {
				pulled += chunk.length;
				yield sent === 0 ? chunk : Buffer.alloc(chunk.length);
			}
		}
		const test = streamedFrameSubmit({
			baseUrl: 'http://127.0.0.1:9',
			apiKey: KEY,
			size: TOTAL,
			continueOnFail: true,
			stream: async () => (await import('node:stream')).Readable.from(file()),
		});
		Object.assign(test.ctx.helpers, { getBinaryMetadata: async () => ({ mimeType: 'image/png' }) });
		const [output] = await new GatewayVideoGenerate().execute.call(test.ctx);
		const json = output[0].json as IDataObject;
		expect(String(json.error)).toMatch(/at most 10(\.0)? MB/);
		// Counted no further than one chunk past the limit (85f1c5b counted a 512 MB file to its end).
		expect(pulled).toBeLessThan(2 * MAX);
	});
});
