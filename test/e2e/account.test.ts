/** Gateway Account in a real n8n: the example that checks the key's balance before it submits videos. */
import { describeWorkflow, gatewayRequests, loadE2eResults, nodeItems, workflowResult } from './harness';

const results = () => loadE2eResults();

describeWorkflow('mgwExAccount01', 'example: check the balance before submitting videos', () => {
	const id = 'mgwExAccount01';

	it('reads the balance from the default gateway (one-api-like: the dashboard pair), in USD', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		const [balance] = nodeItems(results(), id, 'Check Balance').map((item) => item.json);
		expect(balance).toEqual({ available: expect.any(Number), used: expect.any(Number), granted: expect.any(Number), unit: 'USD', unlimited: false, expiresAt: null, source: '/v1/dashboard/billing/subscription' });
		expect(gatewayRequests((r) => r.method === 'GET' && r.path === '/api/usage/token/').length).toBeGreaterThanOrEqual(1);
	});

	it('enough left: submits one video per planned prompt, each with its task id', () => {
		const submitted = nodeItems(results(), id, 'Submit Video Tasks').map((item) => item.json);
		expect(submitted).toHaveLength(2);
		for (const task of submitted) expect(task.task_id).toEqual(expect.stringMatching(/^task_/));
	});
});
