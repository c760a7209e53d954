// The hostile gateway's own behaviour (test/hostile): every scenario family, checked with plain
// node:http requests so nothing here depends on the client code under test.
import * as dns from 'node:dns';
import * as http from 'node:http';
import { startHostileGateway, type HostileGateway, type HostileRequest } from '../hostile';
import { BUSY_MARGIN_MS } from '../helpers/busy';

const KEY = 'sk-hostile-secret-42';
const AUTH = `Bearer ${KEY}`;
const FTYP = Buffer.from('000000186674797069736f6d0000020069736f6d6d703431', 'hex');

interface Reply {
	status: number;
	headers: http.IncomingHttpHeaders;
	body: Buffer;
	text: string;
}

interface CallOptions {
	method?: string;
	body?: unknown;
	auth?: string | null;
}

/** One request with node:http, body read to the end. */
function call(url: string, { method, body, auth = AUTH }: CallOptions = {}): Promise<Reply> {
	const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
	return new Promise((resolve, reject) => {
		const req = http.request(
			url,
			{
				method: method ?? (payload === undefined ? 'GET' : 'POST'),
				headers: {
					...(auth ? { authorization: auth } : {}),
					...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
				},
				agent: false,
			},
			(res) => {
				const chunks: Buffer[] = [];
				res.on('data', (chunk: Buffer) => chunks.push(chunk));
				res.on('end', () => {
					const all = Buffer.concat(chunks);
					resolve({ status: res.statusCode ?? 0, headers: res.headers, body: all, text: all.toString('utf8') });
				});
				res.on('error', reject);
			},
		);
		req.on('error', reject);
		req.end(payload);
	});
}

/** Sends a request and hands back the response as soon as its headers arrive. */
function open(url: string, { method, body, auth = AUTH }: CallOptions = {}) {
	const payload = body === undefined ? undefined : JSON.stringify(body);
	let request!: http.ClientRequest;
	const response = new Promise<http.IncomingMessage>((resolve, reject) => {
		request = http.request(url, { method: method ?? (payload ? 'POST' : 'GET'), headers: auth ? { authorization: auth } : {}, agent: false }, resolve);
		request.on('error', reject);
		request.end(payload);
	});
	return { request, response };
}

/** Collects `count` chunks' worth of text (at least), then resolves with what arrived. */
function readUntil(res: http.IncomingMessage, done: (text: string) => boolean): Promise<string> {
	return new Promise((resolve) => {
		let text = '';
		res.on('data', (chunk: Buffer) => {
			text += chunk.toString('utf8');
			if (done(text)) resolve(text);
		});
	});
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(check: () => boolean, ms = 2000) {
	const until = Date.now() + ms;
	while (!check()) {
		if (Date.now() > until) throw new Error('condition not met in time');
		await sleep(10);
	}
}

const chatBody = (content: string, extra: Record<string, unknown> = {}) => ({
	model: 'chat-gpt-5',
	messages: [{ role: 'user', content }],
	...extra,
});
const messagesBody = (content: string, extra: Record<string, unknown> = {}) => ({
	model: 'chat-sonnet-5',
	max_tokens: 100,
	messages: [{ role: 'user', content }],
	...extra,
});

let h: HostileGateway;
beforeAll(async () => {
	h = await startHostileGateway({ dripIntervalMs: 30, keepAliveIntervalMs: 30, videoPollsToFinish: 2 });
});
afterAll(() => h.close());
beforeEach(() => h.reset());

const api = (path: string) => `${h.baseUrl}${path}`;
const lastTo = (origin: HostileRequest['origin']) => [...h.requests].reverse().find((r) => r.origin === origin);

describe('names and normal answers', () => {
	it('resolves example.test names to loopback in every lookup form, and patches once', async () => {
		require('../hostile/dns-preload');
		const one = await new Promise<[string, number]>((resolve, reject) =>
			dns.lookup('files.gw.example.test', (err, address, family) => (err ? reject(err) : resolve([address, family]))),
		);
		expect(one).toEqual(['127.0.0.1', 4]);
		const all = await new Promise((resolve, reject) =>
			dns.lookup('GW.Example.Test.', { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
		);
		expect(all).toEqual([{ address: '127.0.0.1', family: 4 }]);
		expect(await dns.promises.lookup('example.test')).toEqual({ address: '127.0.0.1', family: 4 });
		const local = await new Promise<string>((resolve, reject) =>
			dns.lookup('localhost', { family: 4 }, (err, address) => (err ? reject(err) : resolve(address))),
		);
		expect(local).toBe('127.0.0.1'); // other names still go to the real resolver
		expect(h.baseUrl).toMatch(/^http:\/\/gw\.example\.test:\d+$/);
		expect(h.siblingUrl).toBe(h.baseUrl.replace('gw.', 'files.gw.'));
		expect(h.otherPortUrl).not.toBe(h.baseUrl);
	});

	it('answers every endpoint normally without a magic word, and records requests', async () => {
		expect((await call(api('/v1/models'))).status).toBe(200);
		const chat = JSON.parse((await call(api('/v1/chat/completions'), { body: chatBody('hi') })).text);
		expect(chat.choices[0].message.content).toBe('Echo: hi');
		const stream = await call(api('/v1/chat/completions'), { body: chatBody('hi', { stream: true }) });
		expect(stream.headers['content-type']).toBe('text/event-stream');
		expect(stream.text.endsWith('data: [DONE]\n\n')).toBe(true);
		const messages = await call(api('/v1/messages'), { body: messagesBody('hi', { stream: true }) });
		expect(messages.text).toContain('event: message_stop');
		const plant = await call(api('/plants'), { body: '{"id":9007199254740993,"name":"fern","tag":"green"}' });
		expect([plant.status, plant.text]).toEqual([200, '{"id":9007199254740993,"name":"fern","tag":"green"}']);
		const images = JSON.parse((await call(api('/v1/images/generations'), { body: { model: 'img', prompt: 'cat', n: 2 } })).text);
		expect(images.data).toHaveLength(2);
		const png = await call(images.data[1].url, { auth: null });
		expect([png.status, png.headers['content-type'], png.body.subarray(1, 4).toString()]).toEqual([200, 'image/png', 'PNG']);
		expect(images.data[0].url.startsWith(h.siblingUrl)).toBe(true);
		expect((await call(api('/v1/chat/completions'), { body: chatBody('hi'), auth: null })).status).toBe(401);

		expect(h.requests[0]).toMatchObject({ method: 'GET', path: '/v1/models', origin: 'gateway', scenario: null, aborted: false, status: 200 });
		expect(h.requests[1]).toMatchObject({ method: 'POST', body: JSON.stringify(chatBody('hi')), host: h.baseUrl.slice(7) });
		expect(h.requests[1].headers.authorization).toBe(AUTH);
		expect(h.counters).toMatchObject({ posts: 6, imageGenerations: 1, plantsStored: 1 });
	});

	it('runs a normal video task to SUCCESS with a downloadable MP4', async () => {
		const task = JSON.parse((await call(api('/v1/video/generations'), { body: { model: 'v', prompt: 'sea', seconds: '5' } })).text);
		expect(task).toMatchObject({ object: 'video', status: 'queued', task_id: task.id });
		const statuses = [];
		let last;
		for (let i = 0; i < 3; i++) {
			last = JSON.parse((await call(api(`/v1/video/generations/${task.task_id}`))).text);
			statuses.push([last.data.status, last.data.progress]);
		}
		expect(statuses).toEqual([['QUEUED', '0%'], ['IN_PROGRESS', '50%'], ['SUCCESS', '100%']]);
		const mp4 = await call(last.data.result_url, { auth: null });
		expect([mp4.status, mp4.headers['content-type'], mp4.body.subarray(4, 8).toString()]).toEqual([200, 'video/mp4', 'ftyp']);
		expect((await call(api('/v1/video/generations/task_nothing'))).status).toBe(404);
	});

	it('refuses an unknown scenario name with 400', async () => {
		const reply = await call(api('/v1/chat/completions'), { body: chatBody('[hostile:no-such-thing]') });
		expect(reply.status).toBe(400);
		expect(reply.text).toContain('no-such-thing');
	});
});

describe('the key printed by the gateway', () => {
	it('token-in-200 echoes the Authorization header on every endpoint', async () => {
		const expected = { code: 'invalid_token', message: `invalid token ${AUTH}` };
		for (const [path, body] of [
			['/v1/chat/completions', chatBody('[hostile:token-in-200]')],
			['/v1/messages', messagesBody('[hostile:token-in-200]')],
			['/plants', { id: 1, name: '[hostile:token-in-200]' }],
			['/v1/images/generations', { prompt: '[hostile:token-in-200]' }],
			['/v1/video/generations', { prompt: '[hostile:token-in-200]' }],
		] as const) {
			const reply = await call(api(path), { body });
			expect([path, reply.status, JSON.parse(reply.text)]).toEqual([path, 200, expected]);
		}
		expect(h.plants.size).toBe(0);
		// On a status poll: poll-token-in-200 (the submit itself succeeds).
		const task = JSON.parse((await call(api('/v1/video/generations'), { body: { prompt: '[hostile:poll-token-in-200]' } })).text);
		expect(task.task_id).toMatch(/^task_poll-token-in-200_\d+$/);
		expect(JSON.parse((await call(api(`/v1/video/generations/${task.task_id}`))).text)).toEqual(expected);
	});

	it('401-secret-part quotes the part of the key after sk-', async () => {
		const reply = await call(api('/v1/chat/completions'), { body: chatBody('[hostile:401-secret-part]') });
		expect(reply.status).toBe(401);
		expect(JSON.parse(reply.text)).toEqual({ error: { message: '无效的令牌 token=hostile-secret-42', type: 'new_api_error' } });
	});

	it('bad-tool-json-key sends tool arguments that are not JSON and hold the key', async () => {
		const messages = await call(api('/v1/messages'), {
			body: messagesBody('[hostile:bad-tool-json-key]', { stream: true, tools: [{ name: 'weather', input_schema: { type: 'object' } }] }),
		});
		const partial = [...messages.text.matchAll(/"partial_json":("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1]) as string).join('');
		expect(partial).toContain(AUTH);
		expect(() => JSON.parse(partial)).toThrow();
		expect(messages.text).toContain('"name":"weather"');

		const chat = JSON.parse((await call(api('/v1/chat/completions'), { body: chatBody('[hostile:bad-tool-json-key]') })).text);
		const args = chat.choices[0].message.tool_calls[0].function.arguments as string;
		expect(args).toContain(AUTH);
		expect(() => JSON.parse(args)).toThrow();
	});

	it('stream-error-key sends one text delta, then an error quoting the key', async () => {
		const chat = await call(api('/v1/chat/completions'), { body: chatBody('[hostile:stream-error-key]', { stream: true }) });
		expect(chat.text).toContain('"content":"Hello"');
		expect(chat.text).toContain(`Authorization: ${AUTH}`);
		expect(chat.text).not.toContain('[DONE]');
		const messages = await call(api('/v1/messages'), { body: messagesBody('[hostile:stream-error-key]', { stream: true }) });
		expect(messages.text).toMatch(/event: error\ndata: .*Bearer sk-hostile-secret-42/);
		expect(messages.text).not.toContain('message_stop');
	});

	it('echo-then-stall streams the secrets in pieces (chat and messages), then sends nothing and never ends', async () => {
		for (const [path, body, arrived] of [
			['/v1/chat/completions', chatBody('[hostile:echo-then-stall]', { stream: true }), '"content":"'],
			['/v1/messages', messagesBody('[hostile:echo-then-stall]', { stream: true }), '"text_delta"'],
		] as const) {
			const { request, response } = open(api(path), { body });
			const res = await response;
			let text = '';
			res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
			await waitFor(() => text.split(arrived).length > 10);
			await sleep(BUSY_MARGIN_MS);
			const pieces = [...text.matchAll(/"(?:content|text)":"([^"]*)"/g)].map((m) => m[1]).join('');
			expect(pieces).toContain(`you sent ${AUTH} (base64 ${Buffer.from(KEY).toString('base64')})`);
			expect(text).not.toMatch(/\[DONE\]|message_stop/);
			expect(res.complete).toBe(false);
			request.destroy();
		}
	});

	it("the balance routes and an image edit answer 401 quoting the key (GETs carry no magic word)", async () => {
		for (const path of ['/api/usage/token/', '/v1/dashboard/billing/subscription', '/v1/dashboard/billing/usage']) {
			const reply = await call(api(path));
			expect([path, reply.status]).toEqual([path, 401]);
			expect(reply.text).toContain('token=hostile-secret-42');
		}
		const edit = await call(api('/v1/images/edits'), { body: '--b\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nred [hostile:401-secret-part]\r\n--b--\r\n' });
		expect([edit.status, edit.text]).toEqual([401, expect.stringContaining('token=hostile-secret-42')]);
	});

	it('fail-reason-key ends the video task in FAILURE quoting the key', async () => {
		const task = JSON.parse((await call(api('/v1/video/generations'), { body: { prompt: '[hostile:fail-reason-key]' } })).text);
		let data;
		for (let i = 0; i < 3; i++) data = JSON.parse((await call(api(`/v1/video/generations/${task.task_id}`))).text).data;
		expect(data).toMatchObject({ status: 'FAILURE', fail_reason: `upstream rejected request with header Authorization: ${AUTH}` });
	});
});

describe('redirects', () => {
	it('redirect-sibling-302 on an image link: the sibling records whether Authorization arrived', async () => {
		const images = JSON.parse(
			(await call(api('/v1/images/generations'), { body: { prompt: '[hostile:redirect-sibling-302]', n: 1 } })).text,
		);
		const link = images.data[0].url as string;
		expect(link.startsWith(`${h.baseUrl}/files/`)).toBe(true);
		const first = await call(link, { auth: null });
		expect(first.status).toBe(302);
		expect(first.headers.location).toBe(`${h.siblingUrl}/landing${new URL(link).pathname}`);

		const good = await call(first.headers.location!, { auth: null }); // a correct client drops the key
		expect([good.status, good.headers['content-type']]).toEqual([200, 'image/png']);
		expect(lastTo('sibling')?.headers.authorization).toBeUndefined();
		expect(h.leakedAuthorization()).toEqual([]);

		await call(first.headers.location!); // a leaky client keeps it
		expect(lastTo('sibling')).toMatchObject({ origin: 'sibling', host: h.siblingUrl.slice(7), headers: { authorization: AUTH } });
		expect(h.leakedAuthorization()).toHaveLength(1);
	});

	it('redirect-sibling-307 on a chat POST lands on a normal chat completion; 302-port goes to the other port', async () => {
		const moved = await call(api('/v1/chat/completions'), { body: chatBody('hi [hostile:redirect-sibling-307]') });
		expect([moved.status, moved.headers.location]).toEqual([307, `${h.siblingUrl}/landing/v1/chat/completions`]);
		const landed = await call(moved.headers.location!, { body: chatBody('hi [hostile:redirect-sibling-307]'), auth: null });
		expect(JSON.parse(landed.text).choices[0].message.content).toContain('Echo: hi');
		expect((await call(moved.headers.location!, { auth: null })).status).toBe(200); // as GET after a 302

		const task = JSON.parse((await call(api('/v1/video/generations'), { body: { prompt: '[hostile:redirect-port-302]' } })).text);
		let data;
		for (let i = 0; i < 3; i++) data = JSON.parse((await call(api(`/v1/video/generations/${task.task_id}`))).text).data;
		expect(data.result_url.startsWith(h.baseUrl)).toBe(true);
		const hop = await call(data.result_url, { auth: null });
		expect(hop.status).toBe(302);
		expect(hop.headers.location!.startsWith(`${h.otherPortUrl}/landing/files/`)).toBe(true);
		const video = await call(hop.headers.location!, { auth: null });
		expect([video.status, video.body.subarray(4, 8).toString()]).toEqual([200, 'ftyp']);
		expect(lastTo('other-port')?.headers.authorization).toBeUndefined();
	});

	it('moved-301 points every request at https://new.example.test', async () => {
		const reply = await call(api('/plants?x=1'), { body: { id: 5, name: '[hostile:moved-301]' } });
		expect([reply.status, reply.headers.location]).toEqual([301, 'https://new.example.test/plants?x=1']);
	});
});

describe('paid work', () => {
	it('acted-then-502 stores the plant, then a second identical create gets 400 already exists', async () => {
		const body = { id: 77, name: 'fern [hostile:acted-then-502]' };
		const first = await call(api('/plants'), { body });
		expect([first.status, first.headers['content-type']]).toEqual([502, 'text/html']);
		expect(first.text).toContain('<center>nginx</center>');
		expect(h.plants.get('77')).toEqual({ id: '77', name: body.name });
		const second = await call(api('/plants'), { body });
		expect([second.status, JSON.parse(second.text)]).toEqual([400, { error: 400, message: 'plant 77 already exists' }]);
		expect(h.count({ method: 'POST', path: '/plants' })).toBe(2);
	});

	it('acted-then-504 counts the image generation; acted-then-reset creates the task and drops the socket', async () => {
		const images = await call(api('/v1/images/generations'), { body: { prompt: '[hostile:acted-then-504]' } });
		expect(images.status).toBe(504);
		expect(h.counters.imageGenerations).toBe(1);
		await expect(call(api('/v1/video/generations'), { body: { prompt: '[hostile:acted-then-reset]' } })).rejects.toThrow(/socket hang up|ECONNRESET/);
		expect(h.counters.videoTasks).toBe(1);
		expect([...h.tasks.keys()]).toEqual([expect.stringMatching(/^task_acted-then-reset_\d+$/)]);
		await waitFor(() => h.requests.at(-1)!.dropped);
		expect(h.requests.at(-1)!.aborted).toBe(false);
	});

	it('video-fail fails that item only; image-one-403 expires the second link', async () => {
		const bad = JSON.parse((await call(api('/v1/video/generations'), { body: { prompt: '[hostile:video-fail]' } })).text);
		let data;
		for (let i = 0; i < 3; i++) data = JSON.parse((await call(api(`/v1/video/generations/${bad.task_id}`))).text).data;
		expect(data).toMatchObject({ status: 'FAILURE', fail_reason: 'content policy' });

		const images = JSON.parse((await call(api('/v1/images/generations'), { body: { prompt: '[hostile:image-one-403]', n: 3 } })).text);
		const answers = await Promise.all(images.data.map((d: { url: string }) => call(d.url, { auth: null })));
		expect(answers.map((a) => a.status)).toEqual([200, 403, 200]);
		expect(answers[1].text).toContain('<Code>AccessDenied</Code><Message>Request has expired</Message>');
		expect(images.data.every((d: { url: string }) => d.url.startsWith(h.siblingUrl))).toBe(true);
	});
});

describe('waits that never end', () => {
	it('drip-status drips spaces until the client hangs up, which is recorded as aborted', async () => {
		const task = JSON.parse((await call(api('/v1/video/generations'), { body: { prompt: '[hostile:drip-status]' } })).text);
		const { request, response } = open(api(`/v1/video/generations/${task.task_id}`));
		const res = await response;
		expect([res.statusCode, res.headers['content-type']]).toEqual([200, 'application/json']);
		expect(await readUntil(res, (t) => t.length >= 3)).toMatch(/^ {3,}$/);
		request.destroy();
		const record = h.requests.at(-1)!;
		await waitFor(() => record.aborted);
		expect(record).toMatchObject({ scenario: 'drip-status', status: 200, aborted: true });
	});

	it('drip-body drips on any endpoint; slow-headers sends nothing', async () => {
		const drip = open(api('/plants'), { body: { id: 1, name: '[hostile:drip-body]' } });
		expect(await readUntil(await drip.response, (t) => t.length >= 2)).toBe('  ');
		drip.request.destroy();

		const slow = open(api('/v1/chat/completions'), { body: chatBody('[hostile:slow-headers]') });
		const outcome = await Promise.race([slow.response.then(() => 'headers'), sleep(300).then(() => 'nothing')]);
		expect(outcome).toBe('nothing');
		slow.request.destroy();
		slow.response.catch(() => undefined);
		const record = h.requests.at(-1)!;
		await waitFor(() => record.aborted);
		expect(record.status).toBeNull();
	});

	it('keepalive-stream sends only keep-alive comments', async () => {
		const { request, response } = open(api('/v1/messages'), { body: messagesBody('[hostile:keepalive-stream]', { stream: true }) });
		const res = await response;
		expect(res.headers['content-type']).toBe('text/event-stream');
		const text = await readUntil(res, (t) => t.split(': keep-alive\n\n').length > 3);
		expect(text.replace(/: keep-alive\n\n/g, '')).toBe('');
		request.destroy();
	});

	it('state-NOT_START never ends; state-CANCELLED ends after the polls', async () => {
		const never = JSON.parse((await call(api('/v1/video/generations'), { body: { prompt: '[hostile:state-NOT_START]' } })).text);
		for (let i = 0; i < 5; i++) {
			expect(JSON.parse((await call(api(`/v1/video/generations/${never.task_id}`))).text).data.status).toBe('NOT_START');
		}
		const ended = JSON.parse((await call(api('/v1/video/generations'), { body: { prompt: '[hostile:state-canceled]' } })).text);
		const statuses = [];
		let data;
		for (let i = 0; i < 3; i++) {
			data = JSON.parse((await call(api(`/v1/video/generations/${ended.task_id}`))).text).data;
			statuses.push(data.status);
		}
		expect(statuses).toEqual(['QUEUED', 'IN_PROGRESS', 'canceled']);
		expect(data.fail_reason).toBe('task ended: canceled');
		expect(data.result_url).toBeUndefined();
	});
});

describe('wrong results with status 200', () => {
	const bodies: Array<[string, unknown]> = [
		['200-error-object', { error: { message: 'upstream overloaded', type: 'server_error', code: 'overloaded' } }],
		['200-type-error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }],
		['200-success-false', { success: false, message: 'channel disabled' }],
		['200-code-msg', { code: 500, msg: 'internal error' }],
		['200-empty-choices', {}],
		['200-empty-array', []],
		['200-json-string', 'bad gateway'],
		['200-null', null],
	];

	it.each(bodies)('%s on messages, plants, images and video submit', async (name, expected) => {
		for (const [path, body] of [
			['/v1/messages', messagesBody(`[hostile:${name}]`)],
			['/plants', { id: 3, name: `[hostile:${name}]` }],
			['/v1/images/generations', { prompt: `[hostile:${name}]` }],
			['/v1/video/generations', { prompt: `[hostile:${name}]` }],
		] as const) {
			const reply = await call(api(path), { body });
			expect([path, reply.status, reply.headers['content-type'], JSON.parse(reply.text)]).toEqual([
				path,
				200,
				'application/json; charset=utf-8',
				expected,
			]);
		}
		expect(h.plants.size + h.tasks.size + h.counters.imageGenerations).toBe(0);
	});

	it('gives chat-completions its own empty choices, and plant-200-error only on plants', async () => {
		const chat = await call(api('/v1/chat/completions'), { body: chatBody('[hostile:200-empty-choices]', { stream: true }) });
		expect(JSON.parse(chat.text)).toEqual({ id: 'x', object: 'chat.completion', choices: [] });
		expect(JSON.parse((await call(api('/v1/chat/completions'), { body: chatBody('[hostile:200-null]') })).text)).toBeNull();
		const plant = await call(api('/plants'), { body: { id: 4, name: '[hostile:plant-200-error]' } });
		expect([plant.status, JSON.parse(plant.text)]).toEqual([200, { error: 400, message: 'name taken' }]);
		const chatPlain = JSON.parse((await call(api('/v1/chat/completions'), { body: chatBody('[hostile:plant-200-error]') })).text);
		expect(chatPlain.choices[0].message.content).toContain('Echo:');
	});
});

describe('bad downloads and big files', () => {
	it('serves link scenarios as 200 answers that are not the file', async () => {
		const expectations: Array<[string, string, string | RegExp]> = [
			['link-json-error', 'application/json; charset=utf-8', '{"error":"link expired"}'],
			['link-forbidden-text', 'text/plain', 'Forbidden'],
			['link-tiny-text-as-mp4', 'video/mp4', 'Forbidden'],
			['link-html', 'text/html; charset=utf-8', /<html>/],
		];
		for (const [name, type, body] of expectations) {
			const task = JSON.parse((await call(api('/v1/video/generations'), { body: { prompt: `[hostile:${name}]` } })).text);
			let data;
			for (let i = 0; i < 3; i++) data = JSON.parse((await call(api(`/v1/video/generations/${task.task_id}`))).text).data;
			expect(data.status).toBe('SUCCESS');
			const file = await call(data.result_url, { auth: null });
			expect([name, file.status, file.headers['content-type']]).toEqual([name, 200, type]);
			if (typeof body === 'string') expect(file.text).toBe(body);
			else expect(file.text).toMatch(body);
		}
	});

	it('big-video-3 streams exactly 3 MiB starting with an ftyp box', async () => {
		const task = JSON.parse((await call(api('/v1/video/generations'), { body: { prompt: '[hostile:big-video-3]' } })).text);
		let data;
		for (let i = 0; i < 3; i++) data = JSON.parse((await call(api(`/v1/video/generations/${task.task_id}`))).text).data;
		const file = await call(data.result_url, { auth: null });
		expect([file.status, file.headers['content-type'], file.headers['content-length']]).toEqual([200, 'video/mp4', String(3 * 1024 * 1024)]);
		expect(file.body.length).toBe(3 * 1024 * 1024);
		expect(file.body.subarray(0, 24).equals(FTYP)).toBe(true);
		expect(file.body.subarray(28, 32).toString()).toBe('mdat');
		expect(file.body.readUInt32BE(24)).toBe(3 * 1024 * 1024 - 24);
		const head = await call(data.result_url, { method: 'HEAD', auth: null });
		expect([head.headers['content-length'], head.body.length]).toEqual([String(3 * 1024 * 1024), 0]);
	});
});

describe('close', () => {
	it('closes at once while never-ending answers are open', async () => {
		const own = await startHostileGateway({ dripIntervalMs: 20 });
		const drip = open(`${own.baseUrl}/v1/chat/completions`, { body: chatBody('[hostile:drip-body]') });
		const res = await drip.response;
		const ended = new Promise((resolve) => res.on('close', resolve));
		res.resume();
		const slow = open(`${own.baseUrl}/v1/chat/completions`, { body: chatBody('[hostile:slow-headers]') });
		slow.response.catch(() => undefined);
		await waitFor(() => own.requests.length === 2 && own.requests[1].scenario === 'slow-headers');
		const started = Date.now();
		await own.close();
		await ended;
		// the drip and the slow headers would go on for minutes
		expect(Date.now() - started).toBeLessThan(BUSY_MARGIN_MS);
		expect(own.requests.every((r) => !r.aborted)).toBe(true);
	});
});
