/**
 * The exits (nodes/shared/failures/exits.ts): every way data leaves a node is masked with the
 * credential's policy, and every node's execute goes through them, so no path can forget.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions, INode } from 'n8n-workflow';

import { withMaskedExits } from '../../nodes/shared/failures/exits';

const KEY = 'sk-Exit4Rm9Tq2Vb7Lc0Ns5Hd8Kw3';
const SECRET = KEY.slice(3);
const node: INode = { id: 'n1', name: 'Gateway Node', type: 'n8n-nodes-model-gateway.test', typeVersion: 1, position: [0, 0], parameters: {} };

function fakeContext() {
	const sent: unknown[] = [];
	const logs: unknown[] = [];
	const customData: Record<string, string> = {};
	let credentialReads = 0;
	const ctx = {
		getNode: () => node,
		getCredentials: async () => {
			credentialReads++;
			return { apiKey: KEY, baseUrl: 'http://127.0.0.1:9', customHeaders: '{"x-api-token":"Qk7v9","x-portkey-provider":"openai"}' };
		},
		// n8n's logger has read-only methods.
		logger: Object.freeze({ info: (message: string, meta?: object) => logs.push({ message, meta }), warn: () => undefined, error: () => undefined, debug: () => undefined }),
		customData: { set: (key: string, value: string) => (customData[key] = value), setAll: () => undefined, get: () => undefined, getAll: () => ({}) },
		sendChunk: async (type: string, itemIndex: number, content?: unknown) => sent.push({ type, itemIndex, content }),
	} as unknown as IExecuteFunctions;
	// As in n8n: the logger is a read-only, non-configurable property of the context.
	Object.defineProperty(ctx, 'logger', { value: ctx.logger, writable: false, configurable: false });
	return { ctx, sent, logs, customData, reads: () => credentialReads };
}

describe('withMaskedExits', () => {
	it('masks output items (json and file metadata), log lines, custom data and live chunks; the credential is read once', async () => {
		const fake = fakeContext();
		const output = await withMaskedExits(fake.ctx, async (ctx) => {
			await ctx.getCredentials('gatewayApi');
			ctx.logger.info(`created with ${KEY}`, { header: 'Qk7v9', provider: 'openai' });
			ctx.customData.set('video_x', `2/3 done: ${SECRET}`);
			for (const piece of ['Key: sk-Exi', 't4Rm9Tq2', 'Vb7Lc0Ns5Hd8Kw3 ok']) await ctx.sendChunk('item', 0, piece);
			await ctx.sendChunk('end', 0);
			return [[{ json: { text: `answer ${KEY}`, nested: [{ tag: `t ${SECRET}` }] }, binary: { data: { data: 'AAAA', mimeType: 'image/png', fileName: `${SECRET}.png` } }, pairedItem: { item: 0 } }]];
		});
		const everything = JSON.stringify({ output, sent: fake.sent, logs: fake.logs, customData: fake.customData });
		expect(everything).not.toContain(SECRET.slice(0, 8));
		expect(everything).not.toContain(SECRET.slice(-8));
		expect(everything).not.toMatch(/"Qk7v9"/);
		expect(everything).toContain('openai');
		expect(output[0][0].binary?.data.data).toBe('AAAA');
		expect(output[0][0].json.text).toBe('answer ***');
		expect((fake.sent as Array<{ content?: string }>).map((chunk) => chunk.content ?? '').join('')).toBe('Key: *** ok');
		expect(fake.reads()).toBe(1);
	});

	it('masks what an error carries, input checks included (message, description, context, stack)', async () => {
		const fake = fakeContext();
		const thrown = await withMaskedExits(fake.ctx, async () => {
			const error = new NodeOperationError(node, `"Image URL" must be a link, not "${SECRET}"`, { description: `got ${SECRET}` });
			error.context = { itemFields: { link: SECRET } };
			throw error;
		}).then(
			() => new Error('expected a failure'),
			(error: Error) => error,
		);
		const everything = JSON.stringify({ ...thrown, message: thrown.message, stack: thrown.stack });
		expect(everything).not.toContain(SECRET.slice(0, 8));
		expect(thrown.message).toBe('"Image URL" must be a link, not "***"');
	});

	it("is where every node's execute leaves", () => {
		const nodesDir = path.join(__dirname, '..', '..', 'nodes');
		const files = fs.readdirSync(nodesDir).flatMap((dir) => (fs.existsSync(path.join(nodesDir, dir, `${dir}.node.ts`)) ? [path.join(nodesDir, dir, `${dir}.node.ts`)] : []));
		const executing = files.filter((file) => /async execute\(/.test(fs.readFileSync(file, 'utf8')));
		expect(executing.length).toBeGreaterThanOrEqual(5);
		for (const file of executing) expect([path.basename(file), /async execute\(this: IExecuteFunctions\)[^{]*\{\s*return await withMaskedExits\(this, /.test(fs.readFileSync(file, 'utf8'))]).toEqual([path.basename(file), true]);
	});
});
