/**
 * The one listing of a video run's paid work (Generate and Submit both): every created task with
 * its status, refused task IDs, submits that may have created a task (one sentence per way they
 * ended), items never submitted; the item that failed the run left out of the words (its own error
 * says it) but kept in the data.
 */
import { PaidWork } from '../../nodes/GatewayVideoGenerate/paidWork';
import { GatewayError } from '../../nodes/shared/failures/errors';

const noAnswer = () => new GatewayError({ kind: 'network', headline: 'Submitting the video task failed: no answer', mayHaveActed: true });
const answered502 = () => new GatewayError({ kind: 'server', headline: 'Submitting the video task failed (HTTP 502)', status: 502, mayHaveActed: true });
const refusedId = (taskId: string) => new GatewayError({ kind: 'protocol', headline: 'a task ID that is no path', status: 200, mayHaveActed: true, fields: { task_id: taskId } });
const refusal = () => new GatewayError({ kind: 'bad_request', headline: 'bad prompt', status: 400 });

function sampleRun(): PaidWork {
	const paid = new PaidWork();
	paid.setTask(4, { task_id: 'task_4', status: 'IN_PROGRESS', progress: '40%' });
	paid.setTask(0, { task_id: 'task_0', status: 'QUEUED' });
	paid.submitFailed(1, noAnswer());
	paid.submitFailed(5, noAnswer());
	paid.submitFailed(6, answered502());
	paid.submitFailed(2, refusedId('..'));
	paid.submitFailed(3, refusal());
	paid.skip(8);
	paid.skip(7);
	return paid;
}

describe('PaidWork', () => {
	it('lists every part in words, item by item, the failed item left out', () => {
		expect(sampleRun().addendum(3).text).toBe(
			[
				'Tasks of the other items, to fetch with Get Status or Download: item 0: task_0 (QUEUED); item 4: task_4 (IN_PROGRESS, 40%).',
				'Tasks that may be charged but cannot be checked (the gateway answered an ID that is no task path): item 2: task "..".',
				'The submit of items 1, 5 got no answer: the gateway may have created a task (check its console).',
				'The submit of item 6 was answered HTTP 502: the gateway may have created a task (check its console).',
				'Not submitted: items 7, 8.',
			].join(' '),
		);
	});

	it('keeps the failed item in the data, and leaves out of the words whatever is about it', () => {
		const { text, fields } = sampleRun().addendum(4);
		expect(text).not.toContain('task_4');
		expect(fields).toEqual({
			tasks: [
				{ item: 0, task_id: 'task_0', status: 'QUEUED', progress: null },
				{ item: 4, task_id: 'task_4', status: 'IN_PROGRESS', progress: '40%' },
			],
			unconfirmedItems: [1, 5, 6],
			refusedTasks: [{ item: 2, task_id: '..' }],
			notSubmittedItems: [7, 8],
		});
		expect(sampleRun().addendum(2).text).not.toContain('cannot be checked');
		expect(sampleRun().addendum(6).text).not.toContain('HTTP 502');
	});

	it('after a Stop (no failed item) names the run\'s tasks as its own', () => {
		expect(sampleRun().addendum().text).toMatch(/^Video tasks of this run, to fetch with Get Status or Download: item 0: task_0 \(QUEUED\); item 4: /);
	});

	it('says nothing, and may charge nothing, when nothing reached the gateway', () => {
		const paid = new PaidWork();
		paid.submitFailed(0, refusal());
		expect(paid.mayBeCharged).toBe(false);
		expect(paid.addendum(0).text).toBeUndefined();
		expect(sampleRun().mayBeCharged).toBe(true);
	});
});
