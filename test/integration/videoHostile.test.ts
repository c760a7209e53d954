/**
 * Gateway Video Generate against the hostile loopback gateway (test/hostile): the key printed in
 * 200 answers, in a 401 without its `sk-`, and in a fail_reason; errors in 200 answers; the end
 * states beyond FAILURE; a status answer that drips a space at a time (Max Wait is a hard limit);
 * a submit that created the task and then answered 502 (not paid twice); thirty items where one
 * fails (every other task is named); a Stop during the wait; links that are not videos; a link
 * redirected to another origin. Every n8n error and error item is checked for the key.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { executeVideo } from '../../nodes/GatewayVideoGenerate/router';
import { realClock } from '../../nodes/shared/wire/timing';
import { startHostileGateway } from '../hostile';
import type { HostileGateway } from '../hostile';
import { createExecuteContext } from '../helpers/executeContext';
import { BUSY_MARGIN_MS, eventually, once } from '../helpers/busy';
import { createFakeClock } from '../helpers/fakeClock';
import type { FakeClock } from '../helpers/fakeClock';

const KEY = 'sk-video-test-0123456789abcdef';
const SECRET_PART = KEY.slice(3);
const SUBMIT = '/v1/video/generations';
let h: HostileGateway;

beforeAll(async () => {
	h = await startHostileGateway({ dripIntervalMs: 200, videoPollsToFinish: 2 });
});
afterAll(async () => {
	await h.close();
});
beforeEach(() => h.reset());

interface Log {
	level: string;
	message: string;
	meta?: IDataObject;
}

interface RunOptions {
	items?: number;
	continueOnFail?: boolean;
	clock?: FakeClock | typeof realClock;
	abortSignal?: AbortSignal;
}

type Parameters = IDataObject | ((itemIndex: number) => IDataObject);

async function run(parameters: Parameters, options: RunOptions = {}) {
	const logs: Log[] = [];
	const withDefaults = (itemIndex: number) => ({
		operation: 'generate',
		model: { __rl: true, mode: 'id', value: 'video-2-0-fast-260128' },
		seconds: 5,
		size: '1280x720',
		...(typeof parameters === 'function' ? parameters(itemIndex) : parameters),
	});
	const context = createExecuteContext({
		parameters: withDefaults,
		items: Array.from({ length: options.items ?? 1 }, (_, i) => ({ json: { i } })),
		continueOnFail: options.continueOnFail,
		abortSignal: options.abortSignal,
		credentials: { apiKey: KEY, baseUrl: h.baseUrl },
		nodeName: 'Make Videos',
		nodeType: 'n8n-nodes-model-gateway.gatewayVideoGenerate',
	});
	const ctx = context.ctx as IExecuteFunctions & { logger: Record<string, (message: string, meta?: IDataObject) => void> };
	for (const level of ['debug', 'info', 'warn', 'error']) ctx.logger[level] = (message, meta) => logs.push({ level, message, meta });
	(ctx as { getExecutionId: () => string }).getExecutionId = () => 'exec-77';
	let output: INodeExecutionData[] | undefined;
	let error: (Error & { description?: string; context?: IDataObject }) | undefined;
	try {
		[output] = await executeVideo(context.ctx, { clock: options.clock ?? createFakeClock(0, 5) });
	} catch (caught) {
		error = caught as Error;
	}
	return { output: output ?? [], error, logs, ...context };
}

/** Everything n8n would show, log or store of a run: the thrown error (all its fields), the items, our log lines. */
function expectNoKey(result: Awaited<ReturnType<typeof run>>) {
	const shown = JSON.stringify({
		error: result.error,
		message: result.error?.message,
		description: result.error?.description,
		context: result.error?.context,
		items: result.output.map((item) => item.json),
		logs: result.logs,
	});
	expect(shown).not.toContain(KEY);
	expect(shown).not.toContain(SECRET_PART);
}

const itemFields = (error: unknown) => ((error as { context?: { itemFields?: IDataObject } }).context?.itemFields ?? {}) as IDataObject;
const createdTasks = () => [...h.tasks.keys()];

describe('the key is never shown', () => {
	it('a submit answered 200 {"code":"invalid_token","message":"invalid token Bearer sk-…"} is a key error, masked', async () => {
		const result = await run({ prompt: 'hello [hostile:token-in-200]' });
		expect(result.error?.message).toBe('Submitting the video task failed: the gateway refused the API key: "invalid token Bearer ***" (code invalid_token)');
		expect(result.error?.description).toContain('Check the API Key');
		expectNoKey(result);
		expect(h.count({ method: 'POST', path: SUBMIT })).toBe(1);
	});

	it('a status answer with the key in a 200 ends the wait at once, masked, naming the task (also as an error item)', async () => {
		const result = await run({ prompt: 'hello [hostile:poll-token-in-200]' }, { continueOnFail: true });
		const [taskId] = createdTasks();
		expect(result.output[0].json).toMatchObject({ task_id: taskId, status: 'QUEUED', kind: 'auth' });
		expect(result.output[0].json.error).toBe(`Checking video task ${taskId} failed: the gateway refused the API key: "invalid token Bearer ***" (code invalid_token)`);
		expect(h.count({ method: 'GET' })).toBe(1);
		expectNoKey(result);
	});

	it('a 401 that quotes the key without its sk- is masked', async () => {
		const result = await run({ prompt: 'hello [hostile:401-secret-part]' });
		expect(result.error?.message).toBe('Submitting the video task failed: the gateway refused the API key (HTTP 401): "无效的令牌 token=***"');
		expectNoKey(result);
	});

	it('a fail_reason that quotes the Authorization header is masked, in the error and in the error item', async () => {
		const thrown = await run({ prompt: 'hello [hostile:fail-reason-key]' });
		const [taskId] = createdTasks();
		expect(thrown.error?.message).toBe(`Video task ${taskId} failed: "upstream rejected request with header Authorization: Bearer ***"`);
		expect(itemFields(thrown.error)).toMatchObject({ kind: 'task_failed', task_id: taskId, status: 'FAILURE', fail_reason: 'upstream rejected request with header Authorization: Bearer ***' });
		expectNoKey(thrown);

		h.reset();
		const kept = await run({ prompt: 'hello [hostile:fail-reason-key]' }, { continueOnFail: true });
		expect(kept.output[0].json).toMatchObject({ status: 'FAILURE', fail_reason: 'upstream rejected request with header Authorization: Bearer ***' });
		expectNoKey(kept);
	});
});

describe('errors in 200 answers', () => {
	it('a submit answered 200 with an error body, a list, a string or null fails quoting the gateway, never as a task', async () => {
		const scenarios = ['200-error-object', '200-type-error', '200-success-false', '200-code-msg', '200-empty-choices', '200-empty-array', '200-json-string', '200-null'];
		const result = await run((i) => ({ prompt: `x [hostile:${scenarios[i]}]` }), { items: scenarios.length, continueOnFail: true });
		const errors = result.output.map((item) => item.json.error as string);
		expect(errors).toEqual([
			'Submitting the video task failed: the gateway reported a failure: "upstream overloaded" (code overloaded)',
			'Submitting the video task failed: the gateway reported a failure: "Overloaded"',
			'Submitting the video task failed: the gateway reported a failure: "channel disabled"',
			'Submitting the video task failed: the gateway reported a failure: "internal error" (code 500)',
			'Submitting the video task failed: the gateway\'s answer has no task id: "{}"',
			'Submitting the video task failed: the gateway answered HTTP 200 with a list instead of a JSON object: "[]"',
			'Submitting the video task failed: the gateway answered HTTP 200 with a JSON string instead of a JSON object: ""bad gateway""',
			'Submitting the video task failed: the gateway answered HTTP 200 with null instead of a JSON object: "null"',
		]);
		expect(result.output.every((item) => item.json.task_id === undefined)).toBe(true);
		expect(h.count({ method: 'GET' })).toBe(0);
	});

	it('a status answer without a task record ends the wait at once, quoting it, with the task id', async () => {
		const result = await run({ prompt: 'x [hostile:poll-200-empty-choices]' }, { continueOnFail: true });
		const [taskId] = createdTasks();
		expect(result.output[0].json).toMatchObject({ kind: 'protocol', task_id: taskId, status: 'QUEUED' });
		expect(result.output[0].json.error).toBe(`Checking video task ${taskId} failed: the gateway's answer has no task record: "{}"`);
		expect(h.count({ method: 'GET' })).toBe(1);
	});
});

describe('end states', () => {
	it('CANCELLED, canceled, Expired, error, TIMEOUT, REJECTED and FAILED end the wait at once as failures naming the task', async () => {
		const words = ['CANCELLED', 'canceled', 'Expired', 'error', 'TIMEOUT', 'REJECTED', 'FAILED'];
		const result = await run((i) => ({ prompt: `x [hostile:state-${words[i]}]`, options: { maxWaitSeconds: 600 } }), { items: words.length, continueOnFail: true });
		for (const [i, item] of result.output.entries()) {
			const taskId = item.json.task_id as string;
			expect(taskId).toMatch(/^task_state-/);
			expect(item.json).toMatchObject({ kind: 'task_failed', status: words[i].toUpperCase(), fail_reason: `task ended: ${words[i]}` });
			const said = words[i] === 'FAILED' ? `Video task ${taskId} failed` : `Video task ${taskId} ended with status ${words[i].toUpperCase()}`;
			expect(item.json.error).toBe(`${said}: "task ended: ${words[i]}"`);
		}
		// two running answers, then the end state: three polls each, not 600 s of them
		expect(h.count({ method: 'GET' })).toBe(3 * words.length);
	});

	it('NOT_START, SUBMITTED and UNKNOWN keep the wait going until Max Wait', async () => {
		const words = ['NOT_START', 'SUBMITTED', 'UNKNOWN'];
		const result = await run((i) => ({ prompt: `x [hostile:state-${words[i]}]`, options: { maxWaitSeconds: 20 } }), { items: words.length, continueOnFail: true });
		expect(result.output.map((item) => [item.json.kind, item.json.status])).toEqual(words.map((word) => ['timeout', word]));
		expect(result.output[0].json.error).toMatch(/^Video task task_state-NOT_START_\w+ is still running after 20 s \(last status NOT_START, progress 0%\), so the node stopped waiting$/);
		// checked until Max Wait (which counts from each submit; the fake clock runs on while the
		// loopback submits are answered, so a later item may have lost an interval), never past it
		for (const task of h.tasks.values()) expect(task.polls).toBeGreaterThanOrEqual(2);
		expect(h.count({ method: 'GET' })).toBeLessThanOrEqual(4 * words.length);
	});
});

describe('Max Wait is a hard limit', () => {
	it('a status answer that drips one space at a time ends at Max Wait, in real time, quoting the task and its last status', async () => {
		const started = Date.now();
		const result = await run({ prompt: 'x [hostile:drip-status]', options: { pollIntervalSeconds: 5, maxWaitSeconds: 5 } }, { clock: realClock });
		const elapsed = Date.now() - started;
		const [taskId] = createdTasks();
		// the time really waited since the submit: the check at 5 s dripped until the wait end, 6.5 s (shown as 7);
		// the task was not seen running at Max Wait, only not seen done: the message says the last check failed, and how.
		// In real time the check goes out a little after 5 s on a busy machine: what is left of the 1.5 s is a bound, not a figure.
		const said = /^Video task (\S+) was not seen done within Max Wait \((\d+) s\): its last check failed \(no complete answer within the ([\d.]+) s left of Max Wait \(Seconds\)\); last status QUEUED, progress 0%, so the node stopped waiting$/;
		expect(result.error?.message).toMatch(said);
		const [, named, waitedSeconds, leftSeconds] = said.exec(result.error?.message ?? '') as RegExpExecArray;
		expect(named).toBe(taskId);
		expect(Number(waitedSeconds)).toBeGreaterThanOrEqual(7);
		expect(Number(waitedSeconds)).toBeLessThanOrEqual(Math.round(elapsed / 1000));
		expect(Number(leftSeconds)).toBeGreaterThan(0);
		expect(Number(leftSeconds)).toBeLessThanOrEqual(1.5);
		expect(itemFields(result.error)).toMatchObject({ kind: 'timeout', task_id: taskId, status: 'QUEUED' });
		// Max Wait 5 s, a poll at 5 s that drips (for ever): it is cut at the wait end (5 s + 1.5 s), with a margin for a busy machine
		expect(elapsed).toBeGreaterThanOrEqual(5000);
		expect(elapsed).toBeLessThan(6500 + BUSY_MARGIN_MS);
		const [poll] = h.requests.filter((r) => r.method === 'GET');
		expect(await eventually(() => poll.aborted)).toBe(true);
	});
});

describe('paid work is never lost nor paid twice', () => {
	it('a submit that created the task and then answered 502 is not sent again, and says the task may exist', async () => {
		const result = await run({ prompt: 'x [hostile:acted-then-502]' });
		expect(h.count({ method: 'POST', path: SUBMIT })).toBe(1);
		expect(h.counters.videoTasks).toBe(1);
		expect(result.error?.message).toMatch(/^Submitting the video task failed: the gateway reported a failure: it answered with an HTML page \("502 Bad Gateway"\) \(HTTP 502\)/);
		expect(result.error?.description).toBe('The gateway may have created the task: it was not submitted again, so as not to pay twice. Check the gateway console before running this item again.');
		expect(itemFields(result.error)).toMatchObject({ mayHaveActed: true });

		h.reset();
		const reset = await run({ prompt: 'x [hostile:acted-then-reset]' });
		expect(h.count({ method: 'POST', path: SUBMIT })).toBe(1);
		expect(reset.error?.description).toContain('may have created the task');
	});

	it('logs every task at info level the moment it is created: task id, item, execution id, node', async () => {
		const result = await run((i) => ({ prompt: `video ${i}` }), { items: 3 });
		const created = result.logs.filter((log) => log.message.startsWith('Model Gateway: video task created'));
		// the id, the item and the execution in the text itself: n8n's default log format prints only the message
		for (const [itemIndex, item] of result.output.entries()) {
			expect(created.map((log) => log.message)).toContain(`Model Gateway: video task created: ${String(item.json.task_id)} (item ${itemIndex}, execution exec-77, node "Make Videos")`);
		}
		expect(created.map((log) => log.meta).sort((a, b) => Number(a?.itemIndex) - Number(b?.itemIndex))).toEqual(
			result.output.map((item, itemIndex) => ({ taskId: item.json.task_id, itemIndex, executionId: 'exec-77', node: 'Make Videos' })),
		);
		expect(created.every((log) => log.level === 'info')).toBe(true);
	});

	it('thirty items, one fails without Continue On Fail: the error names every other task, in its description and its data', async () => {
		const failing = 17;
		const result = await run(
			(i) => ({ prompt: i === failing ? 'x [hostile:video-fail]' : `x ${i} [hostile:state-IN_PROGRESS]`, options: { concurrency: 30 } }),
			{ items: 30, clock: createFakeClock(0, 30) },
		);
		expect(h.counters.videoTasks).toBe(30);
		const failedTask = [...h.tasks.values()].find((task) => task.scenario === 'video-fail')?.id as string;
		expect(result.error?.message).toBe(`Video task ${failedTask} failed: "content policy"`);
		const others = createdTasks().filter((id) => id !== failedTask);
		expect(others).toHaveLength(29);
		for (const id of others) expect(result.error?.description).toContain(id);
		expect(result.error?.description).not.toMatch(/and \d+ more/);
		const listed = itemFields(result.error).tasks as IDataObject[];
		expect(listed).toHaveLength(30);
		expect(listed.map((task) => task.task_id).sort()).toEqual(createdTasks().sort());
		expect(listed[0]).toEqual({ item: 0, task_id: expect.stringMatching(/^task_state-IN_PROGRESS_/), status: 'IN_PROGRESS', progress: '0%' });
		expect(listed[failing]).toMatchObject({ item: failing, task_id: failedTask, status: 'FAILURE' });
		expectNoKey(result);
	});

	it('a Stop during the wait ends it at once (a poll in flight included) with every task of the run, and logs them', async () => {
		const controller = new AbortController();
		const clock = createFakeClock(0, 5);
		// the polls are answered, but for one that drips: the run is stopped once that one is on its way
		// (when the gateway has it, not at a wall-clock moment, which a busy machine may reach before the submits are answered)
		let stoppedAt = Number.POSITIVE_INFINITY;
		once(
			() => h.requests.some((r) => r.method === 'GET' && r.scenario === 'drip-status'),
			() => {
				stoppedAt = Date.now();
				controller.abort();
			},
		);
		const prompts = ['a [hostile:state-IN_PROGRESS]', 'b [hostile:drip-status]', 'c [hostile:state-QUEUED]'];
		const result = await run((i) => ({ prompt: prompts[i] }), { items: 3, clock, abortSignal: controller.signal });
		// at once: the dripping poll would go on for ever
		expect(Date.now() - stoppedAt).toBeLessThan(BUSY_MARGIN_MS);
		const ids = createdTasks();
		expect(ids).toHaveLength(3);
		expect(result.error?.message).toBe('The run was stopped while waiting for 3 video tasks');
		for (const id of ids) expect(result.error?.description).toContain(id);
		expect((itemFields(result.error).tasks as IDataObject[]).map((task) => task.task_id).sort()).toEqual(ids.sort());
		const warning = result.logs.find((log) => log.level === 'warn');
		expect(warning?.message).toMatch(/^Model Gateway: video run stopped while 3 tasks may still be running \(execution exec-77, node "Make Videos"\): item 0: /);
		// every task id in the message text, which n8n's default log format prints
		for (const id of ids) expect(warning?.message).toContain(id);
		expect((warning?.meta?.tasks as IDataObject[]).map((task) => task.task_id).sort()).toEqual(ids.sort());
		expect(warning?.meta?.executionId).toBe('exec-77');
		// no poll after the Stop (a poll already on its way may arrive a moment later)
		expect(h.requests.filter((r) => r.method === 'GET' && r.at > stoppedAt + BUSY_MARGIN_MS)).toHaveLength(0);
		const dripping = h.requests.filter((r) => r.method === 'GET' && r.scenario === 'drip-status');
		expect(dripping).toHaveLength(1);
		expect(await eventually(() => dripping[0].aborted)).toBe(true);
	});
});

describe('a Stop before the gateway answered the submit', () => {
	it('ends at once and says which submits may have created a task', async () => {
		const controller = new AbortController();
		// stopped at the first wait after item 1's task was checked (its answer read), while item 0's submit still waits for its headers
		let stoppedAt = Number.POSITIVE_INFINITY;
		const clock = createFakeClock(0, 5);
		clock.onSleep = () => {
			if (controller.signal.aborted || !h.requests.some((r) => r.method === 'GET')) return;
			stoppedAt = Date.now();
			controller.abort();
		};
		const result = await run((i) => ({ prompt: i === 0 ? 'x [hostile:slow-headers]' : 'y [hostile:state-IN_PROGRESS]' }), { items: 2, clock, abortSignal: controller.signal });
		expect(Date.now() - stoppedAt).toBeLessThan(BUSY_MARGIN_MS);
		const [taskId] = createdTasks().filter((id) => id.startsWith('task_state'));
		expect(result.error?.message).toBe('The run was stopped while waiting for 1 video task');
		expect(result.error?.description).toBe(
			`The tasks may still be running on the gateway (and be charged). Video tasks of this run, to fetch with Get Status or Download: item 1: ${taskId} (IN_PROGRESS, 0%). The submit of item 0 got no answer: the gateway may have created a task (check its console).`,
		);
		expect(itemFields(result.error)).toMatchObject({ kind: 'cancelled', unconfirmedItems: [0], tasks: [{ item: 1, task_id: taskId }] });
	});
});

describe('links that are not videos', () => {
	it('a link answering 200 with a JSON error, a text, a page, or "Forbidden" served as video/mp4 is refused, quoting it', async () => {
		const scenarios = ['link-json-error', 'link-forbidden-text', 'link-html', 'link-tiny-text-as-mp4'];
		const result = await run((i) => ({ prompt: `x [hostile:${scenarios[i]}]` }), { items: scenarios.length, continueOnFail: true });
		const errors = result.output.map((item) => item.json.error as string);
		const taskIds = result.output.map((item) => item.json.task_id as string);
		expect(errors[0]).toBe(`Downloading the video of task ${taskIds[0]} failed: the link answered with application/json instead of a video: "{"error":"link expired"}"`);
		expect(errors[1]).toBe(`Downloading the video of task ${taskIds[1]} failed: the link answered with text/plain instead of a video: "Forbidden"`);
		expect(errors[2]).toMatch(new RegExp(`^Downloading the video of task ${taskIds[2]} failed: the link answered with text/html instead of a video: "<!DOCTYPE html>`));
		expect(errors[3]).toBe(`Downloading the video of task ${taskIds[3]} failed: the link answered with text (served as video/mp4) instead of a video: "Forbidden"`);
		for (const item of result.output) {
			expect(item.binary).toBeUndefined();
			expect(item.json).toMatchObject({ kind: 'protocol', status: 'SUCCESS', result_url: expect.stringContaining('/files/link-') });
			expect(item.json.errorDescription).toContain(`Run the Download operation with task ID ${item.json.task_id}`);
		}
	});

	it('a video link redirected to a sibling host is followed without the key', async () => {
		const result = await run({ prompt: 'x [hostile:redirect-sibling-302]' });
		expect(result.error).toBeUndefined();
		expect(result.output[0].binary?.data.mimeType).toBe('video/mp4');
		expect(h.count({ origin: 'sibling' })).toBe(1);
		expect(h.leakedAuthorization()).toEqual([]);
	});
});
