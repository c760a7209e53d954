/**
 * Gateway Account's Get Balance over real HTTP against the loopback gateway in both its modes:
 * new-api's /api/usage/token/ (converted with /api/status), the one-api-like fallback to the
 * dashboard pair (the default mode, and new-api mode without the usage route), and each refusal
 * and error; the credential test's sentence with and without a balance.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { NodeApiError } from 'n8n-workflow';
import type { ICredentialTestFunctions, INodeExecutionData } from 'n8n-workflow';

import { GatewayAccount } from '../../nodes/GatewayAccount/GatewayAccount.node';
import { testGatewayCredential } from '../../nodes/shared/panel/credentialTest';
import { useGateway } from '../gateway/testing';
import { createExecuteContext } from '../helpers/executeContext';

const env = useGateway({ flavor: 'newapi' });
const KEY = 'sk-integration-account-0123456789';
const NEITHER = /answers neither GET \/api\/usage\/token\/ \(new-api\) nor GET \/v1\/dashboard\/billing\/subscription/;

async function run(options: { apiKey?: string; baseUrl?: string; items?: number; continueOnFail?: boolean } = {}): Promise<{ output?: INodeExecutionData[]; error?: NodeApiError }> {
	const { ctx } = createExecuteContext({
		parameters: { operation: 'getBalance' },
		items: Array.from({ length: options.items ?? 1 }, (_, index) => ({ json: { index } })),
		credentials: { apiKey: options.apiKey ?? KEY, baseUrl: options.baseUrl ?? env.gateway.baseUrl },
		continueOnFail: options.continueOnFail,
		nodeType: 'n8n-nodes-model-gateway.gatewayAccount',
	});
	try {
		return { output: (await new GatewayAccount().execute.call(ctx))[0] };
	} catch (error) {
		return { error: error as NodeApiError };
	}
}

const paths = () => env.gateway.requests.map((request) => `${request.method} ${request.path}`);
const shown = (result: { output?: INodeExecutionData[]; error?: NodeApiError }) => JSON.stringify([result.output, result.error?.message, result.error?.description]);

describe('new-api mode: /api/usage/token/', () => {
	it('reads the key\'s balance in USD (quota ÷ quota_per_unit), one item per input item, paired', async () => {
		const { output, error } = await run({ items: 2 });
		expect(error).toBeUndefined();
		const balance = { available: 50, used: 0, granted: 50, unit: 'USD', unlimited: false, expiresAt: null, source: '/api/usage/token/' };
		expect(output).toEqual([
			{ json: balance, pairedItem: { item: 0 } },
			{ json: balance, pairedItem: { item: 1 } },
		]);
		expect(paths()).toEqual(expect.arrayContaining(['GET /api/usage/token/', 'GET /api/status']));
		expect(paths()).not.toContain('GET /api/usage/token');
		expect(env.gateway.requests.find((request) => request.path === '/api/usage/token/')?.headers.authorization).toBe(`Bearer ${KEY}`);
	});

	it('one read per run, whatever the number of items: new-api allows 20 reads of its route per 20 minutes (CRITICAL_RATE_LIMIT)', async () => {
		env.gateway.setOptions({ criticalRateLimit: 20 });
		const { output, error } = await run({ items: 25 });
		expect(error).toBeUndefined();
		const balance = { available: 50, used: 0, granted: 50, unit: 'USD', unlimited: false, expiresAt: null, source: '/api/usage/token/' };
		expect(output).toEqual(Array.from({ length: 25 }, (_, item) => ({ json: balance, pairedItem: { item } })));
		expect(output?.[0].json).not.toBe(output?.[1].json);
		expect(paths().filter((entry) => entry === 'GET /api/usage/token/')).toHaveLength(1);
		expect(paths().filter((entry) => entry === 'GET /api/status')).toHaveLength(1);
	});

	it('Continue On Fail with several items: the one failed read is each item\'s error, paired', async () => {
		const { output } = await run({ apiKey: 'sk-invalid-account-0123456789', continueOnFail: true, items: 3 });
		expect(output?.map((item) => [item.json.kind, item.pairedItem])).toEqual([0, 1, 2].map((item) => ['auth', { item }]));
		expect(paths().filter((entry) => entry === 'GET /api/usage/token/')).toHaveLength(1);
	});

	it('the money rule follows quota_per_unit: a site that shows tokens still gives its rate, so USD', async () => {
		env.gateway.setOptions({ quotaDisplayType: 'TOKENS' });
		expect((await run()).output?.[0].json).toMatchObject({ available: 50, unit: 'USD' });
	});

	it('an expired key may read its balance: the expiry in ISO 8601', async () => {
		const { output } = await run({ apiKey: 'sk-expired-account-0123456789' });
		expect(output?.[0].json).toMatchObject({ expiresAt: '2026-01-01T00:00:00.000Z', unlimited: false, source: '/api/usage/token/' });
	});

	it('a used-up key: nothing available, everything used', async () => {
		const { output } = await run({ apiKey: 'sk-exhausted-account-0123456789' });
		expect(output?.[0].json).toMatchObject({ available: 0, used: 50, granted: 50, unit: 'USD' });
	});

	it('an unlimited key says so', async () => {
		const { output } = await run({ apiKey: 'sk-unlimited-account-0123456789' });
		expect(output?.[0].json).toMatchObject({ unlimited: true, unit: 'USD' });
	});

	it('a refused key (401 on /api/usage/token/): the refusal, quoted, never the key; no fallback tried', async () => {
		const result = await run({ apiKey: 'sk-invalid-account-0123456789' });
		expect(result.error).toBeInstanceOf(NodeApiError);
		expect(result.error?.message).toMatch(/Reading the key's balance \(GET \/api\/usage\/token\/\) failed: .*API key/i);
		expect(result.error?.message).toContain('Invalid token');
		expect(shown(result)).not.toContain('invalid-account-0123456789');
		expect(paths()).not.toContain('GET /v1/dashboard/billing/subscription');
	});

	it('Continue On Fail: the refusal becomes the item\'s error, paired', async () => {
		const { output } = await run({ apiKey: 'sk-invalid-account-0123456789', continueOnFail: true });
		expect(output).toEqual([{ json: expect.objectContaining({ error: expect.stringContaining('Invalid token'), kind: 'auth' }), pairedItem: { item: 0 } }]);
	});

	it('a 5xx is retried like a status check (a free read)', async () => {
		env.gateway.queueFaults('/api/usage/token/', ['502-html']);
		const { output, error } = await run();
		expect(error).toBeUndefined();
		expect(output?.[0].json).toMatchObject({ available: 50 });
		expect(paths().filter((entry) => entry === 'GET /api/usage/token/')).toHaveLength(2);
	});
});

describe('one-api-like gateways: the dashboard pair', () => {
	it('new-api mode without /api/usage/token: falls back to the pair, in USD', async () => {
		env.gateway.setOptions({ usageTokenRoute: false });
		const { output, error } = await run();
		expect(error).toBeUndefined();
		expect(output?.[0].json).toEqual({ available: 50, used: 0, granted: 50, unit: 'USD', unlimited: false, expiresAt: null, source: '/v1/dashboard/billing/subscription' });
	});

	it('a site showing CNY: the pair is turned back into USD', async () => {
		env.gateway.setOptions({ usageTokenRoute: false, quotaDisplayType: 'CNY' });
		expect((await run()).output?.[0].json).toMatchObject({ available: 50, granted: 50, unit: 'USD' });
	});

	it('a site showing tokens: its quota_per_unit still turns the pair into USD, as on /api/usage/token/', async () => {
		env.gateway.setOptions({ usageTokenRoute: false, quotaDisplayType: 'TOKENS' });
		expect((await run()).output?.[0].json).toMatchObject({ available: 50, granted: 50, unit: 'USD' });
	});

	it('a site showing tokens, a key granted more than 100,000,000 units (200 USD): a limited key, not unlimited', async () => {
		env.gateway.setOptions({ usageTokenRoute: false, quotaDisplayType: 'TOKENS', keyQuota: 200_000_000 });
		expect((await run()).output?.[0].json).toMatchObject({ available: 400, granted: 400, unit: 'USD', unlimited: false });
	});

	it('an unlimited key reads as unlimited', async () => {
		env.gateway.setOptions({ usageTokenRoute: false });
		expect((await run({ apiKey: 'sk-unlimited-account-0123456789' })).output?.[0].json).toMatchObject({ unlimited: true });
	});

	it('an expired key is refused there (401), quoted', async () => {
		env.gateway.setOptions({ usageTokenRoute: false });
		const result = await run({ apiKey: 'sk-expired-account-0123456789' });
		expect(result.error?.message).toMatch(/GET \/v1\/dashboard\/billing\/subscription\) failed/);
		expect(shown(result)).not.toContain('expired-account-0123456789');
	});

	it('the default mode answers like one-api: the balance from the pair', async () => {
		env.gateway.setOptions({ flavor: 'default' });
		const { output, error } = await run();
		expect(error).toBeUndefined();
		expect(output?.[0].json).toMatchObject({ available: 50, unit: 'USD', source: '/v1/dashboard/billing/subscription' });
	});
});

/** A server that answers every request with `answer`. */
async function server(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<{ baseUrl: string; close: () => Promise<void> }> {
	const srv = http.createServer(answer);
	await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
	return { baseUrl: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, close: async () => await new Promise<void>((resolve) => srv.close(() => resolve())) };
}

/** Runs `use` against a server that answers every request with `answer`, then closes it. */
async function withServer<T>(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void, use: (baseUrl: string) => Promise<T>): Promise<T> {
	const other = await server(answer);
	try {
		return await use(other.baseUrl);
	} finally {
		await other.close();
	}
}

describe('gateways without a balance', () => {
	it.each([
		['neither route (404 on both)', (_req: http.IncomingMessage, res: http.ServerResponse) => res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"Invalid URL"}}')],
		['a web page with HTTP 200 on every path (non-JSON 200)', (_req: http.IncomingMessage, res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Relay</title><div id="root"></div>')],
	])('%s: one clear error naming both paths, not a parse failure', async (_name, answer) => {
		const result = await withServer(answer, async (baseUrl) => await run({ baseUrl }));
		expect(result.error?.message).toMatch(NEITHER);
	});
});

describe('the credential test', () => {
	type LegacyRequest = (options: object, ssrf: undefined, logger: object) => Promise<unknown>;
	const executeLegacyRequest: LegacyRequest = require(path.join(path.dirname(require.resolve('@n8n/backend-network')), 'http/legacy-request.js')).executeLegacyRequest;
	const quiet = { debug() {}, info() {}, warn() {}, error() {} };
	const context = { helpers: { request: (options: object) => executeLegacyRequest(options, undefined, quiet) } } as unknown as ICredentialTestFunctions;
	const test = async (baseUrl: string, apiKey = KEY) => await testGatewayCredential.call(context, { id: '1', name: 'Gateway', type: 'gatewayApi', data: { apiKey, baseUrl, groupMultiplier: 1 } as never });

	it('adds the balance to its sentence when the gateway reports one', async () => {
		expect(await test(env.gateway.baseUrl)).toEqual({ status: 'OK', message: 'Connection successful: the gateway accepted the API Key and lists 12 models; 50.00 USD left on this key.' });
	});

	it('stays as it is when the gateway has no balance route (never a failure because of it)', async () => {
		const modelsOnly = (req: http.IncomingMessage, res: http.ServerResponse) => {
			if (req.url === '/v1/models') res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[{"id":"m1"},{"id":"m2"}]}');
			else res.writeHead(404).end('not found');
		};
		expect(await withServer(modelsOnly, async (baseUrl) => await test(baseUrl))).toEqual({ status: 'OK', message: 'Connection successful: the gateway accepted the API Key and lists 2 models.' });
	});
});
