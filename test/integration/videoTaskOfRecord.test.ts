/**
 * The task of record (issue 18): the id the submit returned, or the Resume Task ID, is the one
 * polled, reported and downloaded. A status answer naming another task is an error quoting both
 * ids and is never followed; task ids are one path segment, checked before any request; a huge id
 * is shortened in messages but kept whole in the item; Max Wait counts from the submit, its 429
 * waits included; and "still running after N s" is the time waited since the submit.
 */
import type { IDataObject } from 'n8n-workflow';

import { realClock } from '../../nodes/shared/wire/timing';
import { createFakeClock } from '../helpers/fakeClock';
import { SUBMIT_PATH, startScriptedVideoGateway, runVideoNode } from './videoLoopback';
import type { ScriptedGateway, VideoScript } from './videoLoopback';

let gw: ScriptedGateway | undefined;
afterEach(async () => {
	await gw?.close();
	gw = undefined;
});

async function gateway(script: VideoScript = {}): Promise<ScriptedGateway> {
	gw = await startScriptedVideoGateway(script);
	return gw;
}

const fieldsOf = (error: unknown) => ((error as { context?: { itemFields?: IDataObject } }).context?.itemFields ?? {}) as IDataObject;
const downloads = (g: ScriptedGateway) => g.requests.filter((r) => r.path.startsWith('/files/'));

describe('a status answer naming another task', () => {
	it('is an error quoting both ids: no poll of the foreign id, no download of its video', async () => {
		const g = await gateway({
			status: (taskId, n, self) => {
				self.createTask('task_other');
				// The first check answers for another, finished task.
				return n === 1 ? { body: { code: 'success', data: { task_id: 'task_other', status: 'SUCCESS', progress: '100%', result_url: `${self.baseUrl}/files/task_other.mp4` } } } : self.taskState(taskId);
			},
			doneAfterMs: Infinity,
		});
		const result = await runVideoNode(g, { options: { maxWaitSeconds: 30 } });
		expect(result.output).toHaveLength(0);
		expect(result.error?.message).toContain('task_1');
		expect(result.error?.message).toContain('task_other');
		expect(fieldsOf(result.error).task_id).toBe('task_1');
		expect(g.checks('task_other')).toHaveLength(0);
		expect(downloads(g)).toHaveLength(0);
	});

	it('also when it is still running: the next checks stay on the submitted id', async () => {
		const g = await gateway({
			status: (taskId, n, self) => (n === 1 ? { body: { code: 'success', data: { task_id: 'task_9', status: 'IN_PROGRESS' } } } : self.taskState(taskId)),
		});
		const result = await runVideoNode(g, { options: { maxWaitSeconds: 30 } }, { continueOnFail: true });
		expect(result.output[0].json.task_id).toBe('task_1');
		expect(result.output[0].json.error).toContain('task_9');
		expect(g.checks().every((check) => check.taskId === 'task_1')).toBe(true);
	});

	it('Get Status and Download refuse an answer for another task too', async () => {
		const g = await gateway({
			status: (_taskId, _n, self) => {
				self.createTask('task_other');
				return { body: { code: 'success', data: { task_id: 'task_other', status: 'SUCCESS', result_url: `${self.baseUrl}/files/task_other.mp4` } } };
			},
		});
		const status = await runVideoNode(g, { operation: 'getStatus', taskId: 'task_mine' });
		expect(status.error?.message).toContain('task_mine');
		expect(status.error?.message).toContain('task_other');
		const download = await runVideoNode(g, { operation: 'download', taskId: 'task_mine' });
		expect(download.error?.message).toContain('task_other');
		expect(downloads(g)).toHaveLength(0);
	});
});

describe('task ids are one path segment, checked before any request', () => {
	it.each(['.', '..', 'a/b', '../task_1', 'task\n1', 'task\u00001'])('Resume Task ID %j is refused naming the field and the item', async (bad) => {
		const g = await gateway();
		const result = await runVideoNode(g, { options: { resumeTaskId: bad } });
		expect(result.error?.message).toMatch(/Resume Task ID/);
		expect(result.error?.message).toMatch(/item 0|\[item 0\]/i);
		expect(g.requests).toHaveLength(0);
	});

	it.each(['getStatus', 'download'])('%s Task ID ".." is refused before any request', async (operation) => {
		const g = await gateway();
		const result = await runVideoNode(g, { operation, taskId: '..' });
		expect(result.error?.message).toMatch(/Task ID/);
		expect(g.requests).toHaveLength(0);
	});

	it('a submit answering a task id that is no path segment is an error that quotes it and polls nothing', async () => {
		const g = await gateway({ submit: () => ({ body: { task_id: '..', status: 'queued' } }) });
		const result = await runVideoNode(g, {});
		expect(result.error?.message).toContain('".."');
		expect(g.checks()).toHaveLength(0);
		expect(g.requests.filter((r) => r.method === 'GET')).toHaveLength(0);
	});

	it('an id with reserved characters is sent encoded, as one segment', async () => {
		const g = await gateway({ submit: (_n, _body, self) => self.createTask('task?x=1#y') });
		const result = await runVideoNode(g, {});
		expect(result.error).toBeUndefined();
		expect(g.checks()[0].path).toBe(`${SUBMIT_PATH}/task%3Fx%3D1%23y`);
		expect(result.output[0].json.task_id).toBe('task?x=1#y');
	});
});

describe('a 20,000-character task id', () => {
	const huge = `task_${'x'.repeat(20_000)}`;

	// A log line's message is the only text n8n's default console log prints: the id stays whole there.
	it('is shortened in the error message and kept whole in the item, its fields and the log line', async () => {
		const g = await gateway({ submit: (_n, _body, self) => self.createTask(huge), doneAfterMs: Infinity });
		const result = await runVideoNode(g, { options: { maxWaitSeconds: 10 } }, { continueOnFail: true });
		const item = result.output[0].json;
		expect(item.task_id).toBe(huge);
		expect(String(item.error).length).toBeLessThan(600);
		expect(String(item.error)).toContain('task_xxxx');
		const created = result.logs.find((line) => line.message.startsWith('Model Gateway: video task created'));
		expect(created?.message).toContain(huge);
		expect(created?.meta?.taskId).toBe(huge);
	});
});

describe('Max Wait covers the whole task, its submit included', () => {
	it('a submit held by 429s (Retry-After 2 s) gives up within Max Wait, not after 20 retries', async () => {
		const g = await gateway({ submit: () => ({ status: 429, headers: { 'retry-after': '2' }, body: { error: { message: 'rate limited' } } }) });
		const result = await runVideoNode(g, { options: { maxWaitSeconds: 5 } }, { clock: realClock });
		expect(result.error).toBeDefined();
		expect(result.ms).toBeLessThan(6500);
		expect(g.submits().length).toBeLessThanOrEqual(3);
	});

	it('a submit that took 3 s leaves 2 s of a 5 s Max Wait: the task is checked by then and reported after the time really waited', async () => {
		const g = await gateway({ submitLatencyMs: 3000, doneAfterMs: Infinity });
		const result = await runVideoNode(g, { options: { maxWaitSeconds: 5 } }, { clock: realClock, continueOnFail: true });
		// Max Wait from the submit: the whole task took 5 s, not 3 s of submit plus 5 s of waiting
		expect(result.ms).toBeLessThan(6500);
		// Checked once, at the end of Max Wait, before it is reported as still running.
		expect(g.checks()).toHaveLength(1);
		expect(g.checks()[0].at - g.submits()[0].at).toBeLessThan(5500);
		const waited = Number(/still running after (\d+) s/.exec(String(result.output[0].json.error))?.[1]);
		expect(waited).toBeGreaterThanOrEqual(4);
		expect(waited).toBeLessThanOrEqual(6);
	});
});

describe('"still running after N s"', () => {
	it('is the time waited since the submit, also when the last check came long before the end', async () => {
		// Each check answers only after 8 s (fake time): the wait ends long after the last check was sent.
		const clock = createFakeClock(0, 5);
		const g = await gateway({
			doneAfterMs: Infinity,
			status: (taskId, _n, self) => {
				clock.advance(8000);
				return self.taskState(taskId);
			},
		});
		const result = await runVideoNode(g, { options: { maxWaitSeconds: 20, pollIntervalSeconds: 5 } }, { clock, continueOnFail: true });
		const waited = Number(/still running after (\d+) s/.exec(String(result.output[0].json.error))?.[1]);
		expect(waited).toBe(Math.round(clock.now() / 1000));
	});
});

describe('task ids where a user looks (issue 20)', () => {
	it('a timed-out task: its id in the text of a warning line, and in the execution custom data', async () => {
		const g = await gateway({ doneAfterMs: Infinity });
		const result = await runVideoNode(g, { options: { maxWaitSeconds: 10 } }, { continueOnFail: true });
		const line = result.logs.find((log) => log.level === 'warn' && log.message.includes('still running'));
		expect(line?.message).toBe('Model Gateway: video task task_1 is still running after 10 s (Max Wait); fetch it later with Get Status or Download (item 0, execution exec-77, node "Make Videos")');
		expect(line?.meta).toMatchObject({ taskId: 'task_1', itemIndex: 0, executionId: 'exec-77' });
		expect(result.customData.get('video_Make_Videos')).toBe('0/1 done, 1 waiting: task_1');
	});

	it('a task whose last check failed: the warning line says why, in the words of its error', async () => {
		const g = await gateway({ doneAfterMs: Infinity, status: () => ({ status: 429, body: { error: { message: 'slow down' } } }) });
		const result = await runVideoNode(g, { options: { maxWaitSeconds: 10 } }, { continueOnFail: true });
		const line = result.logs.find((log) => log.level === 'warn' && log.message.includes('task_1'));
		// every check refused: how many in a row, and the last one's words
		const [, checks, why] = /: (\d+ checks in a row failed \(the last: (.+)\)); last status/.exec(String(result.output[0].json.error)) ?? [];
		expect(why).toBe('the gateway asked to slow down (rate limit)');
		expect(line?.message).toContain(`; ${checks})`);
		expect(line?.message).toMatch(/fetch it later with Get Status or Download \(item 0, execution exec-77, node "Make Videos"\)$/);
	});

	it('a Stop: every id in the text of the log lines (100 tasks a line) and as many as fit in the custom data', async () => {
		const controller = new AbortController();
		// stopped once every task has been checked once (so the node knows them all)
		const g = await gateway({
			doneAfterMs: Infinity,
			status: (taskId, n, self) => {
				if (n === 150) controller.abort();
				return self.taskState(taskId);
			},
		});
		const result = await runVideoNode(g, { options: { concurrency: 50 } }, { items: 150, clock: createFakeClock(0, 5), abortSignal: controller.signal });
		expect(result.error?.message).toBe('The run was stopped while waiting for 150 video tasks');
		const lines = result.logs.filter((log) => log.level === 'warn' && log.message.startsWith('Model Gateway: video run stopped'));
		expect(lines.map((line) => line.message.slice(0, line.message.indexOf(']: ') + 3))).toEqual([
			'Model Gateway: video run stopped while 150 tasks may still be running (execution exec-77, node "Make Videos") [1/2]: ',
			'Model Gateway: video run stopped while 150 tasks may still be running (execution exec-77, node "Make Videos") [2/2]: ',
		]);
		const text = lines.map((line) => line.message).join('\n');
		for (const id of g.tasks.keys()) expect(text).toMatch(new RegExp(`: ${id} \\(`));
		const custom = result.customData.get('video_Make_Videos') ?? '';
		expect(custom.length).toBeLessThanOrEqual(255);
		expect(custom).toMatch(/^0\/150 done, 150 waiting: task_1 task_2 .* \+\d+ more$/);
	});
});
