/**
 * The nodes against the loopback gateway's new-api mode, where new-api's answers differ from the
 * interface document: NOT_START and SUBMITTED read as running, a failure sentence in result_url
 * quoted and never fetched, its 400 task_not_exist, its web page with 200 for a wrong Base URL, and
 * its relay's errors in the middleware shape (also on /v1/messages) read in plain words.
 */
import type { IDataObject } from 'n8n-workflow';

import { complete } from '../../nodes/GatewayChat/complete';
import { GatewayImageGenerate } from '../../nodes/GatewayImageGenerate/GatewayImageGenerate.node';
import { createMessage } from '../../nodes/GatewayMessages/create';
import { useGateway } from '../gateway/testing';
import { createExecuteContext } from '../helpers/executeContext';
import { runVideoNode } from './videoLoopback';

const env = useGateway({ flavor: 'newapi' });
const FAIL_SENTENCE = 'content policy violation: the prompt was rejected by the safety system';

const statusChecks = () => env.gateway.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/v1/video/generations/'));
const fileRequests = () => env.gateway.requests.filter((r) => r.server === 'files');

describe('Gateway Video Generate', () => {
	it('generate: NOT_START and SUBMITTED are still running; the video arrives on the third check', async () => {
		const run = await runVideoNode(env.gateway, { operation: 'generate' });
		expect(run.error).toBeUndefined();
		expect(run.output[0].json).toMatchObject({ status: 'SUCCESS', task_id: expect.stringMatching(/^task_/) });
		expect(run.output[0].binary?.data?.mimeType).toBe('video/mp4');
		expect(statusChecks()).toHaveLength(3);
	});

	it('get status just after a submit: NOT_START, reported as running data', async () => {
		const submitted = await runVideoNode(env.gateway, { operation: 'submit' });
		const taskId = submitted.output[0].json.task_id as string;
		const status = await runVideoNode(env.gateway, { operation: 'getStatus', taskId });
		expect(status.error).toBeUndefined();
		expect(status.output[0].json).toMatchObject({ task_id: taskId, status: 'NOT_START', progress: '0%' });
		const next = await runVideoNode(env.gateway, { operation: 'getStatus', taskId });
		expect(next.output[0].json).toMatchObject({ status: 'SUBMITTED', progress: '10%' });
	});

	it('a failed task: the sentence in result_url and fail_reason is quoted as the reason, never fetched', async () => {
		const run = await runVideoNode(env.gateway, { operation: 'generate', prompt: 'a paper boat [fail]' });
		expect(run.error?.message).toMatch(new RegExp(`^Video task task_\\w+ failed: "${FAIL_SENTENCE}"`));
		expect(fileRequests()).toEqual([]);
		const taskId = env.gateway.taskIds()[0];
		const status = await runVideoNode(env.gateway, { operation: 'getStatus', taskId });
		expect(status.output[0].json).toEqual({ task_id: taskId, status: 'FAILURE', progress: '100%', fail_reason: FAIL_SENTENCE });
	});

	it('an unknown task id: new-api\'s 400 task_not_exist says the task is unknown to this gateway and key', async () => {
		const run = await runVideoNode(env.gateway, { operation: 'getStatus', taskId: 'task_unknown' });
		expect(run.error?.message).toContain('Checking video task task_unknown failed: the gateway does not know this task ID');
		expect(run.error?.description).toMatch(/credential .*submitted it/);
	});

	it('a Base URL that points at the web app: its page (HTTP 200) is refused as a page, nothing is submitted', async () => {
		const run = await runVideoNode({ baseUrl: `${env.gateway.baseUrl}/console` }, { operation: 'submit' });
		expect(run.error?.message).toMatch(/failed: the gateway answered HTTP 200 with a page instead of JSON/);
		expect(run.error?.description).toContain('Check the Base URL of the credential');
		expect(env.gateway.taskIds()).toEqual([]);
	});

	it('a submit above what the key has left: the pre-charge refusal in the task shape, quoted', async () => {
		env.gateway.setOptions({ keyQuota: 1000 });
		const run = await runVideoNode(env.gateway, { operation: 'submit' });
		expect(run.error?.message).toContain('lack of quota');
		expect(`${run.error?.message} ${run.error?.description}`).toContain('token quota is not enough');
		expect(env.gateway.taskIds()).toEqual([]);
	});
});

describe('the relay\'s errors in the middleware shape', () => {
	const context = (nodeType: string, parameters: IDataObject, apiKey: string) =>
		createExecuteContext({
			parameters: () => ({ model: { __rl: true, mode: 'list', value: 'chat-sonnet-5' }, messages: { values: [{ role: 'user', content: 'Hello' }] }, maxTokens: 256, stream: false, options: {}, ...parameters }),
			credentials: { apiKey, baseUrl: env.gateway.baseUrl },
			nodeType,
		}).ctx;

	it.each([false, true])('Gateway Messages reads an OpenAI-shaped 401 on /v1/messages as a refused key (stream %s)', async (stream) => {
		await expect(createMessage.call(context('n8n-nodes-model-gateway.gatewayMessages', { stream }, 'sk-exhausted-5'))).rejects.toThrow(
			/^The messages request failed: .*\(HTTP 401\): "Invalid token \(request id: \w+\)"/,
		);
	});

	it('Gateway Messages: an unknown model is a missing channel, also in the middleware shape', async () => {
		await expect(createMessage.call(context('n8n-nodes-model-gateway.gatewayMessages', { model: { __rl: true, mode: 'id', value: 'chat-nope-1' } }, 'sk-newapi-5'))).rejects.toThrow(
			/^The messages request failed: the gateway has no channel for this model \(HTTP 503\): "No available channel for model chat-nope-1/,
		);
	});

	it('Gateway Chat: an empty wallet is a lack of quota, quoting new-api\'s words', async () => {
		await expect(complete.call(context('n8n-nodes-model-gateway.gatewayChat', {}, 'sk-noquota-5'))).rejects.toThrow(
			/^The chat request failed: the gateway refused the request for lack of quota or permission \(HTTP 403\): "用户额度不足, 剩余额度: ＄0\.000000/,
		);
	});

	it('Gateway Image Generate: the pre-charge refusal is a lack of quota, and nothing is fetched', async () => {
		env.gateway.setOptions({ keyQuota: 30000 });
		const ctx = createExecuteContext({
			parameters: () => ({ model: { __rl: true, mode: 'list', value: 'img-image-2' }, prompt: 'a red fox', n: 2 }),
			credentials: { apiKey: 'sk-newapi-6', baseUrl: env.gateway.baseUrl },
			nodeType: 'n8n-nodes-model-gateway.gatewayImageGenerate',
		}).ctx;
		await expect(new GatewayImageGenerate().execute.call(ctx)).rejects.toThrow(/lack of quota .*\(HTTP 403\): "token quota is not enough, token remain quota: ＄0\.060000, need quota: ＄0\.080000/);
		expect(fileRequests()).toEqual([]);
	});
});
