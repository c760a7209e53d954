/**
 * Issue 19, rows 11c and 11d: a file n8n keeps outside the item (filesystem, database and S3
 * binary modes: the binary has an `id`, `getBinaryStream` reads it) is streamed into the request
 * body as it is sent, its Base64 encoded chunk by chunk: neither the file nor the body is ever
 * whole in memory. Real HTTP to a loopback server that writes every body it receives to disk
 * (so that it holds none of them either) and answers after a short wait; the bodies are then
 * parsed and their Base64 compared with the files. Also: a file whose length is not the one n8n
 * recorded fails its request clearly (aborted, nothing sent whole), a submit refused with 429 is
 * sent again with the same body, and no file stays open after a Stop.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';

import type { IBinaryData, IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { complete } from '../../nodes/GatewayChat/complete';
import { GatewayVideoGenerate } from '../../nodes/GatewayVideoGenerate/GatewayVideoGenerate.node';
import { createExecuteContext } from '../helpers/executeContext';
import { pngHeader } from '../helpers/files';
import { acceptedAnswer } from '../helpers/scriptedServer';

v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

const MB = 1024 * 1024;
// Not a whole number of groups of three: the last Base64 group is padded.
const SIZE = 4 * MB + 1;

// Dozens of 5 MB requests, with a garbage collection in each.
jest.setTimeout(120_000);

const memoryInUse = () => {
	// Twice: V8 frees the memory of dead Buffers after a collection, concurrently; the second waits for it.
	collectGarbage();
	collectGarbage();
	const usage = process.memoryUsage();
	return usage.heapUsed + usage.arrayBuffers;
};

interface Received {
	url: string;
	/** Where the body was written. */
	file: string;
	bytes: number;
	/** Content-Length as sent. */
	declared: number | undefined;
	complete: boolean;
}

interface Behaviour {
	/** Sample the memory in use once per request, halfway through its body. */
	sampling?: boolean;
	/** Answer the first request 429 (Retry-After 1 s), after reading its body. */
	refuseFirst?: boolean;
	/** Read no body: the request stays in flight until the client gives up (`arrived` is called). */
	hold?: () => void;
}

let behaviour: Behaviour = {};
let received: Received[] = [];
let samples: number[] = [];
let server: http.Server;
let baseUrl: string;
let directory: string;
let frame: string;
let frameBytes: Buffer;

beforeAll(async () => {
	directory = fs.mkdtempSync(path.join(os.tmpdir(), 'streamed-body-'));
	frame = path.join(directory, 'frame.png');
	// A PNG header, then random bytes: a misplaced byte anywhere shows in the Base64.
	frameBytes = pngHeader(64, 64, SIZE);
	crypto.randomFillSync(frameBytes, 1024);
	fs.writeFileSync(frame, frameBytes);
	server = http.createServer((request, response) => {
		const entry: Received = {
			url: request.url ?? '',
			file: path.join(directory, `body-${received.length}.json`),
			bytes: 0,
			declared: request.headers['content-length'] === undefined ? undefined : Number(request.headers['content-length']),
			complete: false,
		};
		received.push(entry);
		// A request the client aborts ends in an error here: the entry stays incomplete.
		request.on('error', () => undefined);
		if (behaviour.hold) {
			request.pause();
			behaviour.hold();
			return;
		}
		let sampled = false;
		request.on('data', (part: Buffer) => {
			entry.bytes += part.length;
			// Halfway through this body: the other requests in flight are sending theirs or waiting for answers.
			if (behaviour.sampling && !sampled && entry.bytes > SIZE / 2) {
				sampled = true;
				samples.push(memoryInUse());
			}
		});
		const out = fs.createWriteStream(entry.file);
		request.pipe(out);
		out.on('finish', () => {
			entry.complete = request.complete;
			const refuse = behaviour.refuseFirst && received.indexOf(entry) === 0;
			setTimeout(() => {
				if (refuse) {
					response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
					response.end(JSON.stringify({ error: { message: 'Too many requests', type: 'rate_limit_error' } }));
					return;
				}
				response.writeHead(200, { 'content-type': 'application/json' });
				response.end(JSON.stringify(acceptedAnswer(request.url, `task-${received.indexOf(entry)}`)));
			}, 40);
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
	server.closeAllConnections();
	await new Promise((resolve) => server.close(resolve));
	fs.rmSync(directory, { recursive: true, force: true });
});
beforeEach(() => {
	behaviour = {};
	received = [];
	samples = [];
});

/** The files this process has open at `file` (Linux: /proc/self/fd). */
function openHandles(file: string): number {
	let count = 0;
	for (const fd of fs.readdirSync('/proc/self/fd')) {
		try {
			if (fs.readlinkSync(`/proc/self/fd/${fd}`) === file) count++;
		} catch {
			// closed meanwhile
		}
	}
	return count;
}

interface Run {
	ctx: IExecuteFunctions;
	/** Every stream the node opened on the file (whole reads, not the heads checked). */
	streams: fs.ReadStream[];
}

/**
 * `count` items referring to the frame on disk, as n8n's filesystem mode keeps them, with n8n's
 * binary helpers reading it from there; `recorded` is the size n8n recorded (the real one unless a test lies).
 */
function runOver(parameters: IDataObject, nodeType: string, count: number, options: { recorded?: number; abortSignal?: AbortSignal } = {}): Run {
	const recorded = options.recorded ?? SIZE;
	const binary: IBinaryData = { id: `filesystem-v2:${frame}`, data: 'filesystem-v2', mimeType: 'image/png', fileName: 'frame.png', fileSize: `${recorded} B` };
	const items: INodeExecutionData[] = Array.from({ length: count }, (_, item) => ({ json: { item }, binary: { data: binary } }));
	const test = createExecuteContext({
		parameters,
		items,
		credentials: { apiKey: 'sk-streamed-bodies-0123456789', baseUrl },
		nodeType: `n8n-nodes-model-gateway.${nodeType}`,
		abortSignal: options.abortSignal,
	});
	// The test context logs every request with its options: the streams would stay referenced.
	test.requests.push = () => 0;
	const streams: fs.ReadStream[] = [];
	Object.assign(test.ctx.helpers, {
		assertBinaryData: (itemIndex: number, property: string) => items[itemIndex].binary![property],
		getBinaryMetadata: async () => ({ fileSize: recorded, mimeType: 'image/png' }),
		getBinaryStream: async (_id: string, chunkSize?: number) => {
			const stream = fs.createReadStream(frame, { highWaterMark: chunkSize });
			if (chunkSize === undefined) streams.push(stream);
			return stream;
		},
		getBinaryDataBuffer: async () => {
			throw new Error('the file was read whole');
		},
	});
	return { ctx: test.ctx, streams };
}

const videoParameters = (concurrency: number): IDataObject => ({
	operation: 'submit',
	model: { __rl: true, mode: 'id', value: 'video-2-0-fast-260128' },
	prompt: 'a paper boat',
	seconds: 5,
	size: '1280x720',
	options: { imageBinaryProperty: 'data', concurrency },
});
const chatParameters = (concurrency: number): IDataObject => ({
	model: { __rl: true, mode: 'id', value: 'chat-sonnet-5' },
	messages: { values: [{ role: 'user', content: 'Describe it' }] },
	maxTokens: 1024,
	stream: false,
	options: { binaryAttachments: 'data', concurrency },
});

const nodes = {
	'Gateway Video Generate (Image From Binary Field)': {
		run: async (run: Run) => (await new GatewayVideoGenerate().execute.call(run.ctx))[0].map((item) => (item.json as IDataObject).task_id),
		parameters: videoParameters,
		nodeType: 'gatewayVideoGenerate',
		dataUrlOf: (body: IDataObject) => body.image,
	},
	'Gateway Chat (Binary Attachments)': {
		run: async (run: Run) => (await complete.call(run.ctx))[0].map((item) => (item.json as IDataObject).text),
		parameters: chatParameters,
		nodeType: 'gatewayChat',
		dataUrlOf: (body: IDataObject) => (((body.messages as IDataObject[])[0].content as IDataObject[])[0].image_url as IDataObject).url,
	},
};

/** The body a request sent, parsed, with its file's data URL checked against the frame. */
function expectBodyOfFrame(entry: Received, dataUrlOf: (body: IDataObject) => unknown): void {
	const text = fs.readFileSync(entry.file);
	expect(entry.complete).toBe(true);
	expect(entry.declared).toBe(text.length);
	const body = JSON.parse(text.toString('utf8')) as IDataObject;
	const dataUrl = String(dataUrlOf(body));
	expect(dataUrl.startsWith('data:image/png;base64,')).toBe(true);
	expect(dataUrl.slice('data:image/png;base64,'.length)).toBe(frameBytes.toString('base64'));
}

describe.each(Object.keys(nodes) as Array<keyof typeof nodes>)('%s: a file n8n keeps on disk is streamed into the request', (name) => {
	const node = nodes[name];

	it('holds far less than the file per request in flight, and the gateway receives the exact JSON', async () => {
		const COUNT = 16;
		const CONCURRENCY = 4;
		const run = runOver(node.parameters(CONCURRENCY), node.nodeType, COUNT);
		behaviour = { sampling: true };
		const baseline = memoryInUse();
		const answers = await node.run(run);
		expect(answers).toHaveLength(COUNT);
		expect(answers.every((answer) => typeof answer === 'string' && answer !== '')).toBe(true);
		expect(received).toHaveLength(COUNT);
		expect(samples.length).toBeGreaterThanOrEqual(COUNT / 2);
		const peak = Math.max(...samples) - baseline;
		// Read whole, each request in flight held its file and its Base64 (2.3 × 4 MB, 40 to 48 MB
		// with Concurrency 4); streamed, the four requests together hold less than one file (1 to
		// 3.2 MB measured, the node's other state included).
		expect(peak).toBeLessThan(SIZE);
		for (const entry of received) expectBodyOfFrame(entry, node.dataUrlOf);
		expect(openHandles(frame)).toBe(0);
	});
});

describe('Gateway Video Generate: streamed first frames and what can go wrong', () => {
	const video = nodes['Gateway Video Generate (Image From Binary Field)'];

	it.each([
		['longer', SIZE - 1000, /"Image From Binary Field" field "data" changed after it was checked: it holds more than the 4193305 bytes n8n recorded for it \(item 0\)/],
		['shorter', SIZE + 1000, /"Image From Binary Field" field "data" changed after it was checked: it holds 4194305 bytes, not the 4195305 bytes n8n recorded for it \(item 0\)/],
	])('a file %s than n8n recorded fails its request clearly; the request is aborted, not sent whole', async (_, recorded, message) => {
		const run = runOver(video.parameters(1), video.nodeType, 1, { recorded });
		const started = Date.now();
		await expect(video.run(run)).rejects.toThrow(message);
		expect(Date.now() - started).toBeLessThan(10_000);
		// The gateway got a cut body, never one of the declared length: it created no task.
		await new Promise((resolve) => setTimeout(resolve, 100));
		expect(received).toHaveLength(1);
		expect(received[0].complete).toBe(false);
		expect(received[0].bytes).toBeLessThan(received[0].declared!);
		// Sent once: a file that is not the one checked is not a failure to retry.
		expect(run.streams).toHaveLength(1);
		expect(openHandles(frame)).toBe(0);
	});

	it('a submit refused with 429 is sent again with a freshly read body, the same both times', async () => {
		const run = runOver(video.parameters(1), video.nodeType, 1);
		behaviour = { refuseFirst: true };
		const [taskId] = await video.run(run);
		expect(taskId).toBe('task-1');
		expect(received).toHaveLength(2);
		for (const entry of received) expectBodyOfFrame(entry, video.dataUrlOf);
		expect(fs.readFileSync(received[0].file).equals(fs.readFileSync(received[1].file))).toBe(true);
		// One stream per attempt, each read to its end and closed.
		expect(run.streams).toHaveLength(2);
		expect(run.streams.every((stream) => stream.destroyed)).toBe(true);
		expect(openHandles(frame)).toBe(0);
	});

	it('a Stop while the body is being sent closes the file', async () => {
		const stop = new AbortController();
		const run = runOver(video.parameters(2), video.nodeType, 2, { abortSignal: stop.signal });
		let arrivals = 0;
		// Both requests arrive and stall: the gateway reads nothing, so each file is open mid-body.
		behaviour = { hold: () => ++arrivals === 2 && setTimeout(() => stop.abort(), 200) };
		await expect(video.run(run)).rejects.toThrow(/cancel|stopp/i);
		expect(arrivals).toBe(2);
		expect(run.streams).toHaveLength(2);
		await new Promise((resolve) => setTimeout(resolve, 100));
		expect(run.streams.every((stream) => stream.destroyed)).toBe(true);
		expect(openHandles(frame)).toBe(0);
	});
});
