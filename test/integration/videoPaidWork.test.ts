/**
 * Generate and Submit list a failed run's paid work with the same words and the same data (one
 * listing, paidWork.ts): the other items' tasks, a submit that may have created a task, the items
 * never submitted. Against a loopback gateway over real HTTP.
 */
import type { IDataObject } from 'n8n-workflow';

import { runVideoNode, startScriptedVideoGateway } from './videoLoopback';
import type { ScriptedGateway } from './videoLoopback';

let gw: ScriptedGateway | undefined;
afterEach(async () => {
	await gw?.close();
	gw = undefined;
});

/** Items 0 to 2 go out at once (Concurrency 3): item 2 is refused at once, items 0 and 1 answer after it (a task; a 500). */
async function runFailedByItem2(operation: string, items: number) {
	gw = await startScriptedVideoGateway({
		submit: (_n, body, self) => {
			const prompt = String((JSON.parse(body) as IDataObject).prompt);
			if (prompt === 'p2') return { status: 400, body: { error: { message: 'bad prompt' } } };
			if (prompt === 'p1') return { status: 500, delayMs: 400, body: { error: { message: 'upstream broke' } } };
			return { ...self.createTask(`task_of_${prompt}`), delayMs: 300 };
		},
		doneAfterMs: Infinity,
	});
	const run = await runVideoNode(gw, (i) => ({ operation, prompt: `p${i}`, options: { concurrency: 3, maxWaitSeconds: 20 } }), { items });
	return { run, description: run.error?.description ?? '', fields: (run.error?.context?.itemFields as IDataObject) ?? {} };
}

describe.each(['submit', 'generate'])('%s: a run that item 2 fails', (operation) => {
	it('lists the task of item 0 and the unconfirmed submit of item 1, in the same words and data', async () => {
		const { run, description, fields } = await runFailedByItem2(operation, 3);
		expect(run.error?.message).toContain('bad prompt');
		expect(description).toContain('Tasks of the other items, to fetch with Get Status or Download: item 0: task_of_p0 (QUEUED');
		expect(description).toContain('The submit of item 1 was answered HTTP 500: the gateway may have created a task (check its console).');
		expect(fields).toMatchObject({ tasks: [{ item: 0, task_id: 'task_of_p0' }], unconfirmedItems: [1], refusedTasks: [], notSubmittedItems: [] });
		// the task id whole in a log line's text too
		expect(run.logs.map((line) => line.message).join('\n')).toContain('task_of_p0');
	});
});

describe.each(['submit', 'generate'])('%s: the items after the failure', (operation) => {
	it('are never submitted, and the error names them', async () => {
		const { description, fields } = await runFailedByItem2(operation, 5);
		expect(gw?.submits()).toHaveLength(3);
		expect(description).toContain('Not submitted: items 3, 4.');
		expect(fields).toMatchObject({ notSubmittedItems: [3, 4] });
	});
});
