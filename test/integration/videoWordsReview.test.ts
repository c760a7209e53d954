/**
 * Review of issue 26's video words, against loopback gateways over real HTTP: a paid submit answered
 * 5xx with a code that names a missing item may still have created its task, and task ids of
 * 10,000 characters stay whole in the output, the error and the log line.
 */
import { runVideoNode, startScriptedVideoGateway } from './videoLoopback';
import type { ScriptedGateway, VideoRun } from './videoLoopback';

let gw: ScriptedGateway | undefined;
afterEach(async () => {
	await gw?.close();
	gw = undefined;
});

const shown = (run: VideoRun) => `${run.error?.message} ${run.error?.description}`;

describe('a paid submit answered 5xx with a code that names a missing item', () => {
	it.each([500, 502])('%i: the task may exist, the submit was sent once, and the error says so', async (status) => {
		gw = await startScriptedVideoGateway({ submit: () => ({ status, body: { error: { code: 'upstream_task_not_found', message: 'upstream task not found' } } }) });
		const run = await runVideoNode(gw, { operation: 'submit' });
		expect(gw.submits()).toHaveLength(1);
		expect(shown(run)).toContain('The gateway may have created the task');
	});
});

describe('task ids of 10,000 characters', () => {
	const LONG = `task_${'x'.repeat(4_990)}MID${'y'.repeat(5_000)}`;

	it('submit: whole in the output and the log line', async () => {
		gw = await startScriptedVideoGateway({ submit: (_n, _body, gateway) => gateway.createTask(LONG) });
		const run = await runVideoNode(gw, { operation: 'submit' });
		expect(run.error).toBeUndefined();
		expect(run.output[0].json.task_id).toBe(LONG);
		expect(run.logs.map((line) => line.message).join('\n')).toContain(LONG);
	});

	it('get status of an unknown task: whole in the error', async () => {
		gw = await startScriptedVideoGateway();
		const run = await runVideoNode(gw, { operation: 'getStatus', taskId: LONG });
		expect(run.error).toBeDefined();
		expect(shown(run)).toContain(LONG);
	});

	it('generate past Max Wait: whole in the error and the log line', async () => {
		gw = await startScriptedVideoGateway({ doneAfterMs: Infinity, submit: (_n, _body, gateway) => gateway.createTask(LONG) });
		const run = await runVideoNode(gw, { operation: 'generate', options: { maxWaitSeconds: 5, pollIntervalSeconds: 5 } });
		expect(run.error?.message).toMatch(/Max Wait|still running/);
		expect(shown(run)).toContain(LONG);
		expect(run.logs.map((line) => line.message).join('\n')).toContain(LONG);
	});
});
