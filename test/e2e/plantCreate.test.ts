/** Gateway Plant Create in a real n8n: the example import, a refused plant, and input checks. */
import { describeWorkflow, gatewayRequests, loadE2eResults, nodeItems, workflowError, workflowResult } from './harness';

const results = () => loadE2eResults();
const postsContaining = (text: string) => gatewayRequests((r) => r.method === 'POST' && r.path === '/plants' && r.rawBody.includes(text));

describeWorkflow('mgwExPlant0001', 'example: plants from spreadsheet rows', () => {
	const id = 'mgwExPlant0001';

	it('creates each row, keeps a big id exact, and turns the duplicate into an error item', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		const items = nodeItems(results(), id, 'Create Plant');
		expect(items.map((item) => item.json)).toEqual([
			{ id: 20001, name: 'Monstera deliciosa', tag: 'indoor' },
			{ id: 20002, name: 'Boston fern', tag: 'shade' },
			{ id: '9007199254740993', name: 'Olive tree' },
			expect.objectContaining({ error: 'Creating the plant failed: the gateway refused the request (HTTP 400): "plant with id 20001 already exists" (code 409)' }),
		]);
		expect(items.map((item) => item.pairedItem)).toEqual([0, 1, 2, 3].map((item) => ({ item })));
	});

	it('sent the int64 id with every digit', () => {
		expect(postsContaining('Olive tree').map((r) => r.rawBody)).toEqual(['{"id":9007199254740993,"name":"Olive tree"}']);
	});

	it('passes only the refused rows on', () => {
		expect(nodeItems(results(), id, 'Refused Rows').map((item) => item.json.error)).toEqual([expect.stringContaining('already exists')]);
	});
});

describeWorkflow('mgwPlant0001', 'a refused plant', () => {
	it("fails the workflow with the store's message and error code", () => {
		const id = 'mgwPlant0001';
		expect(workflowResult(results(), id).status).toBe('error');
		expect(workflowError(results(), id)).toMatchObject({
			node: 'Create Plant',
			message: 'Creating the plant failed: the gateway refused the request (HTTP 400): "plant name rejected by the store" (code 4001)',
		});
	});
});

describeWorkflow('mgwPlant0002', 'invalid input', () => {
	it('names the field and the item, and sends nothing, not even the valid row', () => {
		const id = 'mgwPlant0002';
		expect(workflowResult(results(), id).status).toBe('error');
		expect(workflowError(results(), id)?.message).toBe('"ID" must be a whole number, not "12.5" (item 1)');
		expect(postsContaining('[e2e-invalid]')).toEqual([]);
	});
});
