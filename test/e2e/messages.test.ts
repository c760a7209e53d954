/**
 * Gateway Messages in a real n8n (test/e2e/workflows/messages-*.json and
 * examples/messages-agent-step.json): the same output with and without Stream, thinking and
 * effort on the wire, error events, broken streams and bad budgets as error items, a refused key
 * in plain words.
 */
import type { E2eItem } from './harness';
import { describeWorkflow, gatewayRequests, loadE2eResults, nodeItems, workflowError, workflowResult } from './harness';

const results = () => loadE2eResults();
const withoutRaw = (item: E2eItem) => {
	const { rawResponse: _raw, ...json } = item.json;
	return json;
};

describeWorkflow('mgwMsg0001', 'the same output with and without Stream', () => {
	const id = 'mgwMsg0001';
	const plain = () => nodeItems(results(), id, 'Messages');
	const streamed = () => nodeItems(results(), id, 'Messages Streamed');

	it('outputs text, thinking, content, model, stopReason and usage', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		expect(plain().map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }]);
		const text = '[You are a careful planner.] Echo from chat-opus-4-8 (effort: xhigh): Plan the migration of the billing service';
		expect(withoutRaw(plain()[0])).toEqual({
			text,
			thinking: 'Thinking within 2048 tokens about: Plan the migration of the billing service',
			content: [
				{ type: 'thinking', thinking: 'Thinking within 2048 tokens about: Plan the migration of the billing service', signature: expect.any(String) },
				{ type: 'text', text },
			],
			model: 'chat-opus-4-8',
			stopReason: 'end_turn',
			usage: expect.objectContaining({ input_tokens: expect.any(Number), output_tokens: expect.any(Number) }),
		});
	});

	it('gives identical output when streamed', () => {
		expect(streamed().map(withoutRaw)).toEqual(plain().map(withoutRaw));
		expect(streamed()[0].json.rawResponse).toMatchObject({ type: 'message', stop_reason: 'end_turn' });
	});

	it('sends system, effort as output_config.effort and thinking with its budget', () => {
		const bodies = gatewayRequests((request) => request.path === '/v1/messages' && request.rawBody.includes('test plan for the login page')).map((r) =>
			JSON.parse(r.rawBody),
		);
		const opus = bodies.filter((body) => body.model === 'chat-opus-4-8');
		expect(opus.map((body) => body.stream).sort()).toEqual([false, true]);
		for (const body of opus) {
			expect(body).toMatchObject({ system: 'You are a careful planner.', output_config: { effort: 'xhigh' }, thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 8000 });
		}
	});

	it('handles the thinking chat-fable-5 always sends, and stop sequences', () => {
		const items = nodeItems(results(), id, 'Fable Streamed');
		expect(items[0].json).toMatchObject({ text: 'Echo from chat-fable-5: Plan the migration of the ', stopReason: 'stop_sequence', thinking: 'Thinking about: Plan the migration of the billing service' });
		expect(items[1].json).toMatchObject({ stopReason: 'end_turn', thinking: 'Thinking about: Write a test plan for the login page' });
	});
});

describeWorkflow('mgwMsg0002', 'error events, broken streams and bad budgets become error items', () => {
	const items = () => nodeItems(results(), 'mgwMsg0002', 'Messages Streamed');

	it('keeps the good item and explains each failure', () => {
		expect(items().map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }, { item: 3 }]);
		expect(items()[0].json).toMatchObject({ text: 'Echo from chat-sonnet-5: all good here', thinking: 'Thinking within 1024 tokens about: all good here' });
		expect(items()[1].json.error).toBe('The messages request failed: the gateway reported a failure: "Overloaded"');
		expect(items()[2].json.error).toMatch(/^The messages request failed: the connection to 127\.0\.0\.1:\d+ was dropped before the answer was complete$/);
		expect(items()[3].json.error).toBe('"Thinking Budget" must be below "Max Tokens" (4096), not 4096 (item 3)');
	});

	it('never sent the item whose input was bad', () => {
		expect(gatewayRequests((request) => request.path === '/v1/messages' && request.rawBody.includes('budget too big'))).toHaveLength(0);
	});
});

describeWorkflow('mgwMsg0003', 'a refused key is a plain-words error', () => {
	it('stops the workflow with the reason and without the key', () => {
		const error = workflowError(results(), 'mgwMsg0003');
		expect(error?.message).toMatch(/^The messages request failed: the gateway refused the API key \(HTTP 401\)/);
		expect(JSON.stringify(error)).not.toMatch(/sk-[A-Za-z0-9]{6,}/);
	});
});

describeWorkflow('mgwExMsg0001', 'example: plan the next step of an agent', () => {
	it('returns the next step with the reasoning', () => {
		expect(workflowResult(results(), 'mgwExMsg0001').status).toBe('success');
		const [step] = nodeItems(results(), 'mgwExMsg0001', 'Next Step');
		expect(step.json.nextStep).toMatch(/^\[You are a senior engineer.*\] Echo from chat-opus-4-8 \(effort: xhigh\): Task: Add input validation/s);
		expect(step.json.reasoning).toMatch(/^Thinking about: Task:/);
		expect(step.json.stopReason).toBe('end_turn');
	});
});
