// The loopback gateway's asynchronous video API: task states per poll, magic words, and real
// MP4 downloads from the file host (or, with [same-origin], from the API behind the key).
import { TEST_KEY, mp4TopLevelBoxes, pollVideoTask, submitVideoTask, useGateway, videoTaskStates } from '../gateway/testing';

const env = useGateway();

interface TaskData {
	task_id: string;
	status: string;
	progress: string;
	result_url?: string;
	fail_reason?: string;
	submit_time: number;
	start_time: number;
	finish_time: number;
}

const submit = (prompt: string, extra: Record<string, unknown> = {}) =>
	submitVideoTask(env.api, { model: 'video-2-0-fast-260128', prompt, seconds: '5', size: '1280x720', ...extra });

const poll = (taskId: string) => pollVideoTask<TaskData>(env.api, taskId);
const pollStates = (taskId: string, count: number) => videoTaskStates(env.api, taskId, count);

describe('video tasks', () => {
	it('submits a task in the documented shape', async () => {
		const response = await env.api.post('/v1/video/generations', { model: 'video-2-0-260128', prompt: 'a cat', seconds: '5', size: '1280x720' });
		const body = (await response.json()) as { task_id: string };
		expect(body).toEqual({
			id: body.task_id,
			task_id: expect.stringMatching(/^task_/),
			object: 'video',
			model: 'video-2-0-260128',
			status: 'queued',
			progress: 0,
			created_at: expect.any(Number),
		});
	});

	it('moves one step per poll and succeeds on poll 3 with a file-host MP4 link', async () => {
		const taskId = await submit('a cat');
		const states = await pollStates(taskId, 4);
		expect(states).toEqual(['NOT_START 0%', 'IN_PROGRESS 50%', 'SUCCESS 100%', 'SUCCESS 100%']);
		const data = await poll(taskId);
		expect(data.result_url).toBe(`${env.gateway.fileBaseUrl}/files/videos/${taskId}.mp4`);
		expect(data.fail_reason).toBeUndefined();
		expect(data.finish_time).toBeGreaterThanOrEqual(data.start_time);

		const download = await fetch(data.result_url!);
		expect(download.headers.get('content-type')).toBe('video/mp4');
		const bytes = Buffer.from(await download.arrayBuffer());
		expect(Number(download.headers.get('content-length'))).toBe(bytes.length);
		expect(bytes.toString('ascii', 4, 8)).toBe('ftyp');
		expect(mp4TopLevelBoxes(bytes).map((b) => b.type)).toEqual(expect.arrayContaining(['ftyp', 'moov', 'mdat']));
		expect(bytes.length).toBeLessThan(20 * 1024);
	});

	it('goes through QUEUED and rising IN_PROGRESS when more polls are configured', async () => {
		env.gateway.setOptions({ videoPollsToFinish: 5 });
		const taskId = await submit('a dog');
		expect(await pollStates(taskId, 5)).toEqual(['NOT_START 0%', 'QUEUED 0%', 'IN_PROGRESS 50%', 'IN_PROGRESS 75%', 'SUCCESS 100%']);
	});

	it('answers task_not_exist for an unknown task', async () => {
		const response = await env.api.get('/v1/video/generations/task_nope');
		expect(response.status).toBe(404);
		expect(await response.json()).toEqual({ code: 'task_not_exist', message: 'task_not_exist', data: null });
	});

	it.each([
		[{ seconds: 5 }, 'seconds'],
		[{ seconds: '5s' }, 'seconds'],
		[{ seconds: '0' }, 'seconds'],
		[{ size: '1280*720' }, 'size'],
		[{ size: 'big' }, 'size'],
		[{ prompt: '  ' }, 'prompt'],
		[{ model: 'img-image-2' }, 'model'],
	])('rejects %j with 400 naming %s', async (change, param) => {
		const response = await env.api.post('/v1/video/generations', { model: 'video-2-0-mini-260615', prompt: 'x', seconds: '5', size: '720x1280', ...change });
		expect(response.status).toBe(400);
		expect(await response.json()).toMatchObject({ error: { type: 'invalid_request_error', param } });
	});

	it('answers 503 model_not_found for an unknown video model', async () => {
		const response = await env.api.post('/v1/video/generations', { model: 'video-9', prompt: 'x' });
		expect(response.status).toBe(503);
		expect(await response.json()).toMatchObject({ error: { code: 'model_not_found', type: 'new_api_error' } });
	});

	it('refuses a download that carries the gateway key (a signed link needs none)', async () => {
		const taskId = await submit('x');
		await pollStates(taskId, 3);
		const url = (await poll(taskId)).result_url!;
		const leaked = await fetch(url, { headers: { authorization: `Bearer ${TEST_KEY}` } });
		expect(leaked.status).toBe(400);
		expect(env.gateway.requests.filter((r) => r.server === 'files')[0].headers.authorization).toBe(`Bearer ${TEST_KEY}`);
	});
});

describe('video magic words', () => {
	it('[fail] ends in FAILURE with a fail_reason and no link', async () => {
		const taskId = await submit('forbidden [fail]');
		const states = await pollStates(taskId, 3);
		expect(states[2]).toBe('FAILURE 100%');
		const data = await poll(taskId);
		expect(data.fail_reason).toBe('content policy violation: the prompt was rejected by the safety system');
		expect(data.result_url).toBeUndefined();
	});

	it('[never] stays running forever', async () => {
		const taskId = await submit('slow [never]');
		const states = await pollStates(taskId, 15);
		expect(states.every((s) => /^(NOT_START|IN_PROGRESS) /.test(s))).toBe(true);
		expect(states[14]).toBe('IN_PROGRESS 99%');
	});

	it('[unknown] reports UNKNOWN and SUBMITTED before going on', async () => {
		const taskId = await submit('odd [unknown]');
		expect(await pollStates(taskId, 7)).toEqual([
			'UNKNOWN 0%',
			'UNKNOWN 0%',
			'SUBMITTED 0%',
			'SUBMITTED 0%',
			'NOT_START 0%',
			'IN_PROGRESS 50%',
			'SUCCESS 100%',
		]);
	});

	it('[flaky] interleaves 502 HTML, a bare 429 and a dropped connection with good answers', async () => {
		const taskId = await submit('shaky [flaky]');
		const outcomes: string[] = [];
		for (let i = 0; i < 8; i++) {
			try {
				const response = await fetch(`${env.gateway.baseUrl}/v1/video/generations/${taskId}`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
				const text = await response.text();
				const type = response.headers.get('content-type') ?? 'no-type';
				outcomes.push(response.status === 200 ? JSON.parse(text).data.status : `${response.status} ${type} ${text ? 'body' : 'empty'}`);
			} catch {
				outcomes.push('dropped');
			}
		}
		expect(outcomes).toEqual(['502 text/html body', 'NOT_START', '429 no-type empty', 'IN_PROGRESS', 'dropped', 'SUCCESS', 'SUCCESS', 'SUCCESS']);
	});

	it('[same-origin] links to the API origin, which needs the key', async () => {
		const taskId = await submit('here [same-origin]');
		await pollStates(taskId, 3);
		const url = (await poll(taskId)).result_url!;
		expect(url).toBe(`${env.gateway.baseUrl}/v1/videos/${taskId}/content`);
		expect((await fetch(url)).status).toBe(401);
		const download = await fetch(url, { headers: { authorization: `Bearer ${TEST_KEY}` } });
		expect(download.status).toBe(200);
		expect(download.headers.get('content-type')).toBe('video/mp4');
		expect(Buffer.from(await download.arrayBuffer()).toString('ascii', 4, 8)).toBe('ftyp');
	});

	it('[expired] links answer 403 with a small XML body', async () => {
		const taskId = await submit('late [expired]');
		await pollStates(taskId, 3);
		const download = await fetch((await poll(taskId)).result_url!);
		expect(download.status).toBe(403);
		expect(download.headers.get('content-type')).toBe('application/xml');
		expect(await download.text()).toMatch(/<Error><Code>AccessDenied<\/Code><Message>Request has expired<\/Message>/);
	});

	it('[big:3] serves a valid 3 MiB MP4 streamed in chunks', async () => {
		const taskId = await submit('large [big:3]');
		await pollStates(taskId, 3);
		const download = await fetch((await poll(taskId)).result_url!);
		expect(Number(download.headers.get('content-length'))).toBe(3 * 1024 * 1024);
		const chunks: Buffer[] = [];
		for await (const chunk of download.body as unknown as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
		const bytes = Buffer.concat(chunks);
		expect(chunks.length).toBeGreaterThan(1);
		expect(bytes.length).toBe(3 * 1024 * 1024);
		const boxes = mp4TopLevelBoxes(bytes);
		expect(boxes[0].type).toBe('ftyp');
		expect(boxes.map((b) => b.type)).toEqual(expect.arrayContaining(['moov', 'mdat']));
		expect(boxes[boxes.length - 1].type).toBe('free');
	});

	it('[429-once] fails the first submit of a prompt with a bare 429', async () => {
		const body = { model: 'video-2-0-fast-260128', prompt: 'busy [429-once]', seconds: '5', size: '640x360' };
		const first = await env.api.post('/v1/video/generations', body);
		expect([first.status, await first.text()]).toEqual([429, '']);
		expect(first.headers.get('retry-after')).toBeNull();
		expect((await env.api.post('/v1/video/generations', body)).status).toBe(200);
	});
});
