/**
 * Gateway Chat in a real n8n (test/e2e/workflows/chat-*.json and examples/chat-summariser.json):
 * the same output with and without Stream, reasoning and effort on the wire, broken and error
 * streams as error items, a stream that goes silent ended at Idle Timeout (Messages too), and an
 * unknown model in plain words. Under `n8n execute` the run is
 * not streamed to a chat, so this checks the aggregate path.
 */
import type { E2eItem } from './harness';
import { describeWorkflow, gatewayRequests, loadE2eResults, nodeItems, nodeRun, workflowError, workflowResult } from './harness';

const results = () => loadE2eResults();
const chatBodies = (needle: string) =>
	gatewayRequests((request) => request.path === '/v1/chat/completions' && request.rawBody.includes(needle)).map((request) => JSON.parse(request.rawBody));
const withoutRaw = (item: E2eItem) => {
	const { rawResponse: _raw, ...json } = item.json;
	return json;
};

describeWorkflow('mgwChat0001', 'the same output with and without Stream', () => {
	const id = 'mgwChat0001';
	const plain = () => nodeItems(results(), id, 'Chat');
	const streamed = () => nodeItems(results(), id, 'Chat Streamed');

	it('answers every item, paired with its input', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		expect(plain().map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }]);
		expect(streamed().map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }]);
	});

	it('outputs text, model, finishReason, usage and the reasoning of chat-fable-5', () => {
		expect(withoutRaw(plain()[0])).toEqual({
			text: '[Answer in one sentence.] Echo from chat-fable-5: What does a fox eat in winter?',
			model: 'chat-fable-5',
			finishReason: 'stop',
			usage: expect.objectContaining({ completion_tokens: expect.any(Number), total_tokens: expect.any(Number) }),
			reasoning: 'Reasoning with adaptive effort about: What does a fox eat in winter?',
		});
	});

	it('gives identical output when streamed', () => {
		expect(streamed().map(withoutRaw)).toEqual(plain().map(withoutRaw));
		expect(streamed()[1].json.rawResponse).toMatchObject({ object: 'chat.completion', choices: [{ finish_reason: 'stop' }] });
		const bodies = chatBodies('Why is the sky blue?').filter((body) => body.model === 'chat-fable-5');
		expect(bodies.map((body) => body.stream).sort()).toEqual([false, true]);
	});

	it('sends effort, temperature and stop on chat-opus-4-8', () => {
		const [item] = nodeItems(results(), id, 'Chat Effort Streamed');
		expect(item.json.reasoning).toBe('Reasoning with xhigh effort about: What does a fox eat in winter?');
		const [body] = chatBodies('What does a fox eat in winter?').filter((b) => b.model === 'chat-opus-4-8');
		expect(body).toMatchObject({ reasoning_effort: 'xhigh', temperature: 0.2, stop: ['STOP'], max_tokens: 2000, stream: true });
	});
});

describeWorkflow('mgwChat0002', 'broken and error streams become error items', () => {
	const items = () => nodeItems(results(), 'mgwChat0002', 'Chat Streamed');

	it('keeps the good item and turns each failure into a plain-words error item', () => {
		expect(items().map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }, { item: 3 }]);
		expect(items()[0].json.text).toBe('Echo from chat-sonnet-5: all good here');
		expect(items()[1].json.error).toBe(
			'The chat request failed: the gateway reported a failure: "upstream stream error: the model stopped unexpectedly" (code stream_interrupted)',
		);
		expect(items()[2].json.error).toMatch(/^The chat request failed: the connection to 127\.0\.0\.1:\d+ was dropped before the answer was complete$/);
		expect(items()[3].json.error).toBe('"Messages" row 1 (user) has no content (item 3)');
		for (const item of items().slice(1)) expect(item.json).not.toHaveProperty('text');
	});
});

describeWorkflow('mgwChat0004', 'a stream that goes silent ends at Idle Timeout; keep-alives keep it alive', () => {
	const id = 'mgwChat0004';
	const silentWords = (what: string) =>
		new RegExp(`^${what} failed: the gateway sent nothing for 5 s after [\\d,]+ characters of the answer \\(\\d+ events\\), the limit set by Idle Timeout \\(Seconds\\)$`);

	it.each([
		['Chat Streamed', 'The chat request', '/v1/chat/completions'],
		['Messages Streamed', 'The messages request', '/v1/messages'],
	])('%s: the silent item fails in plain words, sent once; the others answer whole', (node, what, path) => {
		const items = nodeItems(results(), id, node);
		expect(items.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
		expect(items[0].json.text).toBe('Echo from chat-sonnet-5: all good here');
		expect(String(items[1].json.error)).toMatch(silentWords(what));
		expect(items[1].json).not.toHaveProperty('text');
		expect(String(items[2].json.text)).toContain('twelve');
		const silent = gatewayRequests((request) => request.path === path && request.rawBody.includes('[stall-after:700]"'));
		expect(silent).toHaveLength(1);
		// Idle Timeout 5 s (a busy batch of 32 workflows delays a live answer by seconds, so not 1 s):
		// the silent item ended at about 5 s, the kept-alive one after its 8 s; nobody waited for the Timeout of 30 s.
		expect(nodeRun(results(), id, node).executionTimeMs).toBeLessThan(25_000);
		expect(workflowResult(results(), id).status).toBe('success');
	});
});

describeWorkflow('mgwChat0003', 'an unknown model is a plain-words error', () => {
	it('stops the workflow with the reason', () => {
		expect(workflowError(results(), 'mgwChat0003')?.message).toMatch(/^The chat request failed: the gateway has no channel for this model \(HTTP 503\)/);
	});
});

describeWorkflow('mgwExChat0001', 'example: summarise an article', () => {
	it('produces a summary', () => {
		expect(workflowResult(results(), 'mgwExChat0001').status).toBe('success');
		const [summary] = nodeItems(results(), 'mgwExChat0001', 'Summary');
		expect(summary.json).toMatchObject({ title: 'What is n8n?', complete: true, tokens: expect.any(Number) });
		expect(summary.json.summary).toMatch(/^\[You summarise articles.*\] Echo from chat-sonnet-5: Title: What is n8n\?/s);
	});
});
