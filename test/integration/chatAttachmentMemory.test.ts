/**
 * Issue 19: memory flat in the number of items. Binary Attachments of many items, kept as n8n's
 * filesystem mode keeps them (on disk, read through n8n's helpers), sent over real HTTP to a tiny
 * loopback server that answers each request after a short wait. The check before any request
 * reads only the first bytes of each file; an item's whole file is read when its request goes out,
 * so at most Concurrency items' files are held at once, and the heap (after garbage collection)
 * grows with Concurrency, not with the number of items.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';

import type { IBinaryData, IDataObject, INodeExecutionData } from 'n8n-workflow';

import { complete } from '../../nodes/GatewayChat/complete';
import { createMessage } from '../../nodes/GatewayMessages/create';
import { createExecuteContext } from '../helpers/executeContext';
import { pngHeader } from '../helpers/files';

v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

const MB = 1024 * 1024;

// Dozens of items and, in the memory test, whole garbage collections.
jest.setTimeout(60_000);

interface Event {
	kind: 'whole read' | 'head read' | 'request' | 'answered';
	item: number;
	bytes?: number;
}

let events: Event[] = [];
/** Whether requests sample the memory (a garbage collection each: slow). */
let sampling = false;
let requestCount = 0;
/** Heap and buffer memory after a garbage collection, at each request's arrival. */
let samples: number[] = [];
let server: http.Server;
let baseUrl: string;
let directory: string;

const memoryInUse = () => {
	collectGarbage();
	const usage = process.memoryUsage();
	return usage.heapUsed + usage.arrayBuffers;
};

beforeAll(async () => {
	directory = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-attachments-'));
	server = http.createServer((request, response) => {
		// Every fourth request: each sample costs a whole garbage collection.
		if (sampling && requestCount++ % 4 === 1) samples.push(memoryInUse());
		let item = -1;
		const parts: Buffer[] = [];
		request.on('data', (part: Buffer) => parts.push(part));
		request.on('end', () => {
			item = Number(/item (\d+)/.exec(Buffer.concat(parts).toString('latin1'))?.[1] ?? -1);
			parts.length = 0;
			events.push({ kind: 'request', item });
			setTimeout(() => {
				events.push({ kind: 'answered', item });
				const answer = request.url?.includes('messages')
					? { id: 'm', type: 'message', role: 'assistant', model: 'chat-sonnet-5', content: [{ type: 'text', text: 'A red square' }], stop_reason: 'end_turn', usage: {} }
					: { id: 'c', object: 'chat.completion', model: 'chat-sonnet-5', choices: [{ index: 0, message: { role: 'assistant', content: 'A red square' }, finish_reason: 'stop' }] };
				response.writeHead(200, { 'content-type': 'application/json' });
				response.end(JSON.stringify(answer));
			}, 20);
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
	await new Promise((resolve) => server.close(resolve));
	fs.rmSync(directory, { recursive: true, force: true });
});
beforeEach(() => {
	sampling = false;
	requestCount = 0;
	events = [];
	samples = [];
});

/** `count` items, each with its own PNG of `size` bytes on disk, as n8n's filesystem mode keeps them. */
function itemsOnDisk(count: number, size: number): INodeExecutionData[] {
	return Array.from({ length: count }, (_, item) => {
		const file = path.join(directory, `photo-${item}.png`);
		const bytes = pngHeader(64, 64, size);
		bytes.writeUInt32BE(item, bytes.length - 4);
		fs.writeFileSync(file, bytes);
		const binary: IBinaryData = { id: `filesystem-v2:${file}`, data: 'filesystem-v2', mimeType: 'image/png', fileName: `photo-${item}.png`, fileSize: `${size} B` };
		return { json: { item }, binary: { photo: binary } };
	});
}

/** A context whose binary helpers read the files from disk, as n8n's do in filesystem mode, and log each read. */
function contextFor(node: 'chat' | 'messages', items: INodeExecutionData[], concurrency: number) {
	const test = createExecuteContext({
		parameters: (itemIndex) => ({
			model: { __rl: true, mode: 'id', value: 'chat-sonnet-5' },
			messages: { values: [{ role: 'user', content: `Describe item ${itemIndex}` }] },
			maxTokens: 1024,
			stream: false,
			options: { binaryAttachments: 'photo', concurrency },
		}),
		items,
		credentials: { apiKey: 'sk-attachments-0123456789', baseUrl },
		nodeType: `n8n-nodes-model-gateway.${node === 'chat' ? 'gatewayChat' : 'gatewayMessages'}`,
	});
	// The test context logs every request with its body: that log would hold every file.
	test.requests.push = () => 0;
	const fileOf = (id: string) => id.replace(/^filesystem-v2:/, '');
	const itemOf = (id: string) => items.findIndex((item) => item.binary?.photo.id === id);
	Object.assign(test.ctx.helpers, {
		assertBinaryData: (itemIndex: number, property: string) => items[itemIndex].binary![property],
		getBinaryMetadata: async (id: string) => ({ fileSize: fs.statSync(fileOf(id)).size, mimeType: 'image/png' }),
		getBinaryStream: async (id: string, chunkSize?: number) => {
			const stream = fs.createReadStream(fileOf(id), { highWaterMark: chunkSize });
			stream.on('close', () => events.push({ kind: 'head read', item: itemOf(id), bytes: stream.bytesRead }));
			return stream;
		},
		getBinaryDataBuffer: async (itemIndex: number, property: string) => {
			const bytes = await fs.promises.readFile(fileOf(items[itemIndex].binary![property].id!));
			events.push({ kind: 'whole read', item: itemIndex, bytes: bytes.length });
			return bytes;
		},
	});
	return test;
}

/** The most items at once whose whole file was read and whose request was not answered yet. */
function mostHeldAtOnce(list: Event[]): number {
	const held = new Set<number>();
	let most = 0;
	for (const event of list) {
		if (event.kind === 'whole read') held.add(event.item);
		if (event.kind === 'answered') held.delete(event.item);
		most = Math.max(most, held.size);
	}
	return most;
}

describe.each(['chat', 'messages'] as const)('Gateway %s: Binary Attachments of many items', (node) => {
	// Messages counts images on their Base64 text (5 MB at most): 2 MB files fit both formats.
	const SIZE = 2 * MB;
	const COUNT = 30;
	const CONCURRENCY = 3;

	it('reads only the first bytes of each file before the first request, and whole files for at most Concurrency items at once', async () => {
		const items = itemsOnDisk(COUNT, SIZE);
		const [output] = await (node === 'chat' ? complete : createMessage).call(contextFor(node, items, CONCURRENCY).ctx);
		expect(output.map((item) => (item.json as IDataObject).text)).toEqual(Array.from({ length: COUNT }, () => 'A red square'));

		const beforeFirstRequest = events.slice(0, events.findIndex((event) => event.kind === 'request'));
		expect(beforeFirstRequest.filter((event) => event.kind === 'whole read').length).toBeLessThanOrEqual(CONCURRENCY);
		const heads = events.filter((event) => event.kind === 'head read');
		expect(heads).toHaveLength(COUNT);
		for (const head of heads) expect(head.bytes).toBeLessThanOrEqual(128 * 1024);
		expect(events.filter((event) => event.kind === 'whole read')).toHaveLength(COUNT);
		expect(mostHeldAtOnce(events)).toBeLessThanOrEqual(CONCURRENCY);
	});

	it('keeps the memory in use within a bound set by Concurrency, not by the number of items', async () => {
		const items = itemsOnDisk(30, SIZE);
		sampling = true;
		const baseline = memoryInUse();
		await (node === 'chat' ? complete : createMessage).call(contextFor(node, items, 2).ctx);
		const peak = Math.max(...samples) - baseline;
		// A request in flight holds its file a few times over (Base64, the body, the text sent):
		// about 6 MB here with Concurrency 1, 12 to 40 MB with 4, the same with 12 or 36 items.
		// The encoded files of all 30 items alone would be 30 x 2.7 MB.
		expect(samples.length).toBeGreaterThanOrEqual(6);
		expect(peak).toBeLessThan((2 + 1) * 6 * SIZE);
	});
});
