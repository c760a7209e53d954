/**
 * Idle Timeout (issue 28) under a hostile review, over real HTTP to the loopback gateway: a silence
 * right after the answer's head (no byte of its body) is told apart from one before the head.
 * Times are bounds with a margin.
 */
import { complete } from '../../nodes/GatewayChat/complete';
import { createMessage } from '../../nodes/GatewayMessages/create';
import { useGateway } from '../gateway/testing';
import { BUSY_MARGIN_MS } from '../helpers/busy';
import { createExecuteContext } from '../helpers/executeContext';

const KEY = 'sk-integration-idle-hostile-0123456789';
const env = useGateway();
const WORDS = 'one two three four five six seven eight nine ten eleven twelve';

type Operation = typeof complete;
const NODES: Array<[string, Operation, string, string]> = [
	['Gateway Chat', complete, '/v1/chat/completions', 'The chat request'],
	['Gateway Messages', createMessage, '/v1/messages', 'The messages request'],
];

async function run(operation: Operation, content: string, idleTimeoutSeconds: number) {
	const { ctx } = createExecuteContext({
		parameters: { model: { __rl: true, mode: 'id', value: 'chat-sonnet-5' }, messages: { values: [{ role: 'user', content }] }, maxTokens: 4096, stream: true, options: { idleTimeoutSeconds } },
		credentials: { apiKey: KEY, baseUrl: env.gateway.baseUrl },
	});
	const started = Date.now();
	try {
		const [output] = await operation.call(ctx);
		return { output, took: Date.now() - started };
	} catch (error) {
		return { error: error as Error & { description?: string }, took: Date.now() - started };
	}
}

describe.each(NODES)('%s', (_name, operation, path, what) => {
	it('a gateway silent right after the head: the answer had begun, before its first event; sent once', async () => {
		const result = await run(operation, `${WORDS} [stall-after:0]`, 1);
		expect(result.error?.message).toBe(`${what} failed: the gateway sent nothing for 1 s after the answer began, before its first event, the limit set by Idle Timeout (Seconds)`);
		expect(result.took).toBeLessThan(1000 + BUSY_MARGIN_MS);
		expect(env.gateway.requests.filter((request) => request.path === path)).toHaveLength(1);
	});
});
