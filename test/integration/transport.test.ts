/**
 * The one transport against the loopback gateway: URL forms, retries and their budget, the
 * batch-wide backoff, error classification, deadlines, cancel, and the key never leaking (the
 * transport raises GatewayErrors; the edge, asNodeError, masks them once).
 */
import * as http from 'http';
import type { AddressInfo } from 'net';

import { asNodeError } from '../../nodes/shared/failures/edge';
import { GatewayError } from '../../nodes/shared/failures/errors';
import { GatewayClient } from '../../nodes/shared/wire/transport';
import { useGateway } from '../gateway/testing';
import { BUSY_MARGIN_MS, eventually } from '../helpers/busy';
import { createExecuteContext } from '../helpers/executeContext';
import { failureOf } from '../helpers/failures';

const KEY = 'sk-integration-transport-0123456789';
const fastRetry = { baseDelayMs: 20, maxDelayMs: 100 };
// One loopback gateway for the file, with a clean log and state before each test.
const env = useGateway();

/** Once the gateway has had `count` requests for the models, and a moment for its answer to come back. */
async function answered(count: number) {
	expect(await eventually(() => apiRequests('/v1/models').length >= count)).toBe(true);
	await new Promise((resolve) => setTimeout(resolve, 100));
}

async function client(options: { baseUrl?: string; apiKey?: string; abortSignal?: AbortSignal; customHeaders?: string } = {}) {
	const { ctx } = createExecuteContext({
		parameters: {},
		credentials: { apiKey: options.apiKey ?? KEY, baseUrl: options.baseUrl ?? env.gateway.baseUrl, customHeaders: options.customHeaders },
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

	it("sends the credential's custom headers with it, never in place of the key", async () => {
		await (await client({ customHeaders: '{"x-portkey-provider": "openai", "x-trace-id": "42"}' })).json({ path: '/v1/models', headers: { 'X-Trace-Id': 'call' } });
		const [request] = apiRequests('/v1/models');
		expect(request.headers).toMatchObject({ authorization: `Bearer ${KEY}`, 'x-portkey-provider': 'openai', 'x-trace-id': '42' });
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
		const error = await failureOf((await client()).json({ path: '/v1/models', retry: { ...fastRetry, maxRetries: 2, maxRateLimitRetries: 2 }, what: 'Listing the models' }));
		expect(error.kind).toBe('rate_limit');
		// What was waited, not merely that waiting did not help.
		expect(error.fullMessage).toMatch(/^Listing the models failed: the gateway asked to slow down \(rate limit\); 3 tries in [0-9.]+ s, and waiting did not help \(HTTP 429\)$/);
		expect(apiRequests('/v1/models')).toHaveLength(3);
	});

	it('summarises an HTML error page once retries are spent', async () => {
		env.gateway.queueFaults('/v1/models', ['503-html', '503-html']);
		const error = await failureOf((await client()).json({ path: '/v1/models', retry: { ...fastRetry, maxRetries: 1 }, what: 'Listing the models' }));
		expect(error.kind).toBe('server');
		expect(error.fullMessage).toMatch(/^Listing the models failed: the gateway reported a failure: it answered with an HTML page \("503 Service Temporarily Unavailable"\); 2 tries in [0-9.]+ s, and waiting did not help \(HTTP 503\)$/);
		expect(error.fullMessage).not.toMatch(/<html|<body/);
		expect(error.hint).toMatch(/proxy/);
	});

	it('honours Retry-After', async () => {
		env.gateway.queueFaults('/v1/models', ['429-retry-after:1']);
		await (await client()).json({ path: '/v1/models', retry: fastRetry });
		const [first, second] = apiRequests('/v1/models');
		expect(second.time - first.time).toBeGreaterThanOrEqual(950);
	});

	it('never retries other 4xx, nor an unknown model', async () => {
		const gw = await client();
		const notFound = await failureOf(gw.json({ path: '/v1/video/generations/no-such-task', retry: fastRetry, what: 'Checking the task' }));
		expect(notFound.kind).toBe('not_found');
		expect(notFound.fullMessage).toMatch(/^Checking the task failed: the gateway does not know this address or item \(HTTP 404\): "task_not_exist"/);
		expect(apiRequests('/v1/video/generations/no-such-task')).toHaveLength(1);
		const unknownModel = await failureOf(
			gw.json({ path: '/v1/chat/completions', body: { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }, retry: fastRetry, what: 'The chat request' }),
		);
		expect(unknownModel.kind).toBe('unknown_model');
		expect(unknownModel.fullMessage).toMatch(
			/^The chat request failed: the gateway has no channel for this model \(HTTP 503\): "No available channel for model no-such-model.*\(code model_not_found\)$/,
		);
		expect(apiRequests('/v1/chat/completions')).toHaveLength(1);
	});

	it('holds the whole batch back after a 429 (shared backoff)', async () => {
		env.gateway.queueFaults('/v1/models', ['429-retry-after:1']);
		const gw = await client();
		const first = gw.json({ path: '/v1/models', retry: fastRetry });
		await answered(1); // the 429 has been answered
		const started = Date.now();
		await gw.json({ path: '/v1/models', retry: fastRetry }); // a different "item" of the same run
		await first;
		const requests = apiRequests('/v1/models');
		expect(requests).toHaveLength(3);
		// Nothing was sent during the hold, not even the other item's first attempt.
		expect(requests[1].time - requests[0].time).toBeGreaterThanOrEqual(950);
		expect(requests[1].time).toBeGreaterThanOrEqual(started);
	});

	it('a call that waits alone (retryAfterHoldsCallOnly) waits out its Retry-After by itself: the others go on, and the pace is not cut', async () => {
		env.gateway.queueFaults('/v1/models', ['429-retry-after:5']);
		const gw = await client();
		const first = gw.json({ path: '/v1/models', retry: fastRetry, retryAfterHoldsCallOnly: true });
		await answered(1); // the 429 has been answered
		const started = Date.now();
		await gw.json({ path: '/v1/models', retry: fastRetry, retryAfterHoldsCallOnly: true }); // another item, not held
		const otherMs = Date.now() - started;
		await first;
		const requests = apiRequests('/v1/models');
		expect(requests).toHaveLength(3);
		// held, it would have waited most of the 5 s
		expect(otherMs).toBeLessThan(BUSY_MARGIN_MS);
		// the refused one itself waited its Retry-After
		expect(requests[2].time - requests[0].time).toBeGreaterThanOrEqual(4950);
		expect(gw.pace.requestsPerSecond).toBe(Number.POSITIVE_INFINITY);
	});
});

describe('the run scope and the words of a paid request', () => {
	it('a Stop during a wait after a 429 says the request was refused, not that it may have acted', async () => {
		env.gateway.queueFaults('/v1/video/generations', ['429-retry-after:5']);
		const stop = new AbortController();
		const gw = await client({ abortSignal: stop.signal });
		const call = failureOf(gw.json({ path: '/v1/video/generations', body: { model: 'm', prompt: 'p' }, retry: { idempotent: false }, what: 'Submitting the video task' }));
		setTimeout(() => stop.abort(), 300);
		const error = await call;
		expect(error.kind).toBe('cancelled');
		expect(error.mayHaveActed).toBe(false);
	});

	it('close() ends every pending wait at once, and nothing is sent after it', async () => {
		env.gateway.queueFaults('/v1/models', ['429-retry-after:30']);
		const gw = await client();
		const call = failureOf(gw.json({ path: '/v1/models', what: 'Listing the models' }));
		await answered(1);
		const closedAt = Date.now();
		gw.close();
		const error = await call;
		expect(error.kind).toBe('cancelled');
		expect(error.headline).toBe('Listing the models was stopped: the run had ended');
		expect(Date.now() - closedAt).toBeLessThan(BUSY_MARGIN_MS);
		await failureOf(gw.json({ path: '/v1/models' }));
		await new Promise((resolve) => setTimeout(resolve, 3500));
		expect(apiRequests('/v1/models')).toHaveLength(1);
	});

	it('a paid request dropped after sending says "may have gone through" once, and that it was not sent again', async () => {
		env.gateway.queueFaults('/v1/images/generations', ['reset']);
		const error = await failureOf((await client()).json({ path: '/v1/images/generations', body: { model: 'img-image-2', prompt: 'p' }, retry: { idempotent: false }, what: 'Generating the images' }));
		expect(error.hint).toBe('The request may have gone through even so: it was not sent again, so as not to pay twice.');
		expect(apiRequests('/v1/images/generations')).toHaveLength(1);
	});

	it('a refused paid request says nothing of having gone through', async () => {
		const error = await failureOf(
			(await client()).json({ path: '/v1/chat/completions', body: { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }, retry: { idempotent: false }, what: 'The chat request' }),
		);
		expect(error.mayHaveActed).toBe(false);
		expect(error.hint).toBe('Pick a model from the list, or check the model id for typos.');
	});
});

describe('errors and the key', () => {
	it('classifies a refused key and never repeats it', async () => {
		const badKey = 'sk-invalid-0123456789SECRET';
		const gw = await client({ apiKey: badKey });
		const error = await failureOf(gw.json({ path: '/v1/models', what: 'Listing the models' }));
		expect(error.kind).toBe('auth');
		expect(error.fullMessage).toMatch(/^Listing the models failed: the gateway refused the API key \(HTTP 401\)/);
		const nodeError = asNodeError(gw.node, error, 0, gw.masker);
		const shown = JSON.stringify({ message: nodeError.message, description: nodeError.description, context: nodeError.context, stack: nodeError.stack });
		expect(shown).toContain('the gateway refused the API key');
		expect(shown).not.toContain(badKey.slice(3));
		expect(JSON.stringify({ message: error.message, stack: error.stack })).not.toContain(badKey.slice(3));
	});

	it('classifies a quota refusal', async () => {
		const error = await failureOf((await client({ apiKey: 'sk-noquota-1' })).json({ path: '/v1/models', what: 'Listing the models' }));
		expect(error.kind).toBe('quota');
		expect(error.fullMessage).toMatch(/^Listing the models failed: the gateway refused the request for lack of quota or permission \(HTTP 403\): "user quota is not enough/);
	});

	it('names a refused connection without leaking the request', async () => {
		const gw = await client({ baseUrl: 'http://127.0.0.1:9' });
		const error = await failureOf(gw.json({ path: '/v1/models', retry: false, what: 'Listing the models' }));
		expect(error.kind).toBe('network');
		expect(error.fullMessage).toBe('Listing the models failed: the connection to 127.0.0.1:9 was refused');
		expect(error.hint).toBe('Nothing answers at 127.0.0.1:9. Check the address and that the server is running.');
		expect(error.mayHaveActed).toBe(false);
		const nodeError = asNodeError(gw.node, error, 0, gw.masker);
		expect(JSON.stringify({ ...nodeError, message: nodeError.message, stack: nodeError.stack })).not.toContain(KEY.slice(3));
	});

	it('ends a slow answer at its deadline, with a plain message', async () => {
		env.gateway.queueFaults('/v1/models', ['slow:10000']);
		const started = Date.now();
		const error = await failureOf((await client()).json({ path: '/v1/models', deadlineMs: 1000, retry: false, what: 'Listing the models' }));
		expect(error.kind).toBe('timeout');
		expect(error.fullMessage).toBe('Listing the models failed: no complete answer within 1 s');
		expect(Date.now() - started).toBeLessThan(1000 + BUSY_MARGIN_MS);
	});

	it('does not send a request again once it used up its deadline', async () => {
		env.gateway.queueFaults('/v1/models', ['slow:3000']);
		const error = await failureOf((await client()).json({ path: '/v1/models', deadlineMs: 1000, retry: fastRetry }));
		expect(error.kind).toBe('timeout');
		expect(apiRequests('/v1/models')).toHaveLength(1);
	});

	it('does not start an attempt or a retry wait beyond notAfter', async () => {
		env.gateway.queueFaults('/v1/models', ['429-retry-after:30']);
		const started = Date.now();
		const error = await failureOf((await client()).json({ path: '/v1/models', notAfter: Date.now() + 1000, retry: fastRetry }));
		expect(error.kind).toBe('rate_limit');
		expect(Date.now() - started).toBeLessThan(1000 + BUSY_MARGIN_MS);
		expect(apiRequests('/v1/models')).toHaveLength(1);
	});

	it('stops at once when the execution is cancelled', async () => {
		const controller = new AbortController();
		env.gateway.queueFaults('/v1/models', ['429-retry-after:30']);
		const gw = await client({ abortSignal: controller.signal });
		const failure = gw.json({ path: '/v1/models' });
		await answered(1);
		const cancelledAt = Date.now();
		controller.abort();
		const error = await failureOf(failure);
		expect(error.kind).toBe('cancelled');
		expect(error.fullMessage).toBe('The gateway request was cancelled');
		expect(Date.now() - cancelledAt).toBeLessThan(BUSY_MARGIN_MS);
		expect(apiRequests('/v1/models')).toHaveLength(1);
	});
});
