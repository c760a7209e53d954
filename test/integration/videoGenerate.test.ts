/**
 * Gateway Video Generate against the loopback gateway over real HTTP, with the wait loop driven
 * by a fake clock (no real 5-second waits): success, failure, timeout, unknown states, flaky
 * polls, same-origin and foreign-origin results (the key only to the gateway's own origin),
 * expired links, cancel, many items in one loop, and submit / get status / download.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { executeVideo } from '../../nodes/GatewayVideoGenerate/router';
import { useGateway } from '../gateway/testing';
import type { Gateway, LoggedRequest } from '../gateway';
import { binaryBytes, createExecuteContext } from '../helpers/executeContext';
import { createFakeClock } from '../helpers/fakeClock';
import type { FakeClock } from '../helpers/fakeClock';

const KEY = 'sk-integration-video-0123456789';
const SUBMIT = '/v1/video/generations';
const sampleVideo = fs.readFileSync(path.join(__dirname, '../fixtures/sample-video.mp4'));
// One loopback gateway for the file, with a clean log and state before each test.
const env = useGateway();

interface RunOptions {
	items?: INodeExecutionData[];
	continueOnFail?: boolean;
	clock?: FakeClock;
	abortSignal?: AbortSignal;
}

type Parameters = IDataObject | ((itemIndex: number) => IDataObject);

async function run(parameters: Parameters, options: RunOptions = {}) {
	const clock = options.clock ?? createFakeClock();
	const withDefaults = (itemIndex: number) => ({
		operation: 'generate',
		model: { __rl: true, mode: 'list', value: 'video-2-0-fast-260128' },
		seconds: 5,
		size: '1280x720',
		...(typeof parameters === 'function' ? parameters(itemIndex) : parameters),
	});
	const context = createExecuteContext({
		parameters: withDefaults,
		items: options.items,
		continueOnFail: options.continueOnFail,
		abortSignal: options.abortSignal,
		credentials: { apiKey: KEY, baseUrl: env.gateway.baseUrl },
		nodeType: 'n8n-nodes-model-gateway.gatewayVideoGenerate',
	});
	const [output] = await executeVideo(context.ctx, { clock });
	return { output, clock, ...context };
}

async function runError(parameters: Parameters, options: RunOptions = {}): Promise<Error & { description?: string }> {
	try {
		await run(parameters, options);
	} catch (error) {
		return error as Error;
	}
	throw new Error('expected the node to fail');
}

const apiRequests = (method?: string, prefix = SUBMIT): LoggedRequest[] =>
	env.gateway.requests.filter((r) => r.server === 'api' && r.path.startsWith(prefix) && (!method || r.method === method));
const polls = () => apiRequests('GET');
const submits = () => apiRequests('POST');
const fileRequests = () => env.gateway.requests.filter((r) => r.server === 'files');
const items = (n: number) => Array.from({ length: n }, (_, i) => ({ json: { i } }));

describe('generate', () => {
	it('submits, polls every 5 s from 5 s after submit, and streams the MP4 from the file host without the key', async () => {
		const { output, clock, binaries } = await run({ prompt: 'a paper boat on a rainy street' });
		expect(output).toHaveLength(1);
		const [item] = output;
		const taskId = item.json.task_id as string;
		expect(taskId).toMatch(/^task_/);
		expect(item.json).toEqual({
			task_id: taskId,
			status: 'SUCCESS',
			progress: '100%',
			result_url: `${env.gateway.fileBaseUrl}/files/videos/${taskId}.mp4`,
			model: 'video-2-0-fast-260128',
		});
		expect(item.pairedItem).toEqual({ item: 0 });
		expect(item.binary?.data).toMatchObject({ mimeType: 'video/mp4', fileName: `video-${taskId}.mp4`, fileExtension: 'mp4' });
		expect(binaryBytes(item).equals(sampleVideo)).toBe(true);
		expect(binaries[0].streamed).toBe(true);

		const [submit] = submits();
		expect(JSON.parse(submit.rawBody)).toEqual({ model: 'video-2-0-fast-260128', prompt: 'a paper boat on a rainy street', seconds: '5', size: '1280x720' });
		expect(submit.headers.authorization).toBe(`Bearer ${KEY}`);
		expect(polls()).toHaveLength(3);
		expect(polls().every((p) => p.headers.authorization === `Bearer ${KEY}`)).toBe(true);
		// first poll one interval after submit, no sleep after the last poll
		expect(clock.sleeps).toEqual([5000, 5000, 5000]);
		expect(fileRequests()).toHaveLength(1);
		expect(fileRequests()[0].headers.authorization).toBeUndefined();
	});

	it('sends the key to a result link on the gateway\'s own origin', async () => {
		const { output } = await run({ prompt: 'same host [same-origin]' });
		const taskId = output[0].json.task_id as string;
		expect(output[0].json.result_url).toBe(`${env.gateway.baseUrl}/v1/videos/${taskId}/content`);
		expect(binaryBytes(output[0]).equals(sampleVideo)).toBe(true);
		const [content] = apiRequests('GET', '/v1/videos/');
		expect(content.headers.authorization).toBe(`Bearer ${KEY}`);
		expect(fileRequests()).toHaveLength(0);
	});

	it('uses the chosen binary property, merges Extra Body Fields under its own fields, and can leave the video as a link', async () => {
		const { output } = await run({
			prompt: 'a fox',
			seconds: '8',
			size: ' 720 X 1280 ',
			options: { binaryPropertyName: 'video', extraBody: '{"seed": 7, "prompt": "ignored"}' },
		});
		expect(Object.keys(output[0].binary ?? {})).toEqual(['video']);
		expect(JSON.parse(submits()[0].rawBody)).toEqual({ seed: 7, model: 'video-2-0-fast-260128', prompt: 'a fox', seconds: '8', size: '720x1280' });

		env.gateway.reset();
		const linkOnly = await run({ prompt: 'a fox', options: { downloadVideo: false } });
		expect(linkOnly.output[0].binary).toBeUndefined();
		expect(linkOnly.output[0].json.result_url).toMatch(/\.mp4$/);
		expect(fileRequests()).toHaveLength(0);
	});

	it('keeps polling through UNKNOWN, SUBMITTED and NOT_START', async () => {
		const { output } = await run({ prompt: 'odd states [unknown]' });
		expect(output[0].json.status).toBe('SUCCESS');
		expect(polls()).toHaveLength(2 + 2 + 3);
	});

	it('rides out a 502 HTML page, a bare 429 and a dropped connection, one attempt per tick', async () => {
		const { output, clock } = await run({ prompt: 'bad network [flaky]' });
		expect(output[0].json.status).toBe('SUCCESS');
		expect(polls()).toHaveLength(6);
		expect(clock.sleeps).toEqual([5000, 5000, 5000, 5000, 5000, 5000]);
	});

	it('fails quoting the fail reason and the task id, and that the charge is usually refunded', async () => {
		const error = await runError({ prompt: 'please [fail]' });
		const taskId = polls()[0].path.split('/').pop();
		expect(error.message).toBe(`Video task ${taskId} failed: "content policy violation: the prompt was rejected by the safety system"`);
		expect(error.description).toContain('The charge for a failed task is usually refunded automatically');
		expect(fileRequests()).toHaveLength(0);
	});

	it('with Continue On Fail, a failed task is an item with its task id, status and the error', async () => {
		const { output } = await run({ prompt: 'please [fail]' }, { continueOnFail: true });
		expect(output[0].json).toMatchObject({ status: 'FAILURE', progress: '100%', fail_reason: expect.stringContaining('content policy') });
		expect(output[0].json.task_id).toMatch(/^task_/);
		expect(output[0].json.error).toContain(output[0].json.task_id as string);
		expect(output[0].pairedItem).toEqual({ item: 0 });
	});

	it('times out at Max Wait quoting the task id and the last status and progress', async () => {
		const { output, clock } = await run({ prompt: 'endless [never]', options: { maxWaitSeconds: 30 } }, { continueOnFail: true });
		const json = output[0].json;
		expect(json).toMatchObject({ status: 'IN_PROGRESS', progress: '60%' });
		expect(json.error).toBe(`Video task ${json.task_id} is still running after 30 s (last status IN_PROGRESS, progress 60%), so the node stopped waiting`);
		expect(json.errorDescription).toContain(`task ID ${json.task_id}`);
		expect(polls()).toHaveLength(6);
		expect(clock.sleeps).toEqual([5000, 5000, 5000, 5000, 5000, 5000]);

		env.gateway.reset();
		const error = await runError({ prompt: 'endless [never]', options: { maxWaitSeconds: 10, pollIntervalSeconds: 5 } });
		expect(error.message).toMatch(/^Video task task_\w+ is still running after 10 s \(last status IN_PROGRESS, progress 20%\)/);
	});

	it('retries 500 and 502 answers to polls, and gives up after two minutes of them, naming the task', async () => {
		env.gateway.queueFaults(`${SUBMIT}/`, ['500-json', '502-html']);
		const { output } = await run({ prompt: 'ok' });
		expect(output[0].json.status).toBe('SUCCESS');
		expect(polls()).toHaveLength(5);

		env.gateway.reset();
		env.gateway.queueFaults(`${SUBMIT}/`, Array.from({ length: 40 }, () => '503-html' as const));
		const down = await run({ prompt: 'gateway down' }, { continueOnFail: true });
		const json = down.output[0].json;
		expect(json.error).toBe(
			`Checking video task ${json.task_id} failed 25 times in a row: the gateway reported a failure: it answered with an HTML page ("503 Service Temporarily Unavailable") (HTTP 503)`,
		);
		expect(json).toMatchObject({ kind: 'server', httpCode: 503 });
		expect(json.status).toBe('QUEUED');
		expect(polls()).toHaveLength(25);
	});

	it('reports an expired link with the task id, whichever origin it is on', async () => {
		for (const prompt of ['old link [expired]', 'old link [expired] [same-origin]']) {
			env.gateway.reset();
			const { output } = await run({ prompt }, { continueOnFail: true });
			const json = output[0].json;
			// The one expired-link sentence of every download (images too), said once by the transport.
			expect(json.error).toMatch(new RegExp(`^Downloading the video of task ${json.task_id} failed: the link has expired or is gone \\(127\\.0\\.0\\.1:\\d+ answered HTTP 403\\): "Request has expired"$`));
			expect(json.errorDescription).toBe(
				`Links to generated files are temporary: download them soon after they are generated. Run the Download operation with task ID ${json.task_id} to try again: it asks the gateway for a fresh link.`,
			);
			expect(json).toMatchObject({ status: 'SUCCESS', result_url: expect.any(String) });
			expect(output[0].binary).toBeUndefined();
		}
	});

	it('stops at once on cancel: no poll after it, and the error names the task', async () => {
		const controller = new AbortController();
		const clock = createFakeClock();
		clock.onSleep = (_ms, n) => {
			if (n === 2) controller.abort();
		};
		const error = await runError({ prompt: 'slow one [never]' }, { clock, abortSignal: controller.signal });
		const taskId = polls()[0].path.split('/').pop();
		expect(error.message).toBe('The run was stopped while waiting for 1 video task');
		expect(error.description).toContain(`item 0: ${taskId} (NOT_START, 0%)`);
		expect(polls()).toHaveLength(1);
	});

	it('submits every item first and polls them all in one loop: five videos take as long as one', async () => {
		// a few real milliseconds per interval, as the submits would have within a real 5 s
		const clock = createFakeClock(0, 30);
		const { output } = await run((i) => ({ prompt: `video ${i}` }), { items: items(5), clock });
		expect(output.map((item) => item.pairedItem)).toEqual([0, 1, 2, 3, 4].map((item) => ({ item })));
		expect(new Set(output.map((item) => item.json.task_id)).size).toBe(5);
		expect(submits().map((r) => JSON.parse(r.rawBody).prompt).sort()).toEqual(['video 0', 'video 1', 'video 2', 'video 3', 'video 4']);
		const firstPoll = env.gateway.requests.findIndex((r) => r.method === 'GET');
		expect(env.gateway.requests.slice(0, firstPoll).filter((r) => r.method === 'POST')).toHaveLength(5);
		expect(polls()).toHaveLength(15);
		// Three rounds of one interval each (the whole wait is three intervals and a little): the five
		// checks of a round are spread 110 ms apart (the default budget of 10 status checks per second,
		// with its 10 % margin), not sent at once.
		expect(clock.now()).toBeLessThan(3 * 5000 + 1000);
		const spreads = clock.sleeps.filter((ms) => ms < 1000);
		expect(spreads.length).toBeGreaterThan(0);
		expect(spreads.every((ms) => Math.abs(ms / 110 - Math.round(ms / 110)) < 1e-6 && ms <= 440)).toBe(true);
		for (const item of output) expect(binaryBytes(item).equals(sampleVideo)).toBe(true);
	});

	it('with Continue On Fail, a failed item does not stop the others; order follows the input', async () => {
		const prompts = ['one', 'two [fail]', 'three [never]', 'four'];
		const { output } = await run((i) => ({ prompt: prompts[i], options: { maxWaitSeconds: 20 } }), { items: items(4), continueOnFail: true });
		expect(output.map((item) => [item.json.status, item.json.error === undefined])).toEqual([
			['SUCCESS', true],
			['FAILURE', false],
			['IN_PROGRESS', false],
			['SUCCESS', true],
		]);
		expect(output.map((item) => item.pairedItem)).toEqual([0, 1, 2, 3].map((item) => ({ item })));
	});

	it('without Continue On Fail, the first failure stops the wait and lists the other tasks', async () => {
		const prompts = ['slow [never]', 'bad [fail]', 'slow too [never]'];
		const error = await runError((i) => ({ prompt: prompts[i] }), { items: items(3), clock: createFakeClock(0, 30) });
		const ids = submits().length;
		expect(ids).toBe(3);
		expect(error.message).toMatch(/^Video task task_\w+ failed: "content policy/);
		expect(error.description).toMatch(/Tasks of the other items, to fetch with Get Status or Download: item 0: task_\w+ \(IN_PROGRESS, \d+%\); item 2: task_\w+/);
		// the loop stopped with the failure: three ticks, nothing after. The third tick's checks go one
		// budget gap apart: those still waiting for their turn when the failure came are not sent (the
		// run has failed; their answers would be read by no one): 7 to 9 polls, by the order of the tick
		// and how fast the failure's answer came (main sent every one of them: 9)
		const failed = /^Video task (task_\w+)/.exec(error.message)?.[1] as string;
		const perTask = env.gateway.taskIds().map((taskId) => polls().filter((poll) => poll.path.endsWith(`/${taskId}`)).length);
		expect(perTask).toHaveLength(3);
		expect(polls().filter((poll) => poll.path.endsWith(`/${failed}`))).toHaveLength(3);
		expect(perTask.every((count) => count === 2 || count === 3)).toBe(true);
	});

	it('checks every item before any request: seconds, size, prompt, poll interval', async () => {
		const cases: Array<[IDataObject, string]> = [
			[{ prompt: 'x', seconds: 5.5 }, '"Seconds" must be a whole number, not "5.5" (item 0)'],
			[{ prompt: 'x', seconds: '' }, '"Seconds" must be a whole number'],
			[{ prompt: 'x', seconds: 0 }, '"Seconds" must be at least 1, not 0 (item 0)'],
			[{ prompt: 'x', size: '1280*720' }, '"Size" must have the form <width>x<height> (item 0)'],
			[{ prompt: 'x', size: '0x720' }, '"Size" must have the form'],
			[{ prompt: '  ' }, '"Prompt" must not be empty (item 0)'],
			[{ prompt: 'x', options: { pollIntervalSeconds: 2 } }, '"Poll Interval (Seconds)" must be from 5 to 600, not 2 (item 0)'],
			[{ prompt: 'x', options: { maxWaitSeconds: 3 } }, '"Max Wait (Seconds)" must be from the poll interval (5) to 86400, not 3 (item 0)'],
			[{ prompt: 'x', options: { extraBody: '{oops' } }, '"Extra Body Fields" is not valid JSON'],
			// an expression that gives an object would be sent as "[object Object]"
			[{ prompt: { text: 'a fox' } }, '"Prompt" must be text, but the expression gave an object (item 0)'],
			[{ prompt: ['a', 'fox'] }, '"Prompt" must be text, but the expression gave a list (item 0)'],
			[{ operation: 'getStatus', taskId: { task_id: 'task_1' } }, '"Task ID" must be text, but the expression gave an object (item 0)'],
			[{ operation: 'download', taskId: { task_id: 'task_1' } }, '"Task ID" must be text, but the expression gave an object (item 0)'],
		];
		for (const [parameters, message] of cases) {
			expect((await runError(parameters)).message).toContain(message);
		}
		expect(env.gateway.requests).toHaveLength(0);
	});

	it('does not submit again after a 502 (the task may exist: paying twice is worse), and says so', async () => {
		env.gateway.queueFaults(SUBMIT, ['502-html']);
		const error = await runError({ prompt: 'once only' });
		expect(error.message).toContain('HTTP 502');
		expect(error.description).toBe('The gateway may have created the task: it was not submitted again, so as not to pay twice. Check the gateway console before running this item again.');
		expect(submits()).toHaveLength(1);
	});

	it('retries a rate-limited submit and reports an unknown model in plain words', async () => {
		const { output } = await run({ prompt: 'busy [429-once]' });
		expect(output[0].json.status).toBe('SUCCESS');
		expect(submits()).toHaveLength(2);

		const error = await runError({ prompt: 'x', model: { __rl: true, mode: 'id', value: 'video-9-nope' } });
		expect(error.message).toMatch(/^Submitting the video task failed: the gateway has no channel for this model \(HTTP 503\)/);
		expect(error.description).toContain('Pick a model from the list, or check the model id for typos.');
		expect(error.description).not.toContain('may have created the task');
		expect(polls()).toHaveLength(3);
	});
});

describe('submit, get status, download', () => {
	it('submit returns the task at once; get status follows it; download fetches the video', async () => {
		const submitted = await run({ operation: 'submit', prompt: 'later' });
		const taskId = submitted.output[0].json.task_id as string;
		expect(submitted.output[0].json).toEqual({ task_id: taskId, status: 'QUEUED', progress: '0%', model: 'video-2-0-fast-260128' });
		expect(polls()).toHaveLength(0);

		const statuses: IDataObject[] = [];
		for (let i = 0; i < 3; i++) statuses.push((await run({ operation: 'getStatus', taskId })).output[0].json);
		expect(statuses.map((s) => s.status)).toEqual(['NOT_START', 'IN_PROGRESS', 'SUCCESS']);
		expect(statuses[2]).toEqual({ task_id: taskId, status: 'SUCCESS', progress: '100%', result_url: `${env.gateway.fileBaseUrl}/files/videos/${taskId}.mp4` });

		const downloaded = await run({ operation: 'download', taskId });
		expect(downloaded.output[0].json).toMatchObject({ task_id: taskId, status: 'SUCCESS' });
		expect(downloaded.output[0].binary?.data).toMatchObject({ mimeType: 'video/mp4', fileName: `video-${taskId}.mp4` });
		expect(binaryBytes(downloaded.output[0]).equals(sampleVideo)).toBe(true);
		expect(downloaded.binaries[0].streamed).toBe(true);
	});

	it('get status reports a failure as data; download refuses unfinished and failed tasks with the task id', async () => {
		const failed = (await run({ operation: 'submit', prompt: 'x [fail]', options: {} })).output[0].json.task_id as string;
		const running = (await run({ operation: 'submit', prompt: 'x [never]' })).output[0].json.task_id as string;
		for (let i = 0; i < 3; i++) await run({ operation: 'getStatus', taskId: failed });
		const status = (await run({ operation: 'getStatus', taskId: failed })).output[0].json;
		expect(status).toMatchObject({ task_id: failed, status: 'FAILURE', fail_reason: expect.stringContaining('content policy') });

		expect((await runError({ operation: 'download', taskId: failed })).message).toContain(`Video task ${failed} failed: "content policy`);
		const notYet = await run({ operation: 'download', taskId: running }, { continueOnFail: true });
		expect(notYet.output[0].json).toMatchObject({ task_id: running, status: 'NOT_START', error: `Video task ${running} is not finished yet (status NOT_START, progress 0%)` });
	});

	it('names an unknown task id and refuses an empty one before any request', async () => {
		const error = await runError({ operation: 'getStatus', taskId: 'task_doesnotexist' });
		expect(error.message).toBe('Checking video task task_doesnotexist failed: the gateway does not know this task ID (HTTP 404): "task_not_exist" (code task_not_exist)');
		expect(error.description).toContain('Check the task ID (the task_id that Submit or Generate returned), and that the credential is the one that submitted it');
		env.gateway.reset();
		expect((await runError({ operation: 'download', taskId: ' ' })).message).toBe('"Task ID" must not be empty (item 0)');
		expect(env.gateway.requests).toHaveLength(0);
	});
});

describe('at scale', () => {
	it('Resume Task ID waits for and downloads a task an earlier run paid for, without submitting it again', async () => {
		const first = await run({ prompt: 'paid once', options: { downloadVideo: false } });
		const taskId = String(first.output[0].json.task_id);
		const paid = submits().length;
		const { output } = await run({ prompt: '', options: { resumeTaskId: taskId } });
		expect(submits()).toHaveLength(paid);
		expect(output[0].json).toMatchObject({ task_id: taskId, status: 'SUCCESS' });
		expect(binaryBytes(output[0]).equals(sampleVideo)).toBe(true);
	});

	it('Resume Task ID left empty on some items: only those are submitted', async () => {
		const first = await run({ prompt: 'paid once', options: { downloadVideo: false } });
		const taskId = String(first.output[0].json.task_id);
		const { output } = await run((i) => ({ prompt: `item ${i}`, options: { downloadVideo: false, resumeTaskId: i === 0 ? taskId : '' } }), { items: items(2) });
		expect(submits().map((r) => JSON.parse(r.rawBody).prompt)).toEqual(['paid once', 'item 1']);
		expect(output.map((item) => item.json.status)).toEqual(['SUCCESS', 'SUCCESS']);
	});

	it('spreads the status checks of many videos within the budget of checks per second', async () => {
		const clock = createFakeClock(0, 5);
		const { output } = await run((i) => ({ prompt: `clip ${i}`, options: { downloadVideo: false, statusChecksPerSecond: 4 } }), { items: items(12), clock });
		expect(output.every((item) => item.json.status === 'SUCCESS')).toBe(true);
		// The 12 checks due together each round wait their turn, 275 ms apart (4 per second, 10 % margin), not sent at once.
		const spreads = clock.sleeps.filter((ms) => ms < 5000);
		expect(spreads.length).toBeGreaterThanOrEqual(11);
		expect(Math.min(...spreads)).toBeGreaterThanOrEqual(275 - 1e-6);
	});

	it('refuses a budget of status checks that is not a positive number, before any request', async () => {
		const error = await runError({ prompt: 'x', options: { statusChecksPerSecond: 0 } });
		expect(error.message).toMatch(/"Status Checks per Second" must be a number above 0/);
		expect(submits()).toHaveLength(0);
	});
});
