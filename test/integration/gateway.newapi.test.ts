// The loopback gateway's new-api mode over HTTP: each answer as new-api writes it (test/gateway/README.md,
// "The new-api mode", names the source of each), and the default mode left as it was.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startGateway } from '../gateway';
import { TEST_KEY, gatewayClient, pollVideoTask, submitVideoTask, useGateway, videoTaskStates } from '../gateway/testing';

const env = useGateway({ flavor: 'newapi' });

const REQUEST_ID = /^(.*) \(request id: \w+\)$/;
const withId = (message: string) => expect.stringMatching(new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(request id: \\w+\\)$`));
const client = (key: string | null) => gatewayClient(env.gateway.baseUrl, key);
const answer = async (response: Promise<Response>) => {
	const res = await response;
	const text = await res.text();
	return { status: res.status, type: res.headers.get('content-type'), text, json: /json/.test(res.headers.get('content-type') ?? '') ? JSON.parse(text) : undefined };
};

const CHAT = { model: 'chat-sonnet-5', messages: [{ role: 'user', content: 'hi' }] };
const MESSAGES = { model: 'chat-sonnet-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] };
const IMAGE = { model: 'img-image-2', prompt: 'a red fox' };
const VIDEO = { model: 'video-2-0-fast-260128', prompt: 'a paper boat', seconds: '5' };
const RELAY_POSTS: Array<[string, object]> = [
	['/v1/chat/completions', CHAT],
	['/v1/messages', MESSAGES],
	['/v1/images/generations', IMAGE],
	['/v1/video/generations', VIDEO],
];

const tokenRefusal = { error: { message: withId('Invalid token'), type: 'new_api_error', code: '' } };

describe('the token check: one 401 in the middleware shape on every relay path', () => {
	it.each(RELAY_POSTS)('%s without a key', async (path, body) => {
		expect(await answer(client(null).post(path, body))).toMatchObject({ status: 401, json: tokenRefusal });
	});

	it.each(['sk-invalid-1', 'sk-exhausted-1', 'sk-expired-1', 'not-a-key'])('key %s, also on the status and model routes', async (key) => {
		for (const response of [client(key).post('/v1/messages', MESSAGES), client(key).get('/v1/video/generations/task_x'), client(key).get('/v1/models')]) {
			const { status, json } = await answer(response);
			expect([status, json]).toEqual([401, tokenRefusal]);
		}
	});

	it('x-api-key stands for Authorization on /v1/messages and /v1/models only', async () => {
		const bare = { 'x-api-key': TEST_KEY };
		expect((await answer(client(null).post('/v1/messages', MESSAGES, { headers: bare }))).status).toBe(200);
		expect((await answer(client('sk-invalid-2').get('/v1/models', { headers: bare }))).status).toBe(200);
		expect(await answer(client(null).post('/v1/chat/completions', CHAT, { headers: bare }))).toMatchObject({ status: 401, json: tokenRefusal });
	});
});

describe('the channel choice', () => {
	it.each(RELAY_POSTS)('%s, unknown model: 503 model_not_found in the middleware shape', async (path, body) => {
		const { status, json } = await answer(env.api.post(path, { ...body, model: 'gpt-nothing' }));
		expect(status).toBe(503);
		expect(json).toEqual({ error: { message: withId('No available channel for model gpt-nothing under group default (distributor)'), type: 'new_api_error', code: 'model_not_found' } });
	});

	it('no model: a 400 on chat, messages and videos; images are routed as dall-e', async () => {
		for (const [path, body] of RELAY_POSTS.filter(([p]) => p !== '/v1/images/generations')) {
			const { status, json } = await answer(env.api.post(path, { ...body, model: undefined }));
			expect([path, status, json]).toEqual([path, 400, { error: { message: withId('Model name not specified, model name cannot be empty'), type: 'new_api_error', code: '' } }]);
		}
		const image = await answer(env.api.post('/v1/images/generations', { prompt: 'x' }));
		expect([image.status, image.json.error.message]).toEqual([503, expect.stringMatching(/^No available channel for model dall-e under group default/)]);
	});

	it('a body that is not JSON: its reader\'s words, twice', async () => {
		const { status, json } = await answer(env.api.post('/v1/chat/completions', '{"model":'));
		expect(status).toBe(400);
		expect(json.error).toEqual({ message: expect.stringMatching(/^Invalid request: Invalid request: .+ \(request id: \w+\)$/), type: 'new_api_error', code: '' });
	});
});

describe('image edits: what a real new-api build answered (checked by hand, 9f8a4ec0)', () => {
	const form = (parts: string[]) => `${parts.map((part) => `--b0undary\r\n${part}\r\n`).join('')}--b0undary--\r\n`;
	const post = (body: string) => answer(env.api.post('/v1/images/edits', body, { headers: { 'content-type': 'multipart/form-data; boundary=b0undary' } }));
	const text = (name: string, value: string) => `Content-Disposition: form-data; name="${name}"\r\n\r\n${value}`;

	it('a form its distributor cannot read: no model found, 400', async () => {
		const cut = form([text('model', 'img-image-2')]).slice(0, -16);
		const { status, json } = await post(cut);
		expect([status, json]).toEqual([400, { error: { message: withId('Model name not specified, model name cannot be empty'), type: 'new_api_error', code: '' } }]);
	});

	it('a form with no image: refused while new-api converts it for the channel, 500 convert_request_failed', async () => {
		const { status, json } = await post(form([text('model', 'img-image-2'), text('prompt', 'add a hat')]));
		expect([status, json.error]).toEqual([500, expect.objectContaining({ message: withId('image is required'), code: 'convert_request_failed', type: 'new_api_error' })]);
	});
});

describe('the relay\'s own refusals, in each route\'s format', () => {
	const WALLET = '用户额度不足, 剩余额度: ＄0.000000';

	it('a key whose user has no quota: 403 insufficient_user_quota after the model is routed', async () => {
		const noquota = client('sk-noquota-1');
		expect(await answer(noquota.post('/v1/chat/completions', CHAT))).toMatchObject({
			status: 403,
			json: { error: { message: withId(WALLET), type: 'new_api_error', param: '', code: 'insufficient_user_quota' } },
		});
		expect(await answer(noquota.post('/v1/messages', MESSAGES))).toMatchObject({ status: 403, json: { type: 'error', error: { type: 'new_api_error', message: withId(WALLET) } } });
		expect(await answer(noquota.post('/v1/video/generations', VIDEO))).toMatchObject({ status: 403, json: { code: 'insufficient_user_quota', message: WALLET, data: null } });
		expect((await answer(noquota.post('/v1/images/generations', { ...IMAGE, model: 'gpt-nothing' }))).status).toBe(503);
	});

	it('a video submit without a prompt: new-api\'s own task error', async () => {
		expect(await answer(env.api.post('/v1/video/generations', { ...VIDEO, prompt: ' ' }))).toMatchObject({ status: 400, json: { code: 'invalid_request', message: 'prompt is required', data: null } });
	});

	it('the upstream\'s refusal: passed through on chat and messages, param a string; wrapped as fail_to_fetch_task on a video submit', async () => {
		const chat = await answer(env.api.post('/v1/chat/completions', { ...CHAT, max_tokens: 999999 }));
		expect(chat.status).toBe(400);
		expect(chat.json).toEqual({ error: { message: expect.stringMatching(/^max_tokens is too large: 999999\. /), type: 'invalid_request_error', param: 'max_tokens', code: 'invalid_value' } });
		expect(chat.json.error.message).not.toMatch(REQUEST_ID);
		const messages = await answer(env.api.post('/v1/messages', { ...MESSAGES, max_tokens: undefined }));
		expect(messages).toMatchObject({ status: 400, json: { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } } });
		const video = await answer(env.api.post('/v1/video/generations', { ...VIDEO, seconds: 'five' }));
		expect(video.status).toBe(400);
		expect(video.json).toEqual({ code: 'fail_to_fetch_task', message: expect.any(String), data: null });
		expect(JSON.parse(video.json.message)).toMatchObject({ error: { param: 'seconds', type: 'invalid_request_error' } });
	});
});

describe('paths it does not serve', () => {
	it.each(['/v1/nothing', '/api/nothing', '/assets/app.js', '/v1'])('GET %s: the JSON 404, no key needed', async (path) => {
		const { status, json } = await answer(client(null).get(path));
		expect([status, json]).toEqual([404, { error: { message: `Invalid URL (GET ${path})`, type: 'invalid_request_error', param: '', code: '' } }]);
	});

	it.each([
		['GET', '/'],
		['GET', '/console/token'],
		['POST', '/chat/completions'],
		['POST', '/video/generations'],
		['DELETE', '/anything'],
	])('%s %s: its web page with 200', async (method, path) => {
		const res = await fetch(env.gateway.baseUrl + path, { method, headers: { authorization: `Bearer ${TEST_KEY}` }, body: method === 'POST' ? '{}' : undefined });
		expect([res.status, res.headers.get('content-type'), res.headers.get('cache-control')]).toEqual([200, 'text/html; charset=utf-8', 'no-cache']);
		expect(await res.text()).toMatch(/<title>New API<\/title>[\s\S]*<div id="root"><\/div>/);
	});

	it('an unknown task id: 400 task_not_exist', async () => {
		const { status, json } = await answer(env.api.get('/v1/video/generations/task_nothing'));
		expect([status, json]).toEqual([400, { code: 'task_not_exist', message: 'task_not_exist', data: null }]);
	});

	it('an unknown model id: its error body with HTTP 200; a known one as usual', async () => {
		const unknown = await answer(env.api.get('/v1/models/gpt-nothing'));
		expect([unknown.status, unknown.json]).toEqual([200, { error: { message: "The model 'gpt-nothing' does not exist", type: 'invalid_request_error', param: 'model', code: 'model_not_found' } }]);
		expect((await answer(env.api.get('/v1/models/chat-sonnet-5'))).json).toMatchObject({ id: 'chat-sonnet-5', object: 'model' });
	});

	it('the plant store keeps its own answers', async () => {
		const { status, json } = await answer(env.api.post('/plants', { id: 1 }));
		expect([status, json.error]).toEqual([400, 400]);
	});
});

// ---------------------------------------------------------------------------------------------

type TaskRecord = Record<string, unknown> & { status: string; progress: string; result_url?: string; fail_reason: string };

const submit = (body: object = VIDEO) => submitVideoTask(env.api, body);
const poll = (taskId: string) => pollVideoTask<TaskRecord>(env.api, taskId);
const states = (taskId: string, polls: number) => videoTaskStates(env.api, taskId, polls);

describe('video tasks', () => {
	it('the submit answer, then NOT_START and SUBMITTED before SUCCESS (three polls)', async () => {
		const res = await env.api.post('/v1/video/generations', VIDEO);
		const created = (await res.json()) as Record<string, unknown>;
		expect(created).toEqual({ id: created.task_id, task_id: expect.stringMatching(/^task_\w+$/), object: 'video', model: VIDEO.model, status: 'queued', progress: 0, created_at: expect.any(Number) });
		const taskId = created.task_id as string;
		expect(await states(taskId, 2)).toEqual(['NOT_START 0%', 'SUBMITTED 10%']);
		const done = await poll(taskId);
		expect(done).toEqual({
			id: 1,
			created_at: created.created_at,
			updated_at: expect.any(Number),
			task_id: taskId,
			platform: '55',
			user_id: 1,
			group: 'default',
			channel_id: 1,
			quota: 175000,
			action: 'textGenerate',
			status: 'SUCCESS',
			fail_reason: '',
			result_url: `${env.gateway.fileBaseUrl}/files/videos/${taskId}.mp4`,
			submit_time: created.created_at,
			start_time: expect.any(Number),
			finish_time: expect.any(Number),
			progress: '100%',
			properties: { input: '', upstream_model_name: VIDEO.model, origin_model_name: VIDEO.model },
			data: created,
		});
		expect((await fetch(done.result_url as string)).status).toBe(200);
	});

	it('every state in order when the task runs longer', async () => {
		env.gateway.setOptions({ videoPollsToFinish: 6 });
		const taskId = await submit();
		expect(await states(taskId, 6)).toEqual(['NOT_START 0%', 'SUBMITTED 10%', 'QUEUED 20%', 'IN_PROGRESS 30%', 'IN_PROGRESS 30%', 'SUCCESS 100%']);
	});

	it('a running record has no result_url; a failed one carries its failure sentence there and in fail_reason', async () => {
		const taskId = await submit({ ...VIDEO, prompt: 'a boat [fail]' });
		const running = await poll(taskId);
		expect(running).not.toHaveProperty('result_url');
		expect(running.fail_reason).toBe('');
		await poll(taskId);
		const failed = await poll(taskId);
		expect(failed).toMatchObject({ status: 'FAILURE', progress: '100%', fail_reason: 'content policy violation: the prompt was rejected by the safety system' });
		expect(failed.result_url).toBe(failed.fail_reason);
	});

	it('a first frame makes the action generate; [same-origin] gives new-api\'s own proxy link', async () => {
		const taskId = await submit({ ...VIDEO, prompt: 'a boat [same-origin]', image: 'https://example.com/frame.png' });
		await states(taskId, 2);
		expect(await poll(taskId)).toMatchObject({ action: 'generate', result_url: `${env.gateway.baseUrl}/v1/videos/${taskId}/content` });
	});

	it('[never] stays IN_PROGRESS at 30%', async () => {
		const taskId = await submit({ ...VIDEO, prompt: 'a boat [never]' });
		expect((await states(taskId, 8)).slice(3)).toEqual(Array(5).fill('IN_PROGRESS 30%'));
	});
});

// ---------------------------------------------------------------------------------------------

const usageOf = async (key = TEST_KEY) => {
	const res = await client(key).get('/api/usage/token/');
	expect(res.status).toBe(200);
	const body = (await res.json()) as { code: boolean; message: string; data: Record<string, unknown> };
	expect([body.code, body.message]).toEqual([true, 'ok']);
	return body.data;
};
const dashboard = async (key = TEST_KEY, prefix = '/v1') => ({
	subscription: (await answer(client(key).get(`${prefix}/dashboard/billing/subscription`))).json,
	usage: (await answer(client(key).get(`${prefix}/dashboard/billing/usage`))).json,
});

describe('the key\'s balance', () => {
	it('/api/usage/token/: the key\'s own numbers in quota units', async () => {
		expect(await usageOf()).toEqual({
			object: 'token_usage',
			name: 'loopback',
			total_granted: 25000000,
			total_used: 0,
			total_available: 25000000,
			unlimited_quota: false,
			model_limits: {},
			model_limits_enabled: false,
			expires_at: 0,
		});
	});

	it('paid work moves it: images per image, videos per second, a failed video refunded; chat is free', async () => {
		expect((await env.api.post('/v1/images/generations', { ...IMAGE, n: 2 })).status).toBe(200);
		await submit(); // 5 s of video-2-0-fast at 0.07 USD
		await env.api.post('/v1/chat/completions', CHAT);
		expect(await usageOf()).toMatchObject({ total_used: 40000 + 175000, total_available: 25000000 - 215000, total_granted: 25000000 });
		const failing = await submit({ model: 'video-2-0-260128', prompt: 'x [fail]' }); // 4 s by default at 0.10 USD
		expect(await usageOf()).toMatchObject({ total_used: 215000 + 200000 });
		await states(failing, 3);
		await states(failing, 2); // refunded once, not per poll
		expect(await usageOf()).toMatchObject({ total_used: 215000, total_available: 25000000 - 215000 });
	});

	it('a charge above what is left is refused before any work, and nothing is charged', async () => {
		env.gateway.setOptions({ keyQuota: 30000 });
		const refused = await answer(env.api.post('/v1/images/generations', { ...IMAGE, n: 2 }));
		expect(refused).toMatchObject({
			status: 403,
			json: { error: { message: withId('token quota is not enough, token remain quota: ＄0.060000, need quota: ＄0.080000'), type: 'new_api_error', param: '', code: 'pre_consume_token_quota_failed' } },
		});
		const video = await answer(env.api.post('/v1/video/generations', VIDEO));
		expect(video).toMatchObject({ status: 403, json: { code: 'pre_consume_token_quota_failed', data: null } });
		expect(env.gateway.taskIds()).toEqual([]);
		expect((await env.api.post('/v1/images/generations', IMAGE)).status).toBe(200);
		expect(await usageOf()).toMatchObject({ total_used: 20000, total_available: 10000 });
	});

	it('new-api\'s critical rate limit, when set: that many reads per 20 minutes, then a bare 429 before the key check', async () => {
		env.gateway.setOptions({ criticalRateLimit: 2 });
		await usageOf();
		await usageOf('sk-other-5');
		const limited = await fetch(`${env.gateway.baseUrl}/api/usage/token/`, { headers: { authorization: 'Bearer sk-invalid-5' } });
		expect([limited.status, await limited.text()]).toEqual([429, '']);
		expect((await answer(client(null).get('/api/status'))).status).toBe(200);
		env.gateway.reset();
		await usageOf();
	});

	it('without the slash: gin\'s 301 to it, which fetch follows with the key', async () => {
		const moved = await env.api.get('/api/usage/token?x=1', { redirect: 'manual' });
		expect([moved.status, moved.headers.get('location')]).toEqual([301, '/api/usage/token/?x=1']);
		const followed = await env.api.get('/api/usage/token');
		expect([followed.status, followed.url.endsWith('/api/usage/token/')]).toEqual([200, true]);
	});

	it('its own key check: used-up and expired keys may read their balance, unknown keys may not', async () => {
		expect(await usageOf('sk-exhausted-3')).toMatchObject({ total_granted: 25000000, total_used: 25000000, total_available: 0 });
		expect(await usageOf('sk-expired-3')).toMatchObject({ expires_at: 1767225600 });
		expect(await usageOf('sk-unlimited-3')).toMatchObject({ unlimited_quota: true });
		const refusal = async (headers: Record<string, string>) => answer(fetch(`${env.gateway.baseUrl}/api/usage/token/`, { headers }));
		expect(await refusal({})).toMatchObject({ status: 401, json: { success: false, message: 'Token not provided' } });
		expect(await refusal({ authorization: 'Bearer sk-invalid-3' })).toMatchObject({ status: 401, json: { success: false, message: 'Invalid token' } });
		expect(await refusal({ authorization: TEST_KEY })).toMatchObject({ status: 401, json: { success: false, message: 'Invalid Bearer token' } });
	});

	it('the dashboard pair: granted (not what is left) and used ×100, in the display unit', async () => {
		await env.api.post('/v1/images/generations', { ...IMAGE, n: 5 }); // 0.20 USD
		for (const prefix of ['/v1', '']) {
			expect(await dashboard(TEST_KEY, prefix)).toEqual({
				subscription: { object: 'billing_subscription', has_payment_method: true, soft_limit_usd: 50, hard_limit_usd: 50, system_hard_limit_usd: 50, access_until: 0 },
				usage: { object: 'list', total_usage: 20 },
			});
		}
		env.gateway.setOptions({ quotaDisplayType: 'CNY' });
		expect(await dashboard()).toMatchObject({ subscription: { hard_limit_usd: expect.closeTo(365, 6) }, usage: { total_usage: expect.closeTo(146, 6) } });
		env.gateway.setOptions({ quotaDisplayType: 'TOKENS' });
		expect(await dashboard()).toMatchObject({ subscription: { hard_limit_usd: 25000000 }, usage: { total_usage: 10000000 } });
		expect((await dashboard('sk-unlimited-4')).subscription).toMatchObject({ hard_limit_usd: 100000000 });
		expect((await dashboard('sk-expired-4', '/v1')).subscription).toEqual(tokenRefusal);
		expect((await dashboard('sk-noquota-4')).subscription).toMatchObject({ hard_limit_usd: 25000000 });
	});

	it('/api/status: how many units make one of money, and how the site shows them; no key needed', async () => {
		const status = await answer(client(null).get('/api/status'));
		expect(status).toMatchObject({ status: 200, json: { success: true, message: '' } });
		expect(status.json.data).toMatchObject({ quota_per_unit: 500000, display_in_currency: true, quota_display_type: 'USD', usd_exchange_rate: 7.3, server_address: env.gateway.baseUrl });
		env.gateway.setOptions({ quotaDisplayType: 'TOKENS', quotaPerUnit: 1000 });
		expect((await answer(client(null).get('/api/status'))).json.data).toMatchObject({ quota_per_unit: 1000, display_in_currency: false, quota_display_type: 'TOKENS' });
	});

	it('usageTokenRoute false: /api/usage/token answers as one-api (404), the dashboard pair still does', async () => {
		env.gateway.setOptions({ usageTokenRoute: false });
		const { status, json } = await answer(env.api.get('/api/usage/token/'));
		expect([status, json.error.message]).toEqual([404, 'Invalid URL (GET /api/usage/token/)']);
		expect((await answer(env.api.get('/api/usage/token'))).status).toBe(404);
		expect((await dashboard()).subscription).toMatchObject({ hard_limit_usd: 50 });
	});
});

describe('choosing the mode', () => {
	it('the default mode keeps its answers: JSON 404 everywhere, 404 task_not_exist; its balance routes are one-api\'s (no /api/usage/token/)', async () => {
		const gateway = await startGateway();
		try {
			const api = gatewayClient(gateway.baseUrl);
			for (const path of ['/', '/api/usage/token/']) {
				const { status, json } = await answer(api.get(path));
				expect([path, status, json.error.param]).toEqual([path, 404, null]);
			}
			// No charges in this mode: the key reads its whole quota.
			expect((await answer(api.get('/v1/dashboard/billing/subscription'))).json).toMatchObject({ hard_limit_usd: 50 });
			expect((await answer(api.get('/v1/dashboard/billing/usage'))).json).toEqual({ object: 'list', total_usage: 0 });
			expect((await answer(api.get('/api/status'))).json.data).toMatchObject({ quota_per_unit: 500000 });
			expect((await answer(api.get('/v1/video/generations/task_nothing'))).status).toBe(404);
			expect((await answer(gatewayClient(gateway.baseUrl, null).post('/v1/messages', MESSAGES))).json).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
		} finally {
			await gateway.close();
		}
	});

	it('setOptions switches it, reset restores the start\'s; a bad flavor is a TypeError', async () => {
		env.gateway.setOptions({ flavor: 'default' });
		expect((await answer(env.api.get('/'))).status).toBe(404);
		env.gateway.reset();
		expect((await answer(env.api.get('/'))).status).toBe(200);
		expect(() => env.gateway.setOptions({ flavor: 'oneapi' as never })).toThrow(TypeError);
	});

	it('cli.js --flavor newapi', async () => {
		const child = spawn(process.execPath, [join(__dirname, '../gateway/cli.js'), '--flavor', 'newapi'], { stdio: ['ignore', 'pipe', 'inherit'] });
		try {
			const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
			const { baseUrl } = JSON.parse(line) as { baseUrl: string };
			expect((await fetch(`${baseUrl}/login`)).headers.get('content-type')).toBe('text/html; charset=utf-8');
		} finally {
			child.kill('SIGTERM');
			await once(child, 'exit');
		}
		const bad = spawn(process.execPath, [join(__dirname, '../gateway/cli.js'), '--flavor', 'nope'], { stdio: 'ignore' });
		expect((await once(bad, 'exit'))[0]).toBe(1);
	});
});
