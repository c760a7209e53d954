/** Relays people run (issue 11) in a real n8n: streams without `text/event-stream`, `[DONE] ` with a trailing space, `anthropic-version`. */
import { describeWorkflow, gatewayRequests, loadE2eResults, nodeItems, workflowResult } from './harness';

const results = () => loadE2eResults();
const ID = 'mgwRelay0001';

describeWorkflow(ID, 'streams as relays really send them', () => {
	it('reads a text/plain stream, an untyped one and a [DONE] with a trailing space, as whole answers', () => {
		expect(workflowResult(results(), ID).status).toBe('success');
		const texts = nodeItems(results(), ID, 'Chat').map((item) => String(item.json.text));
		expect(texts).toHaveLength(3);
		expect(texts[0]).toMatch(/relay one/);
		expect(texts[1]).toMatch(/relay two/);
		expect(texts[2]).toMatch(/relay three/);
		for (const item of nodeItems(results(), ID, 'Chat')) expect(item.json.finishReason).toBe('stop');
	});

	it('Gateway Messages reads text/plain streams and sends anthropic-version', () => {
		const items = nodeItems(results(), ID, 'Messages');
		expect(items.map((item) => item.json.stopReason)).toEqual(['end_turn', 'end_turn', 'end_turn']);
		const sent = gatewayRequests((r) => r.path === '/v1/messages' && r.rawBody.includes('relay '));
		expect(sent).toHaveLength(3);
		for (const request of sent) expect(request.headers['anthropic-version']).toBe('2023-06-01');
	});
});
