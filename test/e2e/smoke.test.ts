/**
 * Proof that the e2e machinery works: a real n8n ran these workflows (test/e2e/workflows/smoke-*),
 * loaded our package, decrypted the imported credentials, and the results carry items, binary
 * data, Continue On Fail items and the errors nodes threw.
 */
import {
	binaryBuffer,
	describeWorkflow,
	E2E_CREDENTIALS,
	gatewayRequests,
	loadE2eResults,
	loadE2eRun,
	nodeItems,
	nodeRun,
	workflowError,
	workflowResult,
} from './harness';

const results = () => loadE2eResults();

describeWorkflow('mgwSmoke0001', 'built-in nodes only', () => {
	const id = 'mgwSmoke0001';

	it('succeeds and passes items from node to node', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		expect(nodeItems(results(), id, 'Make Items').map((i) => i.json)).toEqual([
			{ n: 1, label: 'item 1' },
			{ n: 2, label: 'item 2' },
			{ n: 3, label: 'item 3' },
		]);
		const squared = nodeItems(results(), id, 'Add Square');
		expect(squared.map((i) => i.json.square)).toEqual([1, 4, 9]);
		expect(squared.map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
	});

	it('exposes binary data as base64 and timing per node', () => {
		const [file] = nodeItems(results(), id, 'To File');
		expect(file.binary?.data).toMatchObject({ mimeType: 'application/json', fileName: 'squares.json' });
		expect(JSON.parse(binaryBuffer(file).toString('utf8'))).toHaveLength(3);
		const run = nodeRun(results(), id, 'Add Square');
		expect(run.executionTimeMs).toBeGreaterThanOrEqual(0);
		expect(run.startTime).toBeGreaterThan(0);
	});
});

describeWorkflow('mgwSmoke0002', 'a failing node and a Continue On Fail node', () => {
	const id = 'mgwSmoke0002';

	it('reports the error the failing node threw, naming the node', () => {
		expect(workflowResult(results(), id).status).toBe('error');
		expect(workflowError(results(), id)).toMatchObject({
			message: expect.stringContaining('smoke: deliberate failure'),
			node: 'Fail Always',
		});
		expect(nodeRun(results(), id, 'Fail Always').error?.message).toContain('smoke: deliberate failure');
	});

	it('keeps Continue On Fail items in the output, with json.error and pairedItem', () => {
		const items = nodeItems(results(), id, 'Fail Item 2');
		expect(items).toHaveLength(3);
		expect(items[1]).toMatchObject({ json: { error: expect.stringContaining('item 2 refused') }, pairedItem: { item: 1 } });
		expect(items[2].json).toEqual({ n: 3, ok: true });
	});
});

describeWorkflow('mgwSmoke0003', 'our package loads in n8n', () => {
	const id = 'mgwSmoke0003';

	it('runs Gateway Plant Create with the imported credential', () => {
		expect(workflowError(results(), id)).toBeUndefined();
		const [plant] = nodeItems(results(), id, 'Create Plant');
		expect(plant.json).toMatchObject({ name: 'Monstera', tag: 'smoke' });
		expect(String(plant.json.id)).toBe('10001');
	});

	it('sent the credential key to the gateway', () => {
		const { apiKey } = loadE2eRun().credentials.good;
		// by the exact name: the plant example creates "Monstera deliciosa" in the same run
		const posts = gatewayRequests((r) => r.path === '/plants' && JSON.parse(r.rawBody).name === 'Monstera');
		expect(posts).toHaveLength(1);
		expect(posts[0].headers.authorization).toBe(`Bearer ${apiKey}`);
	});
});

describeWorkflow('mgwSmoke0004', 'a key the gateway refuses', () => {
	const id = 'mgwSmoke0004';

	it('fails the node with the gateway refusal, never echoing the key', () => {
		const error = workflowError(results(), id);
		expect(error?.node).toBe('Create Plant');
		expect(error?.message).toMatch(/401|key/i);
		const { apiKey } = loadE2eRun().credentials.bad;
		expect(JSON.stringify(workflowResult(results(), id))).not.toContain(apiKey);
		expect(E2E_CREDENTIALS.bad.id).toBe('mgwE2eBadKey1');
	});
});
