/**
 * Hostile review R11 (round four, tenth session): the Generate operation's Resume Task ID polls
 * through the wait loop (pollStatus), not as Get Status does (fetchStatus). Red on f73d3be.
 */
import { executeVideo } from '../../nodes/GatewayVideoGenerate/router';
import { useGateway } from '../gateway/testing';
import { createExecuteContext } from '../helpers/executeContext';
import { createFakeClock } from '../helpers/fakeClock';

const env = useGateway();

async function generateError(parameters: Record<string, unknown>): Promise<Error & { description?: string }> {
	const context = createExecuteContext({
		parameters: () => ({ operation: 'generate', model: { __rl: true, mode: 'list', value: 'video-2-0-fast-260128' }, seconds: 5, size: '1280x720', ...parameters }),
		credentials: { apiKey: 'sk-integration-video-0123456789', baseUrl: env.gateway.baseUrl },
		nodeType: 'n8n-nodes-model-gateway.gatewayVideoGenerate',
	});
	try {
		await executeVideo(context.ctx, { clock: createFakeClock() });
	} catch (error) {
		return error as Error & { description?: string };
	}
	throw new Error('expected the node to fail');
}

describe('R11: Resume Task ID with a task id the gateway does not know', () => {
	/**
	 * Proves: Get Status of an unknown id says "the gateway does not know this task ID" and asks to
	 * check the id and the credential. Generate with the same id in Resume Task ID (a typo, an id of
	 * another key or gateway) fails with the transport's generic 404 words, "the gateway does not know
	 * this address or item", advises checking "the model id" (no model is sent), and then says "The
	 * task may still be running (last status UNKNOWN). Nothing is lost: fetch the video later with the
	 * Get Status or Download operation and task ID task_doesnotexist" — which can only fail again. The
	 * 404 is not passing (it ends the wait at once, as it should); its words are not those of an
	 * unknown task (pollStatus skips fetchStatus's not_found rewording).
	 * docs/nodes/gatewayVideoGenerate.md promises: "A task ID the gateway does not know (a 404, or
	 * new-api's 400 task_not_exist) says so, and what to check: the ID, and that the credential is the
	 * one ... that submitted it."
	 */
	it('says the gateway does not know the task id, as Get Status does, and does not promise that nothing is lost', async () => {
		const error = await generateError({ prompt: '', options: { resumeTaskId: 'task_doesnotexist' } });
		expect(error.message).toContain('does not know this task ID');
		expect(error.description).not.toContain('Nothing is lost');
		expect(error.description).not.toContain('model id');
	});
});
