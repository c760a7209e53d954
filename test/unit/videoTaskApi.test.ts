/**
 * The task API's errors, without HTTP: every outcome of the wait as a GatewayError that names the
 * task, the submit's "may have created the task" read from the error's data (not its words), the
 * task logged the moment it exists, and the gateway's words (a fail_reason with the key) masked
 * at the edge.
 */
import type { IDataObject, IExecuteFunctions, INode } from 'n8n-workflow';

import { Readable } from 'stream';

import { fetchStatus, MAY_HAVE_CREATED_HINT, outcomeError, pollStatus, STATUS_DEADLINE_MS, submitTask, taskFailedError } from '../../nodes/GatewayVideoGenerate/taskApi';
import { asNodeError, errorItem } from '../../nodes/shared/failures/edge';
import { GatewayError } from '../../nodes/shared/failures/errors';
import { SecretMasker } from '../../nodes/shared/credential/secrets';
import { GatewayClient } from '../../nodes/shared/wire/transport';
import type { GatewayCall } from '../../nodes/shared/wire/transport';
import { createExecuteContext } from '../helpers/executeContext';

const KEY = 'sk-video-test-0123456789abcdef';
const SECRET_PART = KEY.slice(3);
const node: INode = { id: 'n', name: 'Make Videos', type: 'n8n-nodes-model-gateway.gatewayVideoGenerate', typeVersion: 1, position: [0, 0], parameters: {} };
const masker = new SecretMasker([KEY]);

function fakeClient(answer: (call: GatewayCall) => IDataObject | Promise<IDataObject>) {
	const calls: GatewayCall[] = [];
	const client = {
		node,
		masker,
		cancelSignal: undefined,
		json: async (call: GatewayCall) => {
			calls.push(call);
			return await answer(call);
		},
	} as unknown as GatewayClient;
	return { client, calls };
}

function fakeContext(withLogger = true) {
	const logs: Array<{ level: string; message: string; meta?: IDataObject }> = [];
	const ctx: Partial<IExecuteFunctions> = { getNode: () => node };
	if (withLogger) {
		ctx.logger = {
			info: (message: string, meta?: IDataObject) => logs.push({ level: 'info', message, meta }),
			warn: (message: string, meta?: IDataObject) => logs.push({ level: 'warn', message, meta }),
			debug: () => undefined,
			error: () => undefined,
		} as unknown as IExecuteFunctions['logger'];
		ctx.getExecutionId = () => 'exec-42';
	}
	return { ctx: ctx as IExecuteFunctions, logs };
}

const shown = (error: unknown) => {
	const nodeError = asNodeError(node, error, 0, masker);
	return JSON.stringify({ message: nodeError.message, description: nodeError.description, context: nodeError.context, item: errorItem(node, error, 0, masker) });
};

async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
	try {
		await promise;
	} catch (error) {
		return error as GatewayError;
	}
	throw new Error('expected a rejection');
}

describe('the outcomes of the wait', () => {
	const record = { task_id: 'task_abc', status: 'IN_PROGRESS', progress: '60%' };

	it('a FAILURE quotes the fail reason as the gateway\'s words, names the task, and says the charge is usually refunded', () => {
		const error = outcomeError({ kind: 'failure', record: { task_id: 'task_abc', status: 'FAILURE', fail_reason: 'content policy' } }, 3);
		expect(error).toBeInstanceOf(GatewayError);
		expect(error).toMatchObject({ kind: 'task_failed', gatewayMessage: 'content policy', itemIndex: 3, fields: { task_id: 'task_abc', status: 'FAILURE', fail_reason: 'content policy' } });
		expect(error.fullMessage).toBe('Video task task_abc failed: "content policy"');
		expect(error.hint).toContain('usually refunded automatically');
	});

	it('CANCELLED, EXPIRED and the other end states are failures that say which state ended the task', () => {
		const error = outcomeError({ kind: 'failure', record: { task_id: 'task_c', status: 'CANCELLED', fail_reason: 'cancelled by the upstream' } }, 0);
		expect(error.kind).toBe('task_failed');
		expect(error.fullMessage).toBe('Video task task_c ended with status CANCELLED: "cancelled by the upstream"');
		expect(taskFailedError({ task_id: 'task_e', status: 'EXPIRED' }, 0).fullMessage).toBe('Video task task_e ended with status EXPIRED and no reason from the gateway');
	});

	it('a fail_reason that quotes the key reaches n8n only masked, in the error and in the error item', () => {
		const error = taskFailedError({ task_id: 'task_k', status: 'FAILURE', fail_reason: `upstream said: invalid token Bearer ${KEY} (token=${SECRET_PART})` }, 0);
		expect(error.message).not.toContain(SECRET_PART);
		const text = shown(error);
		expect(text).not.toContain(KEY);
		expect(text).not.toContain(SECRET_PART);
		expect(text).toContain('task_k');
		expect(text).toContain('upstream said: invalid token Bearer ***');
	});

	it('a timeout quotes the task id, the last status and progress, and how to fetch the task later', () => {
		const error = outcomeError({ kind: 'timeout', record, waitedMs: 900_000 }, 0);
		expect(error.kind).toBe('timeout');
		expect(error.message).toBe('Video task task_abc is still running after 900 s (last status IN_PROGRESS, progress 60%), so the node stopped waiting');
		expect(error.hint).toContain('Get Status or Download operation and task ID task_abc');
		expect(error.fields).toEqual(record);
	});

	it('a timeout whose last check failed says so and quotes the failure, instead of calling the task still running', () => {
		const refused = new GatewayError({ kind: 'rate_limit', headline: 'Checking video task task_abc failed: the gateway refused the request (HTTP 429)', status: 429 });
		const error = outcomeError({ kind: 'timeout', record, waitedMs: 120_000, lastCheckError: refused }, 0);
		expect(error.kind).toBe('timeout');
		expect(error.message).toBe(
			'Video task task_abc was not seen done within Max Wait (120 s): its last check failed (the gateway refused the request (HTTP 429)); last status IN_PROGRESS, progress 60%, so the node stopped waiting',
		);
		expect(error.message).not.toMatch(/still running/);
		expect(error.hint).toContain('Get Status or Download operation and task ID task_abc');
	});

	it('a task that could not be checked keeps the poll\'s own failure (kind, status, gateway words) and names the task', () => {
		const poll = new GatewayError({ kind: 'server', headline: 'Checking video task task_abc failed: the gateway reported a failure', status: 503, gatewayMessage: 'busy', fields: { task_id: 'task_abc' } });
		const once = outcomeError({ kind: 'unreachable', record, error: poll, failedPolls: 1 }, 0);
		// The same failure, retold as a copy (a GatewayError is never edited).
		expect(once).toMatchObject({ kind: poll.kind, status: poll.status, gatewayMessage: poll.gatewayMessage });
		expect(poll.hint).toBeUndefined();
		expect(once.fullMessage).toBe('Checking video task task_abc failed: the gateway reported a failure (HTTP 503): "busy"');
		expect(once.fields).toMatchObject(record);
		expect(once.hint).toContain('last status IN_PROGRESS, progress 60%');
		const many = outcomeError({ kind: 'unreachable', record, error: new GatewayError({ kind: 'network', headline: 'Checking video task task_abc failed: the connection failed' }), failedPolls: 25 }, 0);
		expect(many.message).toBe('Checking video task task_abc failed 25 times in a row: the connection failed');
	});

	it('a cancelled or stopped wait names the task and its last status', () => {
		expect(outcomeError({ kind: 'cancelled', record }, 0)).toMatchObject({ kind: 'cancelled', message: 'The wait for video task task_abc was cancelled (last status IN_PROGRESS, progress 60%)' });
		expect(outcomeError({ kind: 'stopped', record }, 0).message).toContain('Stopped waiting for video task task_abc because another item failed');
	});
});

describe('submitTask', () => {
	it('submits as paid work (never re-sent unless surely refused), and logs the new task at info level at once', async () => {
		const { client, calls } = fakeClient(() => ({ id: 'task_1', task_id: 'task_1', object: 'video', model: 'video-2-0-fast-260128', status: 'queued' }));
		const { ctx, logs } = fakeContext();
		const task = await submitTask(ctx, client, { prompt: 'p' }, 4);
		expect(task).toEqual({ task_id: 'task_1', status: 'QUEUED', model: 'video-2-0-fast-260128' });
		expect(calls[0]).toMatchObject({ path: '/v1/video/generations', body: { prompt: 'p' }, retry: { idempotent: false }, itemIndex: 4 });
		// the id in the message text itself: n8n's default log format prints only the message
		expect(logs).toEqual([
			{
				level: 'info',
				message: 'Model Gateway: video task created: task_1 (item 4, execution exec-42, node "Make Videos")',
				meta: { taskId: 'task_1', itemIndex: 4, executionId: 'exec-42', node: 'Make Videos' },
			},
		]);
	});

	it('works in a context without a logger or an execution id', async () => {
		const { client } = fakeClient(() => ({ task_id: 'task_2' }));
		await expect(submitTask(fakeContext(false).ctx, client, {}, 0)).resolves.toMatchObject({ task_id: 'task_2' });
	});

	it('an answer without a task id is a protocol error quoting what the gateway sent, and may have created the task', async () => {
		const { client } = fakeClient(() => ({ object: 'video', message: 'queue full', data: { state: 'accepted' } }));
		const { ctx, logs } = fakeContext();
		const error = await rejection(submitTask(ctx, client, {}, 2));
		expect(error).toMatchObject({ kind: 'protocol', mayHaveActed: true, itemIndex: 2, status: 200 });
		expect(error.fullMessage).toBe('Submitting the video task failed: the gateway\'s answer has no task id: "{"object":"video","message":"queue full","data":{"state":"accepted"}}"');
		expect(error.hint).toContain(MAY_HAVE_CREATED_HINT);
		expect(logs).toHaveLength(0);
	});

	it('asks the transport for a paid submit that says, once, that the task may exist', async () => {
		const { client, calls } = fakeClient(() => ({ task_id: 'task_3' }));
		await submitTask(fakeContext().ctx, client, {}, 0);
		expect(calls[0]).toMatchObject({ retry: { idempotent: false }, ifActed: MAY_HAVE_CREATED_HINT });
	});

	// The hint is composed where the failure is classified (the transport, errors.ts), never rewritten here.
	it.each([
		[502, '', MAY_HAVE_CREATED_HINT, true],
		[504, '<html><title>504 Gateway Time-out</title></html>', MAY_HAVE_CREATED_HINT, true],
		[503, '{"error":{"code":"model_not_found","message":"no available channel for model v"}}', 'Pick a model from the list, or check the model id for typos.', false],
		[401, '{"error":{"message":"invalid token"}}', 'Check the API Key of the Model Gateway credential.', false],
	])('a submit answered HTTP %i: the hint as classified, and whether the task may exist', async (status, body, hint, mayExist) => {
		const { ctx } = createExecuteContext({ parameters: {}, credentials: { apiKey: KEY, baseUrl: 'http://gw.example:8080' } });
		ctx.helpers.httpRequest = (async () => ({ statusCode: status, headers: { 'content-type': body.startsWith('<') ? 'text/html' : 'application/json' }, body: Readable.from([Buffer.from(body)]) })) as never;
		const error = await rejection(submitTask(ctx, await GatewayClient.create(ctx), { model: 'v', prompt: 'p' }, 0));
		expect([error.hint, error.mayHaveActed]).toEqual([hint, mayExist]);
	});
});

describe('status requests', () => {
	it('a 404 on Get Status says the task id is unknown (read from the status, not the words)', async () => {
		const notFound = new GatewayError({ kind: 'not_found', headline: 'Checking video task task_x failed: the gateway does not know this address or item', status: 404, gatewayMessage: 'nope', fields: { task_id: 'task_x' } });
		const error = await rejection(fetchStatus(fakeClient(() => Promise.reject(notFound)).client, 'task_x', 0));
		expect(error.fullMessage).toBe('Checking video task task_x failed: the gateway does not know this task ID (HTTP 404): "nope"');
		expect(error.hint).toContain('the task_id that Submit or Generate returned');
	});

	it('an answer without a task record is a protocol error quoting it, with the task id in its fields', async () => {
		const error = await rejection(fetchStatus(fakeClient(() => ({ code: 'success', data: {} })).client, 'task_y', 1));
		expect(error).toMatchObject({ kind: 'protocol', fields: { task_id: 'task_y' }, itemIndex: 1 });
		expect(error.fullMessage).toBe('Checking video task task_y failed: the gateway\'s answer has no task record: "{"code":"success","data":{}}"');
		const polled = await pollStatus(fakeClient(() => ({ code: 'success' })).client, 'task_y', 0, 10_000);
		expect(polled).toMatchObject({ passing: false, error: { kind: 'protocol', fields: { task_id: 'task_y' } } });
	});

	it('a poll of the wait is one attempt, bounded by 30 s and by what is left of the wait (the transport keeps it as its deadline, named Max Wait)', async () => {
		const { client, calls } = fakeClient(() => ({ code: 'success', data: { task_id: 't', status: 'IN_PROGRESS' } }));
		const before = Date.now();
		expect(await pollStatus(client, 't', 0, 7000)).toEqual({ task: { task_id: 't', status: 'IN_PROGRESS' } });
		const after = Date.now();
		expect(calls[0]).toMatchObject({ retry: false, deadlineMs: STATUS_DEADLINE_MS, errorFields: { task_id: 't' }, limitName: 'Max Wait (Seconds)' });
		expect(calls[0].notAfter).toBeGreaterThanOrEqual(before + 7000);
		expect(calls[0].notAfter).toBeLessThanOrEqual(after + 7000);
	});
});
