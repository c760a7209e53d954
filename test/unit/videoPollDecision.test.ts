import {
	FAILURE_RUN_LIMIT,
	decideAfterPoll,
	describeOutcome,
	failureRunIsFatal,
	isPassingPollFailure,
	mergeRecords,
	nextWakeAt,
	normaliseProgress,
	normaliseStatus,
	phaseOf,
	readStatusAnswer,
	readSubmitAnswer,
} from '../../nodes/GatewayVideoGenerate/pollDecision';
import type { WatchState } from '../../nodes/GatewayVideoGenerate/pollDecision';

describe('task states', () => {
	it('normalises case, spaces and hyphens, and names a missing status UNKNOWN', () => {
		expect(normaliseStatus('queued')).toBe('QUEUED');
		expect(normaliseStatus(' in-progress ')).toBe('IN_PROGRESS');
		expect(normaliseStatus('')).toBe('UNKNOWN');
		expect(normaliseStatus(undefined)).toBe('UNKNOWN');
		expect(normaliseStatus({})).toBe('UNKNOWN');
	});

	it('treats only plain success and failure words as finished; everything else keeps polling', () => {
		expect(phaseOf('SUCCESS')).toBe('success');
		expect(phaseOf('success')).toBe('success');
		expect(phaseOf('completed')).toBe('success');
		expect(phaseOf('FAILURE')).toBe('failure');
		expect(phaseOf('failed')).toBe('failure');
		for (const state of ['QUEUED', 'IN_PROGRESS', 'NOT_START', 'SUBMITTED', 'UNKNOWN', 'queued', 'SOMETHING_NEW', '']) {
			expect(phaseOf(state)).toBe('running');
		}
	});

	it('passes progress strings on and gives bare numbers their percent sign', () => {
		expect(normaliseProgress('50%')).toBe('50%');
		expect(normaliseProgress(30)).toBe('30%');
		expect(normaliseProgress('42')).toBe('42%');
		expect(normaliseProgress('')).toBeUndefined();
		expect(normaliseProgress(null)).toBeUndefined();
	});
});

describe('reading answers', () => {
	it('reads the submit answer of the document (2.4) and normalises its lower-case status', () => {
		const { task } = readSubmitAnswer({ id: 'task_1', task_id: 'task_1', object: 'video', model: 'video-2-0-fast-260128', status: 'queued', progress: 0 });
		expect(task).toEqual({ task_id: 'task_1', status: 'QUEUED', progress: '0%', model: 'video-2-0-fast-260128' });
	});

	it('takes `id` when `task_id` is missing, and says so when there is no id at all', () => {
		expect(readSubmitAnswer({ id: 'abc' }).task?.task_id).toBe('abc');
		expect(readSubmitAnswer({ message: 'queue full' }).problem).toBe('the gateway accepted the request but returned no task id ("queue full")');
	});

	it('reads the status answer of the document (2.5)', () => {
		const body = { code: 'success', message: '', data: { task_id: 't', status: 'SUCCESS', progress: '100%', result_url: 'https://cdn/x.mp4' } };
		expect(readStatusAnswer(body, 't').task).toEqual({ task_id: 't', status: 'SUCCESS', progress: '100%', result_url: 'https://cdn/x.mp4' });
		const failed = { code: 'success', data: { task_id: 't', status: 'FAILURE', progress: '100%', fail_reason: 'policy' } };
		expect(readStatusAnswer(failed, 't').task?.fail_reason).toBe('policy');
	});

	it('accepts a bare task record, and keeps the asked id when the answer has none', () => {
		expect(readStatusAnswer({ status: 'in_progress', progress: 40 }, 'task_9').task).toEqual({ task_id: 'task_9', status: 'IN_PROGRESS', progress: '40%' });
	});

	it('reports an answer that carries an error instead of a task', () => {
		expect(readStatusAnswer({ code: 'task_not_exist', message: 'task_not_exist', data: null }, 't').problem).toBe(
			'the gateway did not report the task: "task_not_exist"',
		);
		expect(readStatusAnswer({}, 't').problem).toBe('the gateway did not report the task');
	});

	it('keeps fields a newer answer leaves out', () => {
		expect(mergeRecords({ task_id: 't', status: 'IN_PROGRESS', progress: '40%' }, { task_id: 't', status: 'UNKNOWN' })).toEqual({
			task_id: 't',
			status: 'UNKNOWN',
			progress: '40%',
		});
	});
});

describe('poll failures', () => {
	it('retries rate limits, server errors, non-JSON answers and dropped connections', () => {
		for (const status of [undefined, 200, 408, 429, 500, 502, 503, 504]) expect(isPassingPollFailure(status)).toBe(true);
	});

	it('does not retry what waiting will not fix', () => {
		for (const status of [400, 401, 403, 404]) expect(isPassingPollFailure(status)).toBe(false);
	});

	it('gives up on a run of failures only after two minutes and three polls', () => {
		expect(FAILURE_RUN_LIMIT).toEqual({ minFailedPolls: 3, minDurationMs: 120_000 });
		expect(failureRunIsFatal(2, 0, 200_000)).toBe(false);
		expect(failureRunIsFatal(10, 0, 119_999)).toBe(false);
		expect(failureRunIsFatal(3, 0, 120_000)).toBe(true);
	});
});

describe('nextWakeAt', () => {
	it('wakes at the earliest due poll, or later to take close ones along, never before any is due', () => {
		expect(nextWakeAt([], 1000)).toBeUndefined();
		expect(nextWakeAt([5000], 1000)).toBe(5000);
		expect(nextWakeAt([5000, 5300, 5900, 9000], 1000)).toBe(5900);
		expect(nextWakeAt([9000, 5000], 1000)).toBe(5000);
	});
});

describe('decideAfterPoll', () => {
	const state: WatchState = { record: { task_id: 't', status: 'QUEUED' }, submittedAt: 0, intervalMs: 5000, deadline: 30_000, failedPolls: 0 };
	const running = { task: { task_id: 't', status: 'IN_PROGRESS', progress: '40%' } };

	it('plans the next poll one interval after this one while the task runs', () => {
		expect(decideAfterPoll(state, running, 5000)).toEqual({ nextPollAt: 10_000, state: { ...state, record: running.task, failingSince: undefined } });
	});

	it('ends with success or failure', () => {
		const success = decideAfterPoll(state, { task: { task_id: 't', status: 'success', result_url: 'u' } }, 5000);
		expect(success).toEqual({ outcome: { kind: 'success', record: { task_id: 't', status: 'SUCCESS', result_url: 'u' } } });
		const failure = decideAfterPoll(state, { task: { task_id: 't', status: 'FAILURE', fail_reason: 'nope' } }, 5000);
		expect(failure).toMatchObject({ outcome: { kind: 'failure', record: { fail_reason: 'nope' } } });
	});

	it('times out right after the last poll that fits before the deadline, without sleeping on', () => {
		expect(decideAfterPoll(state, running, 25_000)).toMatchObject({ nextPollAt: 30_000 });
		expect(decideAfterPoll(state, running, 30_000)).toEqual({ outcome: { kind: 'timeout', record: running.task, waitedMs: 30_000 } });
		expect(decideAfterPoll({ ...state, deadline: 27_000 }, running, 25_000)).toMatchObject({ outcome: { kind: 'timeout', waitedMs: 25_000 } });
		// a tick that ran a moment late still gets its last poll at the deadline
		expect(decideAfterPoll(state, running, 25_300)).toMatchObject({ nextPollAt: 30_300 });
		expect(decideAfterPoll(state, running, 26_100)).toMatchObject({ outcome: { kind: 'timeout' } });
	});

	it('counts passing failures, resets the count on an answer, and keeps the last known status', () => {
		const error = new Error('HTTP 502');
		const first = decideAfterPoll(state, { error, passing: true }, 5000);
		expect(first).toEqual({ nextPollAt: 10_000, state: { ...state, failedPolls: 1, failingSince: 5000 } });
		const second = decideAfterPoll((first as { state: WatchState }).state, { error, passing: true }, 10_000);
		expect(second).toMatchObject({ state: { failedPolls: 2, failingSince: 5000 } });
		const answered = decideAfterPoll((second as { state: WatchState }).state, running, 15_000);
		expect(answered).toMatchObject({ state: { failedPolls: 0, failingSince: undefined } });
	});

	it('gives up on a long run of passing failures, and at once on a permanent one', () => {
		const long: WatchState = { ...state, deadline: 900_000, failedPolls: 23, failingSince: 5000 };
		const error = new Error('HTTP 503');
		expect(decideAfterPoll(long, { error, passing: true }, 125_000)).toEqual({
			outcome: { kind: 'unreachable', record: state.record, error, failedPolls: 24 },
		});
		expect(decideAfterPoll(state, { error, passing: false }, 5000)).toMatchObject({ outcome: { kind: 'unreachable', failedPolls: 1 } });
	});
});

describe('describeOutcome', () => {
	const record = { task_id: 'task_abc', status: 'IN_PROGRESS', progress: '60%' };

	it('quotes the fail reason and the task id, and says the charge is usually refunded', () => {
		const { message } = describeOutcome({ kind: 'failure', record: { task_id: 'task_abc', status: 'FAILURE', fail_reason: 'content policy' } });
		expect(message).toBe('Video task task_abc failed: content policy (the charge for a failed task is usually refunded automatically)');
	});

	it('quotes task id, last status and progress on a timeout, and how to fetch the task later', () => {
		const words = describeOutcome({ kind: 'timeout', record, waitedMs: 900_000 });
		expect(words.message).toBe('Video task task_abc is still running after 900 s (last status IN_PROGRESS, progress 60%), so the node stopped waiting');
		expect(words.description).toContain('Get Status or Download operation and task ID task_abc');
	});

	it('names the task when it could not be checked, and when the wait was cancelled', () => {
		const unreachable = describeOutcome({ kind: 'unreachable', record, error: new Error('Not found (HTTP 404)'), failedPolls: 1 });
		expect(unreachable.message).toBe('Could not check video task task_abc: Not found (HTTP 404)');
		expect(describeOutcome({ kind: 'cancelled', record }).message).toContain('task_abc was cancelled');
	});
});
