// The loopback gateway's own machinery: fault injection (JS API and control endpoint), the
// request log, delays, authentication, unknown routes and the command-line launcher.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { TEST_KEY, gatewayClient, useGateway } from '../gateway/testing';
import { BUSY_MARGIN_MS } from '../helpers/busy';

const env = useGateway();

const status = async (response: Promise<Response>) => (await response).status;

describe('faults', () => {
	it('serves each fault kind once per matching request, in order, then answers normally', async () => {
		env.gateway.queueFaults('/v1/models', ['429', '429-retry-after:7', '502-html', '503-html', '504-html', '500-json']);
		const bare = await env.api.get('/v1/models');
		expect([bare.status, bare.headers.get('retry-after'), await bare.text()]).toEqual([429, null, '']);
		const later = await env.api.get('/v1/models');
		expect([later.status, later.headers.get('retry-after')]).toEqual([429, '7']);
		for (const code of [502, 503, 504]) {
			const page = await env.api.get('/v1/models');
			expect(page.status).toBe(code);
			expect(page.headers.get('content-type')).toBe('text/html');
			expect(await page.text()).toMatch(new RegExp(`<title>${code} .*</title>[\\s\\S]*<center>nginx</center>`));
		}
		const json = await env.api.get('/v1/models');
		expect(json.status).toBe(500);
		expect(await json.json()).toEqual({
			error: { message: expect.stringMatching(/ \(request id: \w+\)$/), type: 'new_api_error', code: 'bad_response_status_code' },
		});
		expect(await status(env.api.get('/v1/models'))).toBe(200);
	});

	it('drops the connection on reset and waits on slow:MS', async () => {
		env.gateway.queueFaults('/v1/models', ['reset', 'slow:150']);
		await expect(env.api.get('/v1/models')).rejects.toThrow();
		const started = Date.now();
		expect(await status(env.api.get('/v1/models'))).toBe(200);
		expect(Date.now() - started).toBeGreaterThanOrEqual(140);
	});

	it('matches by path prefix, longest first, and also on the file host', async () => {
		env.gateway.queueFaults('/v1', ['503-html']);
		env.gateway.queueFaults('/v1/models', ['429']);
		expect(await status(env.api.get('/v1/models'))).toBe(429);
		expect(await status(env.api.get('/v1/models'))).toBe(503);
		expect(await status(env.api.get('/v1/models'))).toBe(200);

		env.gateway.queueFaults('/files/', ['502-html']);
		const image = await env.api.post('/v1/images/generations', { model: 'img-image-2', prompt: 'x' });
		const { data } = (await image.json()) as { data: Array<{ url: string }> };
		expect((await fetch(data[0].url)).status).toBe(502);
		expect((await fetch(data[0].url)).status).toBe(200);
	});

	it('formats 500-json natively on /v1/messages', async () => {
		env.gateway.queueFaults('/v1/messages', ['500-json']);
		const response = await env.api.post('/v1/messages', {});
		expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'new_api_error' } });
	});

	it('refuses unknown fault kinds', () => {
		expect(() => env.gateway.queueFaults('/v1/models', ['418' as never])).toThrow(/unknown fault "418"/);
		expect(() => env.gateway.queueFaults('v1', ['429'])).toThrow(/path/);
	});

	it('is reachable over POST /__control/faults and /__control/reset, without auth', async () => {
		const control = gatewayClient(env.gateway.baseUrl, null);
		const queued = await control.post('/__control/faults', { path: '/v1/chat/completions', faults: ['429', '502-html'] });
		expect(await queued.json()).toEqual({ ok: true, queued: 2 });
		expect((await control.post('/__control/faults', { path: '/v1', faults: ['nope'] })).status).toBe(400);
		expect(await status(env.api.post('/v1/chat/completions', {}))).toBe(429);
		expect(env.gateway.requests).toHaveLength(1); // control traffic is not logged

		expect((await control.post('/__control/reset', {})).status).toBe(200);
		expect(env.gateway.requests).toHaveLength(0);
		expect(await status(env.api.post('/v1/chat/completions', {}))).toBe(400); // the 502 was forgotten
	});

	it('serves the request log and options over the control endpoint', async () => {
		const control = gatewayClient(env.gateway.baseUrl, null);
		await env.api.get('/v1/models?x=1');
		const log = (await (await control.get('/__control/requests')).json()) as Array<Record<string, unknown>>;
		expect(log).toEqual([expect.objectContaining({ server: 'api', path: '/v1/models', query: { x: '1' } })]);
		expect(await (await control.post('/__control/options', { delayMs: 5 })).json()).toMatchObject({ options: { delayMs: 5 } });
		expect((await control.post('/__control/options', { delayMs: -1 })).status).toBe(400);
	});
});

describe('request log, delay and routing', () => {
	it('records both servers with lower-cased headers and exact raw bodies', async () => {
		const raw = '{"model": "img-image-2",   "prompt": "spacing kept"}';
		const answer = await env.api.post('/v1/images/generations', raw, { headers: { 'X-Custom': 'Yes' } });
		const { data } = (await answer.json()) as { data: Array<{ url: string }> };
		await fetch(data[0].url);
		const [call, download] = env.gateway.requests;
		expect(call).toMatchObject({ server: 'api', method: 'POST', path: '/v1/images/generations', rawBody: raw, time: expect.any(Number) });
		expect(call.headers).toMatchObject({ authorization: `Bearer ${TEST_KEY}`, 'x-custom': 'Yes', 'content-type': 'application/json' });
		expect(download).toMatchObject({ server: 'files', method: 'GET', rawBody: '' });
		expect(download.headers.authorization).toBeUndefined();
	});

	it('delays API answers by delayMs but not file downloads; reset restores the options', async () => {
		const image = await env.api.post('/v1/images/generations', { model: 'img-image-2', prompt: 'x' });
		const url = ((await image.json()) as { data: Array<{ url: string }> }).data[0].url;
		// a delay longer than a busy machine's slowest answer: an answer faster than it was not delayed
		const delayMs = BUSY_MARGIN_MS;
		env.gateway.setOptions({ delayMs });
		let started = Date.now();
		await env.api.get('/v1/models');
		expect(Date.now() - started).toBeGreaterThanOrEqual(delayMs - 10);
		started = Date.now();
		await fetch(url);
		expect(Date.now() - started).toBeLessThan(delayMs);
		env.gateway.reset();
		started = Date.now();
		await env.api.get('/v1/models');
		expect(Date.now() - started).toBeLessThan(delayMs);
		expect(() => env.gateway.setOptions({ videoPollsToFinish: 0 })).toThrow(/videoPollsToFinish/);
	});

	it('needs a well-formed bearer sk- key', async () => {
		const tries = [null, 'Basic abc', 'Bearer', 'Bearer abc', 'Bearer sk-'];
		for (const header of tries) {
			const response = await fetch(`${env.gateway.baseUrl}/v1/models`, header ? { headers: { authorization: header } } : {});
			expect(response.status).toBe(401);
			expect(await response.json()).toMatchObject({ error: { type: 'new_api_error', message: expect.stringContaining('(request id: ') } });
			expect(response.headers.get('x-oneapi-request-id')).toMatch(/^\d{17}[0-9a-f]{8}$/);
		}
		expect(await status(fetch(`${env.gateway.baseUrl}/v1/models`, { headers: { authorization: 'bearer sk-lower' } }))).toBe(200);
	});

	it('answers 404 JSON for unknown routes and invalid JSON with a 400', async () => {
		const missing = await env.api.get('/v2/anything');
		expect([missing.status, await missing.json()]).toEqual([
			404,
			{ error: { message: 'Invalid URL (GET /v2/anything)', type: 'invalid_request_error', param: null, code: null } },
		]);
		expect(await status(env.api.get('/v1/chat/completions'))).toBe(404);
		const broken = await env.api.post('/v1/chat/completions', '{"model":');
		expect([broken.status, ((await broken.json()) as { error: { type: string } }).error.type]).toEqual([400, 'invalid_request_error']);
	});
});

describe('command line', () => {
	it('prints its URLs as one JSON line and stops on SIGTERM', async () => {
		const child = spawn(process.execPath, [join(__dirname, '..', 'gateway', 'cli.js'), '--port', '0', '--delay-ms', '1'], {
			stdio: ['ignore', 'pipe', 'inherit'],
		});
		const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
		const urls = JSON.parse(line) as { baseUrl: string; fileBaseUrl: string };
		expect(urls.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
		expect(urls.fileBaseUrl).not.toBe(urls.baseUrl);
		expect(await status(gatewayClient(urls.baseUrl).get('/v1/models'))).toBe(200);
		child.kill('SIGTERM');
		const [code] = await once(child, 'exit');
		expect(code).toBe(0);
	});
});
