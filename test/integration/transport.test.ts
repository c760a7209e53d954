/**
 * The one transport against the loopback gateway: URL forms, retries and their budget, the
 * batch-wide backoff, error translation, cancel, and the key never leaking.
 */
import * as http from 'http';
import type { AddressInfo } from 'net';

import { GatewayClient } from '../../nodes/shared/transport';
import { useGateway } from '../gateway/testing';
import { createExecuteContext } from '../helpers/executeContext';

const KEY = 'sk-integration-transport-0123456789';
const fastRetry = { baseDelayMs: 20, maxDelayMs: 100 };
// One loopback gateway for the file, with a clean log and state before each test.
const env = useGateway();

async function client(options: { baseUrl?: string; apiKey?: string; abortSignal?: AbortSignal } = {}) {
	const { ctx } = createExecuteContext({
		parameters: {},
		credentials: { apiKey: options.apiKey ?? KEY, baseUrl: options.baseUrl ?? env.gateway.baseUrl },
		abortSignal: options.abortSignal,
	});
	return await GatewayClient.create(ctx);
}

const apiRequests = (path: string) => env.gateway.requests.filter((request) => request.server === 'api' && request.path === path);

describe('URL forms', () => {
	it.each(['', '/', '/v1', '/v1/'])('reaches /v1/models with base URL + "%s"', async (suffix) => {
		const answer = await (await client({ baseUrl: env.gateway.baseUrl + suffix })).json<{ data: unknown[] }>({ path: '/v1/models' });
		expect(answer.data.length).toBeGreaterThan(0);
		expect(apiRequests('/v1/models')).toHaveLength(1);
	});

	it('works for a gateway mounted under a path prefix', async () => {
		// A reverse proxy that serves the gateway under /relay/, as hosted gateways often are.
		const proxy = http.createServer((req, res) => {
			if (!req.url?.startsWith('/relay/')) {
				res.writeHead(404).end();
				return;
			}
			const upstream = http.request(
				`${env.gateway.baseUrl}${req.url.slice('/relay'.length)}`,
				{ method: req.method, headers: req.headers },
				(answer) => {
					res.writeHead(answer.statusCode ?? 502, answer.headers);
					answer.pipe(res);
				},
			);
			req.pipe(upstream);
		});
		await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
		try {
			const base = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/relay/v1/`;
			const answer = await (await client({ baseUrl: base })).json<{ data: unknown[] }>({ path: '/v1/models' });
			expect(answer.data.length).toBeGreaterThan(0);
		} finally {
			await new Promise((resolve) => proxy.close(resolve));
		}
	});

	it('sends the bearer key', async () => {
		await (await client()).json({ path: '/v1/models' });
		expect(apiRequests('/v1/models')[0].headers.authorization).toBe(`Bearer ${KEY}`);
	});
});

describe('retries', () => {
	it('retries 429 (empty body), HTML 5xx pages and dropped connections, then succeeds', async () => {
		env.gateway.queueFaults('/v1/models', ['429', '502-html', 'reset', '504-html']);
		const answer = await (await client()).json<{ data: unknown[] }>({ path: '/v1/models', retry: fastRetry });
		expect(answer.data.length).toBeGreaterThan(0);
		expect(apiRequests('/v1/models')).toHaveLength(5);
	});

	it('gives up after the retry budget with a plain rate-limit message', async () => {
		env.gateway.queueFaults('/v1/models', ['429', '429', '429', '429']);
		await expect((await client()).json({ path: '/v1/models', retry: { ...fastRetry, maxRetries: 2 } })).rejects.toThrow(
			/^Rate limited: .*\(HTTP 429\)$/,
		);
		expect(apiRequests('/v1/models')).toHaveLength(3);
	});

	it('summarises an HTML error page once retries are spent', async () => {
		env.gateway.queueFaults('/v1/models', ['503-html', '503-html']);
		const failure = (await client()).json({ path: '/v1/models', retry: { ...fastRetry, maxRetries: 1 } });
		await expect(failure).rejects.toThrow(/^The gateway failed to answer \(HTTP 503\): it answered with an HTML error page/);
		await expect(failure).rejects.not.toThrow(/<html|<body/);
	});

	it('honours Retry-After', async () => {
		env.gateway.queueFaults('/v1/models', ['429-retry-after:1']);
		await (await client()).json({ path: '/v1/models', retry: fastRetry });
		const [first, second] = apiRequests('/v1/models');
		expect(second.time - first.time).toBeGreaterThanOrEqual(950);
	});

	it('never retries other 4xx, nor an unknown model', async () => {
		const gw = await client();
		await expect(gw.json({ path: '/v1/video/generations/no-such-task', retry: fastRetry })).rejects.toThrow(/^Not found \(HTTP 404\): "task_not_exist"/);
		expect(apiRequests('/v1/video/generations/no-such-task')).toHaveLength(1);
		await expect(
			gw.json({ path: '/v1/chat/completions', body: { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }, retry: fastRetry }),
		).rejects.toThrow(/^Unknown model: .*\(HTTP 503\): "No available channel for model no-such-model.*\(code model_not_found\)/);
		expect(apiRequests('/v1/chat/completions')).toHaveLength(1);
	});

	it('holds the whole batch back after a 429 (shared backoff)', async () => {
		env.gateway.queueFaults('/v1/models', ['429-retry-after:1']);
		const gw = await client();
		const first = gw.json({ path: '/v1/models', retry: fastRetry });
		await new Promise((resolve) => setTimeout(resolve, 100)); // the 429 has been answered
		const started = Date.now();
		await gw.json({ path: '/v1/models', retry: fastRetry }); // a different "item" of the same run
		await first;
		const requests = apiRequests('/v1/models');
		expect(requests).toHaveLength(3);
		// Nothing was sent during the hold, not even the other item's first attempt.
		expect(requests[1].time - requests[0].time).toBeGreaterThanOrEqual(950);
		expect(requests[1].time).toBeGreaterThanOrEqual(started);
	});
});

describe('errors and the key', () => {
	it('translates a refused key and never repeats it', async () => {
		const badKey = 'sk-invalid-0123456789SECRET';
		const failure = (await client({ apiKey: badKey })).json({ path: '/v1/models' });
		await expect(failure).rejects.toThrow(/^Authentication failed: the gateway refused the API key \(HTTP 401\)/);
		const error = await failure.catch((e) => e);
		expect(JSON.stringify({ message: error.message, description: error.description, context: error.context })).not.toContain(badKey);
	});

	it('translates a quota refusal', async () => {
		await expect((await client({ apiKey: 'sk-noquota-1' })).json({ path: '/v1/models' })).rejects.toThrow(/^No quota: .*\(HTTP 403\): "user quota is not enough/);
	});

	it('names a refused connection without leaking the request', async () => {
		const failure = (await client({ baseUrl: 'http://127.0.0.1:9' })).json({ path: '/v1/models', retry: false, what: 'Listing the models' });
		await expect(failure).rejects.toThrow('Listing the models failed: the connection was refused (is the Base URL right?)');
	});

	it('times out with a plain message', async () => {
		env.gateway.queueFaults('/v1/models', ['slow:1500']);
		await expect((await client()).json({ path: '/v1/models', timeoutMs: 200, retry: false })).rejects.toThrow(/timed out/);
	});

	it('stops at once when the execution is cancelled', async () => {
		const controller = new AbortController();
		env.gateway.queueFaults('/v1/models', ['429-retry-after:30']);
		const gw = await client({ abortSignal: controller.signal });
		const failure = gw.json({ path: '/v1/models' });
		await new Promise((resolve) => setTimeout(resolve, 150));
		const cancelledAt = Date.now();
		controller.abort();
		await expect(failure).rejects.toThrow('was cancelled');
		expect(Date.now() - cancelledAt).toBeLessThan(1000);
		expect(apiRequests('/v1/models')).toHaveLength(1);
	});
});
