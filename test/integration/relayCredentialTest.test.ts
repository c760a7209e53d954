/**
 * The credential's Test over real HTTP, with the request helper n8n gives a credential test (the
 * pinned @n8n/backend-network's legacy request, which n8n 2.x's CredentialTestContext calls):
 * against the loopback gateway (good, refused, no-quota and no-model-list keys, a 500, custom
 * headers) and small servers that redirect, so the key and the custom headers are seen to reach
 * the gateway's origin only. The same cases through a real n8n's REST API: test/e2e/credentialTest.test.ts.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import type { ICredentialTestFunctions, INodeCredentialTestResult } from 'n8n-workflow';

import { testGatewayCredential } from '../../nodes/shared/panel/credentialTest';
import { useGateway } from '../gateway/testing';

type LegacyRequest = (options: object, ssrf: undefined, logger: object) => Promise<unknown>;
// What n8n's credential test helper `request` runs (n8n-core's proxyRequestToAxios -> OutboundHttp.requestLegacy).
const executeLegacyRequest: LegacyRequest = require(path.join(path.dirname(require.resolve('@n8n/backend-network')), 'http/legacy-request.js')).executeLegacyRequest;
const quietLogger = { debug() {}, info() {}, warn() {}, error() {} };
const context = { helpers: { request: (options: object) => executeLegacyRequest(options, undefined, quietLogger) } } as unknown as ICredentialTestFunctions;

const env = useGateway();
const KEY = 'sk-integration-credential-test-0123456789';
const HEADER_SECRET = 'relay-secret-0123456789abcdef';

async function test(data: Record<string, unknown>): Promise<INodeCredentialTestResult> {
	return await testGatewayCredential.call(context, { id: '1', name: 'Gateway', type: 'gatewayApi', data: { groupMultiplier: 1, ...data } as never });
}

interface Recorded {
	url?: string;
	headers: http.IncomingHttpHeaders;
}

/** A server that records what it gets and answers as `answer` says. */
async function server(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
	const seen: Recorded[] = [];
	const srv = http.createServer((req, res) => {
		seen.push({ url: req.url, headers: req.headers });
		answer(req, res);
	});
	await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
	const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
	return { url, seen, close: () => new Promise<void>((resolve) => srv.close(() => resolve())) };
}

const models = (_req: http.IncomingMessage, res: http.ServerResponse) => {
	res.writeHead(200, { 'content-type': 'application/json' });
	res.end(JSON.stringify({ object: 'list', data: [{ id: 'x' }] }));
};

describe('the credential test over real HTTP (n8n\'s credential-test request helper)', () => {
	it('OK: the key and the custom headers reach GET /v1/models', async () => {
		const result = await test({ apiKey: KEY, baseUrl: `${env.gateway.baseUrl}/v1`, customHeaders: JSON.stringify({ 'x-portkey-provider': 'openai', 'x-relay-token': HEADER_SECRET }) });
		expect(result).toEqual({ status: 'OK', message: 'Connection successful: the gateway accepted the API Key and lists 12 models; 50.00 USD left on this key.' });
		const [request] = env.gateway.requests;
		expect(request).toMatchObject({ method: 'GET', path: '/v1/models' });
		expect(request.headers).toMatchObject({ authorization: `Bearer ${KEY}`, 'x-portkey-provider': 'openai', 'x-relay-token': HEADER_SECRET });
	});

	it.each([
		['sk-invalid-0123456789', /^GET \/v1\/models failed: the gateway refused the API key \(HTTP 401\): "Invalid token \(request id: \w+\)" \(code invalid_api_key\)\. Check the API Key of the Model Gateway credential\.$/],
		['sk-noquota-0123456789', /^GET \/v1\/models failed: the gateway refused the request for lack of quota or permission \(HTTP 403\): "user quota is not enough" \(code insufficient_user_quota\)\. Top up the account/],
		['sk-nomodels-0123456789', /^This server has no model list: GET \/v1\/models answered HTTP 404 \("Invalid URL \(GET \/v1\/models\)"\), so the key could not be checked this way\. The nodes may still work: try one\./],
	])('%s', async (apiKey, message) => {
		const result = await test({ apiKey, baseUrl: env.gateway.baseUrl });
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(message);
		expect(result.message).not.toContain(apiKey.slice(3));
	});

	it('a 500 quotes the gateway, and is not tried again', async () => {
		env.gateway.queueFaults('/v1/models', ['500-json', '500-json']);
		const result = await test({ apiKey: KEY, baseUrl: env.gateway.baseUrl });
		expect(result.message).toMatch(/^GET \/v1\/models failed: the gateway reported a failure \(HTTP 500\): "bad response status code 500 \(request id: \w+\)" \(code bad_response_status_code\)\. /);
		expect(env.gateway.requests).toHaveLength(1);
	});

	it('a port where nothing listens: the connection was refused, naming host and port', async () => {
		const closed = await server(models);
		await closed.close();
		const host = closed.url.replace('http://', '');
		expect(await test({ apiKey: KEY, baseUrl: closed.url })).toEqual({
			status: 'Error',
			message: `GET /v1/models failed: the connection to ${host} was refused. Nothing answers at ${host}. Check the address and that the server is running.`,
		});
	});

	it('a gateway that moved for good (301 to another origin): named, and the key is not sent there', async () => {
		const target = await server(models);
		const old = await server((_req, res) => {
			res.writeHead(301, { location: `${target.url}/v1/models` });
			res.end();
		});
		try {
			expect(await test({ apiKey: KEY, baseUrl: old.url })).toEqual({
				status: 'Error',
				message: `GET /v1/models failed: the gateway moved to ${target.url}/v1/models (HTTP 301). Update the Base URL of the credential to the new address.`,
			});
			expect(target.seen).toHaveLength(0);
		} finally {
			await Promise.all([old.close(), target.close()]);
		}
	});

	it('a 302 to another origin is followed without the key and the custom headers', async () => {
		const cdn = await server(models);
		const gateway = await server((_req, res) => {
			res.writeHead(302, { location: `${cdn.url}/cached/models` });
			res.end();
		});
		try {
			const result = await test({ apiKey: KEY, baseUrl: gateway.url, customHeaders: JSON.stringify({ 'x-relay-token': HEADER_SECRET }) });
			expect(result).toMatchObject({ status: 'OK' });
			expect(gateway.seen[0].headers).toMatchObject({ authorization: `Bearer ${KEY}`, 'x-relay-token': HEADER_SECRET });
			// The model list, then the balance reads (redirected there too, and no balance: the sentence stays).
			expect(result.message).not.toContain('left on this key');
			expect(cdn.seen.length).toBeGreaterThanOrEqual(1);
			for (const seen of cdn.seen) {
				expect(seen.headers.authorization).toBeUndefined();
				expect(seen.headers['x-relay-token']).toBeUndefined();
			}
		} finally {
			await Promise.all([gateway.close(), cdn.close()]);
		}
	});
});
