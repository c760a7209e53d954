/**
 * Review rev6: an answer the node stops reading closes its connection under n8n 1.x's request
 * helper too (axios without the Readable.from wrapper: maxContentLength -1), and the words are the
 * same under both helpers. Also a gzip-encoded body (axios's unzip pipeline is then the body).
 */
import * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import * as zlib from 'zlib';
import type { AddressInfo } from 'net';
import type { IHttpRequestOptions } from 'n8n-workflow';

import { GatewayError } from '../../nodes/shared/failures/errors';
import { GatewayClient } from '../../nodes/shared/wire/transport';
import { BUSY_MARGIN_MS, eventually } from '../helpers/busy';
import { createExecuteContext } from '../helpers/executeContext';

const STALL_MS = 30_000;
const V1 = path.join(os.homedir(), '.cache/n8n-nodes-model-gateway/n8n-1.123.81/node_modules/n8n-core/dist/execution-engine/node-execution-context/utils/request-helper-functions.js');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const v1HttpRequest = (require(V1) as { httpRequest: (o: IHttpRequestOptions) => Promise<unknown> }).httpRequest;

async function stallingServer(status: number, headers: http.OutgoingHttpHeaders, body: Buffer) {
	let closedAt: number | undefined;
	const timers: NodeJS.Timeout[] = [];
	const server = http.createServer((req, res) => {
		closedAt = undefined;
		req.socket.once('close', () => (closedAt = Date.now()));
		req.resume();
		req.on('end', () => {
			res.writeHead(status, headers);
			res.write(body);
			timers.push(setTimeout(() => res.end(), STALL_MS));
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		closedAt: () => closedAt,
		close: async () => {
			timers.forEach(clearTimeout);
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		},
	};
}

const gzipped = zlib.gzipSync(Buffer.alloc(256 * 1024, 'x'), { level: 1 });
const cases: Array<[string, number, http.OutgoingHttpHeaders, Buffer]> = [
	['an error body as long as is worth quoting', 400, { 'content-type': 'text/plain' }, Buffer.alloc(64 * 1024, 'x')],
	['a gzip error body as long as is worth quoting', 400, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }, gzipped],
	['a redirect whose body stalls', 302, { location: '/elsewhere', 'content-type': 'text/html' }, Buffer.from('<p>Moved</p>')],
];

describe.each([
	['n8n 2.x helper', undefined],
	['n8n 1.x helper', v1HttpRequest],
])('%s', (_runtime, helper) => {
	it.each(cases)('%s: the call fails at once and the socket closes while the gateway still stalls', async (_name, status, headers, body) => {
		const server = await stallingServer(status, headers, body);
		try {
			const { ctx } = createExecuteContext({ parameters: {}, credentials: { apiKey: 'sk-answer-connection-0123456789', baseUrl: server.baseUrl } });
			if (helper) ctx.helpers.httpRequest = helper as typeof ctx.helpers.httpRequest;
			const client = await GatewayClient.create(ctx);
			const started = Date.now();
			const failure = await client.json({ path: '/v1/models', retry: false, deadlineMs: STALL_MS }).catch((error: unknown) => error);
			expect(failure).toBeInstanceOf(GatewayError);
			expect((failure as GatewayError).kind).not.toBe('timeout');
			expect(Date.now() - started).toBeLessThan(BUSY_MARGIN_MS);
			expect(await eventually(() => server.closedAt() !== undefined)).toBe(true);
			expect(server.closedAt()! - started).toBeLessThan(STALL_MS / 2);
		} finally {
			await server.close();
		}
	});
});
