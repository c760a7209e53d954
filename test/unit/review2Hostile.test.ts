import { PassThrough, Readable } from 'stream';
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { attachmentParts, loadAttachments } from '../../nodes/shared/files/attachments';
import { encodeJsonBody } from '../../nodes/shared/wire/jsonBody';
import { StreamedBody } from '../../nodes/shared/wire/streamedBody';

import { planFirstFrame, readFirstFrame, statusPath } from '../../nodes/GatewayVideoGenerate/request';
import { fileWaitScope } from '../../nodes/shared/wire/fileWait';
import { readStatusAnswer, taskIdProblem } from '../../nodes/GatewayVideoGenerate/task';
import { answerStart, startsEventStream } from '../../nodes/shared/chat/chatCall';
import type { ByteStream } from '../../nodes/shared/wire/transport';

describe('a task id that cannot be percent-encoded is refused, not thrown on when polled', () => {
	it.each([['lone high surrogate', 'task-\ud800'], ['lone low surrogate', '\udc00task'], ['reversed pair', 'a\udc00\ud800b']])('%s', (_, taskId) => {
		expect(taskIdProblem(taskId)).toEqual(expect.any(String));
	});

	it('an id with a whole surrogate pair (an emoji) is one segment and stays allowed', () => {
		expect(taskIdProblem('task-\ud83c\udfac')).toBeUndefined();
		expect(statusPath('task-\ud83c\udfac')).toMatch(/%F0%9F%8E%AC$/);
	});
});

describe('a streamed body that begins with a UTF-8 byte order mark is still read as a stream', () => {
	const streamOf = (bytes: Buffer): ByteStream => {
		const stream = new PassThrough();
		stream.end(bytes);
		return stream as unknown as ByteStream;
	};

	it.each([
		['data', 'data: {"choices":[]}\n\n', 'd'],
		['a keep-alive comment', ': keep-alive\n\ndata: [DONE]\n\n', ':'],
		['a JSON body', '{"choices":[]}', '{'],
	])('BOM then %s', async (_, text, first) => {
		const character = (await answerStart({ body: streamOf(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)])), alive: () => undefined })).first;
		expect(character).toBe(first);
		expect(startsEventStream(character)).toBe(first !== '{');
	});
});

describe('a status answer whose record names no task, wrapped in an answer that names another', () => {
	it('is about the task the wrapper names: answeredFor says so, so it is never followed', () => {
		const body = { task_id: 'someone-elses', data: { status: 'SUCCESS', result_url: 'https://cdn/their.mp4' } };
		expect(readStatusAnswer(body, 'mine')?.answeredFor).toBe('someone-elses');
	});

	it('a wrapper naming the task of record, or nothing, stays accepted', () => {
		expect(readStatusAnswer({ task_id: 'mine', data: { status: 'SUCCESS' } }, 'mine')?.answeredFor).toBeUndefined();
		expect(readStatusAnswer({ code: 'success', data: { status: 'SUCCESS' } }, 'mine')?.answeredFor).toBeUndefined();
	});
});

/** A stored PNG whose recorded size lies: it holds 64 MB more than its head; reads are counted. */
function lyingStore(headPadding: number) {
	const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(headPadding)]);
	const store = {
		streamed: 0,
		wholeReads: 0,
		// A Node Readable, as n8n's binary store gives, in pieces of 64 KiB.
		stream: () =>
			Readable.from(
				(async function* () {
					yield png;
					for (let i = 0; i < 1024; i++) {
						store.streamed += 64 * 1024;
						yield Buffer.alloc(64 * 1024);
					}
				})(),
				{ objectMode: false },
			),
		async whole() {
			store.wholeReads++;
			return Buffer.concat([png, Buffer.alloc(64 * 1024 * 1024)]);
		},
	};
	return store;
}

/** Opens a body with streamed files the way the transport does for each attempt, and reads it whole. */
async function sendBody(body: IDataObject): Promise<Buffer> {
	const encoded = encodeJsonBody(body);
	if (!(encoded instanceof StreamedBody)) throw new Error('not a streamed body');
	const opened = await encoded.open();
	const parts: Buffer[] = [];
	for await (const chunk of opened.body) parts.push(chunk as Buffer);
	return Buffer.concat(parts);
}

describe('an attachment whose n8n-recorded size lies is not read whole when it is sent', () => {
	it('a file recorded as 100 bytes that holds 64 MB is refused after reading just past 100 bytes', async () => {
		const store = lyingStore(92);
		const ctx = {
			getInputData: () => [{ json: {}, binary: { data: { id: 'filesystem-v2:lying', bytes: 100, mimeType: 'image/png', data: '' } } }],
			getNode: () => ({ name: 'Chat', type: 'test', typeVersion: 1, parameters: {} }),
			helpers: {
				getBinaryStream: async () => store.stream(),
				getBinaryDataBuffer: async () => store.whole(),
			},
		} as unknown as IExecuteFunctions;
		const file = { property: 'data', kind: 'image' as const, mimeType: 'image/png', fileName: 'a.png', size: 100 };
		// Streamed into the request as it is sent: the file is refused while it is read.
		const [loaded] = await loadAttachments(ctx, 0, [file]);
		await expect(sendBody({ parts: attachmentParts('chat', [loaded]) })).rejects.toThrow(/"Binary Attachments" field "data" changed after it was checked: it holds more than the 100 bytes n8n recorded for it \(item 0\)/);
		expect(store.wholeReads).toBe(0);
		expect(store.streamed).toBeLessThanOrEqual(1024 * 1024);
	});
});

describe('a first frame whose n8n-recorded size lies is not read whole', () => {
	it('a frame recorded as 1 KB that holds 64 MB is refused as changed after reading just past 1 KB', async () => {
		const store = lyingStore(1016);
		const parameters: Record<string, unknown> = { 'options.imageUrl': '', 'options.imageBinaryProperty': 'frame' };
		const ctx = {
			getInputData: () => [{ json: {}, binary: { frame: { id: 'filesystem-v2:lying', bytes: 1024, mimeType: 'image/png', data: '' } } }],
			getNodeParameter: (name: string, _item: number, fallback: unknown) => parameters[name] ?? fallback,
			getNode: () => ({ name: 'Video', type: 'test', typeVersion: 1, parameters: {} }),
			helpers: {
				assertBinaryData: () => undefined,
				getBinaryStream: async () => store.stream(),
				getBinaryDataBuffer: async () => store.whole(),
			},
		} as unknown as IExecuteFunctions;
		// Typed from its head now, streamed into the request as it is sent: refused while it is read.
		const image = await readFirstFrame(ctx, 0, planFirstFrame(ctx, 0), { scope: fileWaitScope(Date.now() + 60_000), name: 'Max Wait (Seconds)' });
		await expect(sendBody({ image })).rejects.toThrow(/"Image From Binary Field" field "frame" changed after it was checked: it holds more than the 1024 bytes n8n recorded for it \(item 0\)/);
		expect(store.wholeReads).toBe(0);
		expect(store.streamed).toBeLessThanOrEqual(1024 * 1024);
	});
});
