import { FAILURE_STATES, mergeRecords, normaliseProgress, normaliseStatus, phaseOf, readStatusAnswer, readSubmitAnswer, statusWithProgress, taskFields } from '../../nodes/GatewayVideoGenerate/task';

describe('task states', () => {
	it('normalises case, spaces and hyphens, and names a missing status UNKNOWN', () => {
		expect(normaliseStatus('queued')).toBe('QUEUED');
		expect(normaliseStatus(' in-progress ')).toBe('IN_PROGRESS');
		expect(normaliseStatus('')).toBe('UNKNOWN');
		expect(normaliseStatus(undefined)).toBe('UNKNOWN');
		expect(normaliseStatus({})).toBe('UNKNOWN');
		expect(normaliseStatus('Timed out')).toBe('TIMED_OUT');
		expect(normaliseStatus('not-start')).toBe('NOT_START');
	});

	it("keeps the words of a state it does not know apart: joined by `_`, a word the gateway quoted after it (a secret) would become part of one token, which masking keeps", () => {
		expect(normaliseStatus('queued Qk7v9 ')).toBe('QUEUED QK7V9');
		expect(normaliseStatus('queued  detail\tQk7v9')).toBe('QUEUED DETAIL QK7V9');
		expect(normaliseStatus('in review')).toBe('IN REVIEW');
		expect(phaseOf('queued Qk7v9')).toBe('running');
		expect(phaseOf('SUCCESS Qk7v9')).toBe('running');
	});

	it('treats plain success words as success, and keeps polling through every state that is not an end', () => {
		expect(phaseOf('SUCCESS')).toBe('success');
		expect(phaseOf('success')).toBe('success');
		expect(phaseOf('completed')).toBe('success');
		expect(phaseOf('FAILURE')).toBe('failure');
		expect(phaseOf('failed')).toBe('failure');
		for (const state of ['QUEUED', 'IN_PROGRESS', 'NOT_START', 'SUBMITTED', 'UNKNOWN', 'queued', 'not_start', 'SOMETHING_NEW', '']) {
			expect(phaseOf(state)).toBe('running');
		}
	});

	it('ends the wait on every state that means the task is over without a video, in any case', () => {
		for (const state of ['CANCELLED', 'CANCELED', 'EXPIRED', 'ERROR', 'TIMEOUT', 'REJECTED', 'FAILED', 'FAILURE']) {
			expect(FAILURE_STATES.has(state)).toBe(true);
			for (const written of [state, state.toLowerCase(), state[0] + state.slice(1).toLowerCase(), ` ${state.toLowerCase()} `]) {
				expect([written, phaseOf(written)]).toEqual([written, 'failure']);
			}
		}
	});

	it('passes progress strings on and gives bare numbers their percent sign', () => {
		expect(normaliseProgress('50%')).toBe('50%');
		expect(normaliseProgress(30)).toBe('30%');
		expect(normaliseProgress('42')).toBe('42%');
		expect(normaliseProgress('')).toBeUndefined();
		expect(normaliseProgress(null)).toBeUndefined();
	});

	it('quotes status and progress together', () => {
		expect(statusWithProgress({ task_id: 't', status: 'IN_PROGRESS', progress: '60%' })).toBe('IN_PROGRESS, progress 60%');
		expect(statusWithProgress({ task_id: 't', status: 'QUEUED' })).toBe('QUEUED');
	});
});

describe('reading answers', () => {
	it('reads the submit answer of the document (2.4) and normalises its lower-case status', () => {
		const task = readSubmitAnswer({ id: 'task_1', task_id: 'task_1', object: 'video', model: 'video-2-0-fast-260128', status: 'queued', progress: 0 });
		expect(task).toEqual({ task_id: 'task_1', status: 'QUEUED', progress: '0%', model: 'video-2-0-fast-260128' });
	});

	it('takes `id` when `task_id` is missing, also inside `data`, and gives nothing when there is no id at all', () => {
		expect(readSubmitAnswer({ id: 'abc' })?.task_id).toBe('abc');
		expect(readSubmitAnswer({ code: 'success', data: { task_id: 'in-data' } })?.task_id).toBe('in-data');
		for (const body of [{ message: 'queue full' }, {}, null, [], 'text', { data: [] }]) expect(readSubmitAnswer(body)).toBeUndefined();
	});

	it('reads the status answer of the document (2.5)', () => {
		const body = { code: 'success', message: '', data: { task_id: 't', status: 'SUCCESS', progress: '100%', result_url: 'https://cdn/x.mp4' } };
		expect(readStatusAnswer(body, 't')).toEqual({ task_id: 't', status: 'SUCCESS', progress: '100%', result_url: 'https://cdn/x.mp4' });
		const failed = { code: 'success', data: { task_id: 't', status: 'FAILURE', progress: '100%', fail_reason: 'policy' } };
		expect(readStatusAnswer(failed, 't')?.fail_reason).toBe('policy');
	});

	it('accepts a bare task record, and keeps the asked id when the answer has none', () => {
		expect(readStatusAnswer({ status: 'in_progress', progress: 40 }, 'task_9')).toEqual({ task_id: 'task_9', status: 'IN_PROGRESS', progress: '40%' });
	});

	it('gives nothing for an answer without a task record (the node then quotes it)', () => {
		for (const body of [{}, { code: 'success' }, { code: 'success', data: null }, { code: 'success', data: {} }, { code: 'success', data: [] }, { message: 'ok' }]) {
			expect(readStatusAnswer(body, 't')).toBeUndefined();
		}
	});

	it('keeps fields a newer answer leaves out', () => {
		expect(mergeRecords({ task_id: 't', status: 'IN_PROGRESS', progress: '40%' }, { task_id: 't', status: 'UNKNOWN' })).toEqual({
			task_id: 't',
			status: 'UNKNOWN',
			progress: '40%',
		});
	});

	it('keeps only the fields a task has', () => {
		expect(taskFields({ task_id: 't', status: 'QUEUED', progress: undefined })).toEqual({ task_id: 't', status: 'QUEUED' });
	});
});
