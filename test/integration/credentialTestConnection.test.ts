/**
 * The credential Test, through the request helper n8n gives a credential test (the
 * pinned @n8n/backend-network's legacy request): an error answer it quotes in part, whose body then
 * stalls, has its connection closed at once, as every other answer the nodes stop reading.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import type { ICredentialTestFunctions } from 'n8n-workflow';

import { testGatewayCredential } from '../../nodes/shared/panel/credentialTest';
import { BUSY_MARGIN_MS, eventually } from '../helpers/busy';

type LegacyRequest = (options: object, ssrf: undefined, logger: object) => Promise<unknown>;
const executeLegacyRequest: LegacyRequest = require(path.join(path.dirname(require.resolve('@n8n/backend-network')), 'http/legacy-request.js')).executeLegacyRequest;
const quietLogger = { debug() {}, info() {}, warn() {}, error() {} };
const context = { helpers: { request: (options: object) => executeLegacyRequest(options, undefined, quietLogger) } } as unknown as ICredentialTestFunctions;

const STALL_MS = 30_000;
jest.setTimeout(60_000);

it('a 401 whose long body stalls: the test answers at once and the socket closes while the gateway still stalls', async () => {
	let closedAt: number | undefined;
	const timers: NodeJS.Timeout[] = [];
	const server = http.createServer((req, res) => {
		req.socket.once('close', () => (closedAt = Date.now()));
		res.writeHead(401, { 'content-type': 'text/plain' });
		res.write(Buffer.alloc(64 * 1024, 'x'));
		timers.push(setTimeout(() => res.end(), STALL_MS));
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	try {
		const started = Date.now();
		const result = await testGatewayCredential.call(context, {
			id: '1',
			name: 'Gateway',
			type: 'gatewayApi',
			data: { groupMultiplier: 1, apiKey: 'sk-credential-stall-0123456789', baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` } as never,
		});
		expect(result.status).toBe('Error');
		expect(Date.now() - started).toBeLessThan(BUSY_MARGIN_MS);
		expect(await eventually(() => closedAt !== undefined)).toBe(true);
		expect(closedAt! - started).toBeLessThan(STALL_MS / 6);
	} finally {
		timers.forEach(clearTimeout);
		server.closeAllConnections();
		await new Promise((resolve) => server.close(resolve));
	}
});
