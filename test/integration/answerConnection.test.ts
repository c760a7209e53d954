/**
 * An answer the node stops reading before its end closes its connection at once, whatever the
 * reason it stopped (an error body past what is worth quoting, a redirect's body, an answer too
 * large; a chat answer n8n's live text refuses: liveTextRefused.test.ts): a gateway that then
 * stalls does not hold a socket of n8n's open until it speaks again. n8n's request helper hands over a wrapper of the socket's stream; destroying the wrapper alone
 * leaves the socket open while the gateway is silent.
 */
import * as http from 'http';
import * as zlib from 'zlib';

import { GatewayError } from '../../nodes/shared/failures/errors';
import { GatewayClient } from '../../nodes/shared/wire/transport';
import { BUSY_MARGIN_MS, eventually } from '../helpers/busy';
import { createExecuteContext } from '../helpers/executeContext';
import { stallingServer as stallingServerOf } from '../helpers/stallingServer';

const STALL_MS = 30_000;

/** A server that writes `head` and the start of a body, then stalls for STALL_MS. */
async function stallingServer(status: number, headers: http.OutgoingHttpHeaders, body: Buffer) {
	return await stallingServerOf(STALL_MS, (res) => {
		res.writeHead(status, headers);
		res.write(body);
	});
}

async function clientFor(baseUrl: string): Promise<GatewayClient> {
	const { ctx } = createExecuteContext({ parameters: {}, credentials: { apiKey: 'sk-answer-connection-0123456789', baseUrl } });
	return await GatewayClient.create(ctx);
}

describe('an answer the node stops reading closes its connection', () => {
	// A gzip body: n8n's helper hands over its unzip stream, not the socket's.
	const gzipped = zlib.gzipSync(Buffer.alloc(256 * 1024, 'x'), { level: 1 });
	const cases: Array<[string, number, http.OutgoingHttpHeaders, Buffer]> = [
		['an error body as long as is worth quoting', 400, { 'content-type': 'text/plain' }, Buffer.alloc(64 * 1024, 'x')],
		['a gzip error body as long as is worth quoting', 400, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }, gzipped],
		['a redirect whose body stalls', 302, { location: '/elsewhere', 'content-type': 'text/html' }, Buffer.from('<p>Moved</p>')],
	];
	it.each(cases)('%s: the call fails at once, not as a timeout, and the socket closes while the gateway still stalls', async (_name, status, headers, body) => {
		const server = await stallingServer(status, headers, body);
		try {
			const client = await clientFor(server.baseUrl);
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
