/**
 * Hostile review r8b (round four, session eight): Idle Timeout and a text body that merely looks
 * like it holds a file. attempt.ts sendOnce pauses the idle watch until the answer's head for a
 * body that `carriesFiles`, and jsonBody.ts `holdsFile` counts any string starting with `data:` as
 * one. A chat message that is text starting with "data:" (an SSE line pasted from a log, a tool's
 * output the agent passes back) is no file, yet it switches the Idle Timeout off until the head:
 * the same gateway that stalls before its head fails at about 1 s for "Hello", and not at all for
 * "data: ..." (the "Hello" case is idleTimeout.test.ts's "ends a gateway that sends nothing at all
 * after the request"). Red on ead0f2e: no error, the answer after 8 s. Real HTTP to the loopback
 * gateway; times are bounds with a margin.
 */
import type { ChatModel, Message } from '@n8n/ai-node-sdk';
import type { IDataObject, ISupplyDataFunctions } from 'n8n-workflow';

import { complete } from '../../nodes/GatewayChat/complete';
import { supplyGatewayChatModel } from '../../nodes/GatewayChatModel/supply';
import { createMessage } from '../../nodes/GatewayMessages/create';
import { useGateway } from '../gateway/testing';
import { BUSY_MARGIN_MS } from '../helpers/busy';
import { standInSdk } from '../helpers/chatModelSdk';
import { createExecuteContext } from '../helpers/executeContext';

const KEY = 'sk-integration-review-r8b-0123456789';
const env = useGateway();

/** A line a user pastes from a stream's log: text, no file. */
const SSE_LINE = 'data: {"choices":[{"delta":{"content":"why does this stop?"}}]}';

type Operation = typeof complete;
const NODES: Array<[string, Operation, string, string]> = [
	['Gateway Chat', complete, '/v1/chat/completions', 'The chat request'],
	['Gateway Messages', createMessage, '/v1/messages', 'The messages request'],
];

async function run(operation: Operation, content: string, options: IDataObject) {
	const { ctx } = createExecuteContext({
		parameters: { model: { __rl: true, mode: 'id', value: 'chat-sonnet-5' }, messages: { values: [{ role: 'user', content }] }, maxTokens: 4096, stream: true, options },
		credentials: { apiKey: KEY, baseUrl: env.gateway.baseUrl },
	});
	const started = Date.now();
	try {
		await operation.call(ctx);
		return { took: Date.now() - started };
	} catch (error) {
		return { error: error as Error, took: Date.now() - started };
	}
}

describe.each(NODES)('%s: a text message starting with "data:" before a gateway silent until its head', (_name, operation, path, what) => {
	it('ends at about Idle Timeout, as the same request saying "Hello" does', async () => {
		env.gateway.queueFaults(path, ['slow:8000']);
		const result = await run(operation, SSE_LINE, { idleTimeoutSeconds: 1, timeoutSeconds: 60 });
		expect(result.error?.message).toBe(`${what} failed: the gateway sent nothing for 1 s after the request was sent, the limit set by Idle Timeout (Seconds)`);
		expect(result.took).toBeLessThan(1000 + BUSY_MARGIN_MS);
	});
});

describe('Gateway Chat Model: an agent\'s text starting with "data:" before a gateway silent until its head', () => {
	it('ends at about Idle Timeout, as a plain question does', async () => {
		const { ctx } = createExecuteContext({
			parameters: { model: { __rl: true, mode: 'id', value: 'chat-sonnet-5' }, options: { idleTimeoutSeconds: 1, timeoutSeconds: 60 } },
			credentials: { apiKey: KEY, baseUrl: env.gateway.baseUrl },
			nodeName: 'Gateway Chat Model',
		});
		const model = (await supplyGatewayChatModel(ctx as unknown as ISupplyDataFunctions, 0, async () => standInSdk)).response as ChatModel;
		env.gateway.queueFaults('/v1/chat/completions', ['slow:8000']);
		const user: Message = { role: 'user', content: [{ type: 'text', text: SSE_LINE }] };
		const started = Date.now();
		let error: Error | undefined;
		try {
			for await (const _chunk of model.stream([user])) void _chunk;
		} catch (caught) {
			error = caught as Error;
		}
		expect(error?.message).toMatch(/sent nothing for 1 s after the request was sent/);
		expect(Date.now() - started).toBeLessThan(1000 + BUSY_MARGIN_MS);
	});
});
