/**
 * Gateway Image Generate, operation Edit, over real HTTP against the loopback gateway in both its
 * modes, which reads the multipart/form-data body for real: one image as `image`, several as
 * `image[]`, a mask, each file with its file name and the MIME type of its bytes; the outputs of a
 * generation; every refusal before any request; a gateway error quoted; a 5xx after the body
 * arrived not sent again; a large file kept outside the item streamed into the body piecewise.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';

import type { IBinaryData, IDataObject, INodeExecutionData } from 'n8n-workflow';

import { GatewayImageGenerate } from '../../nodes/GatewayImageGenerate/GatewayImageGenerate.node';
import { useGateway } from '../gateway/testing';
import { binaryBytes, createExecuteContext } from '../helpers/executeContext';
import { binaryItem, pngBytes, pngHeader, sampleJpeg, sampleWebp, sha256, withBinaryHelpers } from '../helpers/files';
import type { FileSpec } from '../helpers/files';

const KEY = 'sk-integration-edit-0123456789';
const EDITS = '/v1/images/edits';
const node = new GatewayImageGenerate();

type Env = ReturnType<typeof useGateway>;
type Failure = Error & { description?: string };
const noError = (): Failure => new Error('no error');

async function run(env: Env, parameters: IDataObject, items: INodeExecutionData[], options: { continueOnFail?: boolean } = {}) {
	const context = createExecuteContext({
		parameters: { operation: 'edit', model: { __rl: true, mode: 'list', value: 'img-image-2' }, prompt: 'Put a small red hat on the cat', ...parameters },
		items,
		continueOnFail: options.continueOnFail,
		credentials: { apiKey: KEY, baseUrl: env.gateway.baseUrl },
		nodeType: 'n8n-nodes-model-gateway.gatewayImageGenerate',
	});
	withBinaryHelpers(context.ctx);
	const [output] = await node.execute.call(context.ctx);
	return { output, ...context };
}

const apiRequests = (env: Env) => env.gateway.requests.filter((request) => request.server === 'api');
const edits = (env: Env) => apiRequests(env).filter((request) => request.path === EDITS);
const file = (bytes: Buffer, fileName?: string, mimeType?: string): FileSpec => ({ bytes, fileName, mimeType });

describe.each(['default', 'newapi'] as const)('against the loopback gateway (%s mode)', (flavor) => {
	const env = useGateway({ flavor });

	it('a saved workflow without an operation keeps generating', async () => {
		const context = createExecuteContext({
			parameters: { model: { __rl: true, mode: 'list', value: 'img-image-2' }, prompt: 'a lighthouse at dusk' },
			credentials: { apiKey: KEY, baseUrl: env.gateway.baseUrl },
		});
		const [output] = await node.execute.call(context.ctx);
		expect(output).toHaveLength(1);
		expect(apiRequests(env).map((request) => request.path)).toEqual(['/v1/images/generations']);
	});

	it('one image goes as the part `image`, with its file name and the type of its bytes, and comes back as files', async () => {
		const cat = pngBytes(32, 32);
		const extraBody = '{"moderation": "low", "output_compression": 80, "n": 9}';
		const { output } = await run(env, { n: 2, responseFormat: 'b64_json', options: { size: '1024x1024', extraBody } }, [binaryItem({ data: file(cat, 'cat.png', 'image/png') })]);
		const [request] = edits(env);
		expect(String(request.headers['content-type'])).toMatch(/^multipart\/form-data; boundary=/);
		expect(Number(request.headers['content-length'])).toBeGreaterThan(cat.length);
		// Extra Body Fields as text parts too; the node's own fields win (n).
		expect(request.form?.fields).toEqual({ model: 'img-image-2', prompt: 'Put a small red hat on the cat', n: 2, response_format: 'b64_json', size: '1024x1024', moderation: 'low', output_compression: '80' });
		expect(request.form?.files).toEqual([{ name: 'image', fileName: 'cat.png', contentType: 'image/png', size: cat.length, sha256: sha256(cat) }]);
		expect(output).toHaveLength(2);
		output.forEach((item, index) => {
			expect(item.pairedItem).toEqual({ item: 0 });
			expect(item.json).toMatchObject({ model: 'img-image-2', index, estimatedCostUsd: 0.04 });
			expect(item.binary?.data).toMatchObject({ mimeType: 'image/png', fileExtension: 'png' });
			expect(binaryBytes(item).subarray(1, 4).toString()).toBe('PNG');
		});
	});

	it('several images go as `image[]`, each named with the extension of its bytes; a mask goes as `mask`', async () => {
		const cat = pngBytes(16, 16);
		const mask = pngBytes(16, 16, [0, 0, 0]);
		const item = binaryItem({
			data: file(cat, 'cat.png', 'image/png'),
			// n8n says JPEG, the name says .jpeg, the bytes are a PNG: sent as a PNG named cat2.png.
			second: file(cat, 'cat2.jpeg', 'image/jpeg'),
			photo: file(sampleJpeg(), undefined, 'application/octet-stream'),
			web: file(sampleWebp(), 'sticker.webp'),
			hole: file(mask, 'mask.png'),
		});
		const { output } = await run(env, { images: 'data, second,photo\nweb', options: { maskBinaryProperty: 'hole' } }, [item]);
		expect(output).toHaveLength(1);
		const files = edits(env)[0].form?.files.map(({ name, fileName, contentType }) => [name, fileName, contentType]);
		expect(files).toEqual([
			['image[]', 'cat.png', 'image/png'],
			['image[]', 'cat2.png', 'image/png'],
			['image[]', 'photo.jpg', 'image/jpeg'],
			['image[]', 'sticker.webp', 'image/webp'],
			['mask', 'mask.png', 'image/png'],
		]);
		expect(edits(env)[0].form?.files[2].sha256).toBe(sha256(sampleJpeg()));
	});

	// Go's mime/multipart refused the whole form for a control character in a part header (new-api: a
	// 500 the node read as "may have been billed"), and a `\` before the closing quote hid the quote,
	// dropping the Extra Body Field without a word.
	it('a file name or a field name with a control character or a backslash reaches the gateway, percent-encoded', async () => {
		const extraBody = '{"user\\\\": "me"}';
		const { output } = await run(env, { options: { extraBody } }, [binaryItem({ data: file(pngBytes(), 'scan\x01 "2026"\\.png', 'image/png') })]);
		expect(output).toHaveLength(1);
		const [request] = edits(env);
		expect(request.form?.files.map(({ name, fileName }) => [name, fileName])).toEqual([['image', 'scan%01 %222026%22%5C.png']]);
		expect(request.form?.fields).toMatchObject({ 'user%5C': 'me' });
	});

	it('quotes the gateway when it refuses the edit', async () => {
		const error = await run(env, { model: { __rl: true, mode: 'id', value: 'chat-sonnet-5' } }, [binaryItem({ data: file(pngBytes(), 'a.png') })]).then(noError, (e: unknown) => e as Failure);
		expect(edits(env)).toHaveLength(1);
		expect(`${error.message} ${error.description ?? ''}`).toMatch(/Editing the images failed/);
		expect(`${error.message} ${error.description ?? ''}`).toMatch(/model chat-sonnet-5 is not an image model/);
	});

	it('a 5xx after the body arrived is not sent again: the edit may have been made (and billed)', async () => {
		env.gateway.queueFaults(EDITS, ['500-json']);
		const error = await run(env, {}, [binaryItem({ data: file(pngBytes(), 'a.png') })]).then(noError, (e: unknown) => e as Failure);
		expect(edits(env)).toHaveLength(1);
		expect(edits(env)[0].rawBody.length).toBeGreaterThan(100);
		expect(`${error.message} ${error.description ?? ''}`).toMatch(/may have/i);
		expect(`${error.message} ${error.description ?? ''}`).not.toContain(KEY);
	});
});

describe('refused before any request, naming the field and the item', () => {
	const env = useGateway();
	const png = () => file(pngBytes(), 'a.png');
	const manyImages = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`img${i}`, png()]));

	it.each<[string, IDataObject, Record<string, FileSpec>, RegExp]>([
		['a missing binary field', { images: 'data, other' }, { data: png() }, /"Images From Binary Fields" names the binary field "other", which this item does not have \(it has: data\) \(item 0\)/],
		['an empty file', {}, { data: file(Buffer.alloc(0), 'empty.png') }, /"Images From Binary Fields" field "data" holds an empty file .*: it must be a PNG, JPEG, WEBP image \(item 0\)/],
		['a file that is no image', {}, { data: file(Buffer.from('just some text, not a picture'), 'notes.png', 'image/png') }, /field "data" holds no image \(n8n lists it as image\/png, notes.png\)/],
		['a GIF, which the edit endpoint does not take', {}, { data: file(Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1'), 'a.gif') }, /field "data" holds image\/gif .*: it must be a PNG, JPEG, WEBP image/],
		['more than 16 images', { images: Object.keys(manyImages).join(',') }, manyImages, /"Images From Binary Fields" names 17 binary fields; an edit takes at most 16 images \(item 0\)/],
		['no image field named', { images: ' , ' }, { data: png() }, /"Images From Binary Fields" must name at least one binary field \(item 0\)/],
		['a mask that is not a PNG', { options: { maskBinaryProperty: 'mask' } }, { data: png(), mask: file(sampleJpeg(), 'mask.jpg') }, /"Mask From Binary Field" field "mask" holds image\/jpeg .*: it must be a PNG image \(item 0\)/],
		['a missing mask field', { options: { maskBinaryProperty: 'mask' } }, { data: png() }, /"Mask From Binary Field" names the binary field "mask", which this item does not have/],
	])('%s', async (_, parameters, files, words) => {
		const error = await run(env, parameters, [binaryItem(files)]).then(noError, (e: unknown) => e as Failure);
		expect(error).toBeInstanceOf(Error);
		expect(error.message).toMatch(words);
		expect(apiRequests(env)).toHaveLength(0);
	});

	it('with Continue On Fail the bad item is an error item and the good one is edited', async () => {
		const { output } = await run(env, {}, [binaryItem({ data: file(Buffer.from('text'), 'a.txt') }), binaryItem({ data: png() })], { continueOnFail: true });
		expect(output[0].json.error).toMatch(/field "data" holds no image/);
		expect(output[1].json).toMatchObject({ index: 0, model: 'img-image-2' });
		expect(edits(env)).toHaveLength(1);
	});
});

describe('a large file kept outside the item', () => {
	const env = useGateway();
	let directory: string;
	let picture: string;
	let bytes: Buffer;
	const SIZE = 12 * 1024 * 1024 + 5;

	beforeAll(() => {
		directory = fs.mkdtempSync(path.join(os.tmpdir(), 'image-edit-'));
		picture = path.join(directory, 'large.png');
		bytes = pngBytes(8, 8);
		bytes = Buffer.concat([bytes, crypto.randomBytes(SIZE - bytes.length)]);
		fs.writeFileSync(picture, bytes);
	});
	afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

	it('is streamed into the body piece by piece, never read whole, its length known up front', async () => {
		const binary: IBinaryData = { id: `filesystem-v2:${picture}`, data: 'filesystem-v2', mimeType: 'image/png', fileName: 'large.png', fileSize: `${SIZE} B` };
		const context = createExecuteContext({
			parameters: { operation: 'edit', model: { __rl: true, mode: 'id', value: 'img-image-2' }, prompt: 'Make it brighter', responseFormat: 'b64_json' },
			items: [{ json: {}, binary: { data: binary } }],
			credentials: { apiKey: KEY, baseUrl: env.gateway.baseUrl },
		});
		let chunks = 0;
		let largestChunk = 0;
		Object.assign(context.ctx.helpers, {
			assertBinaryData: () => binary,
			getBinaryMetadata: async () => ({ fileSize: SIZE, mimeType: 'image/png' }),
			getBinaryStream: async (_id: string, chunkSize?: number) => {
				const stream = fs.createReadStream(picture, { highWaterMark: chunkSize });
				if (chunkSize === undefined) {
					stream.on('data', (chunk) => {
						chunks++;
						largestChunk = Math.max(largestChunk, chunk.length);
					});
				}
				return stream;
			},
			getBinaryDataBuffer: async () => {
				throw new Error('the file was read whole');
			},
		});
		const [output] = await node.execute.call(context.ctx);
		expect(output).toHaveLength(1);
		// The body handed to n8n's request helper is a stream, of a length said before it was read.
		const sent = context.requests.find((request) => request.url.endsWith(EDITS));
		expect(Buffer.isBuffer(sent?.body)).toBe(false);
		expect(typeof (sent?.body as { pipe?: unknown }).pipe).toBe('function');
		const [request] = edits(env);
		expect(Number(request.headers['content-length'])).toBeGreaterThan(SIZE);
		expect(request.form?.files).toEqual([{ name: 'image', fileName: 'large.png', contentType: 'image/png', size: SIZE, sha256: sha256(bytes) }]);
		expect(chunks).toBeGreaterThan(100);
		expect(largestChunk).toBeLessThanOrEqual(64 * 1024);
	});

	// n8n 1.x records no byte count on a file it keeps outside the item; when the store then gives no
	// metadata either, the check read the whole file into memory (getBinaryDataBuffer) before the limit.
	it('whose size n8n did not record is measured as it streams by, never held whole: refused past the limit, else sent', async () => {
		const MB = 1024 * 1024;
		const streamed = (size: number) => {
			const reads: number[] = [];
			const binary: IBinaryData = { id: `filesystem-v2:${size}.png`, data: 'filesystem-v2', mimeType: 'image/png', fileName: 'photo.png', fileSize: `${size} B` };
			const context = createExecuteContext({
				parameters: { operation: 'edit', model: { __rl: true, mode: 'id', value: 'img-image-2' }, prompt: 'Make it brighter', responseFormat: 'b64_json' },
				items: [{ json: {}, binary: { data: binary } }],
				credentials: { apiKey: KEY, baseUrl: env.gateway.baseUrl },
			});
			Object.assign(context.ctx.helpers, {
				assertBinaryData: () => binary,
				getBinaryMetadata: async () => await Promise.reject(new Error('no metadata file')),
				getBinaryStream: async () => {
					let at = 0;
					return new Readable({
						read() {
							if (at >= size) return void this.push(null);
							const piece = Math.min(64 * 1024, size - at);
							reads.push(piece);
							this.push(at === 0 ? pngHeader(8, 8, piece) : Buffer.alloc(piece, 7));
							at += piece;
						},
					});
				},
				getBinaryDataBuffer: async () => {
					throw new Error('the file was read whole');
				},
			});
			return { context, reads };
		};
		const tooLarge = streamed(50 * MB + 1);
		const refused = await node.execute.call(tooLarge.context.ctx).then(noError, (e: unknown) => e as Failure);
		expect(refused.message).toMatch(/^"Images From Binary Fields" field "data" holds over 50(\.0)? MB; an edit takes files of at most 50(\.0)? MB \(item 0\)$/);
		// Read by as it streamed, 64 KiB at a time.
		expect(Math.max(...tooLarge.reads)).toBeLessThanOrEqual(64 * 1024);
		expect(edits(env)).toHaveLength(0);

		const fits = streamed(3 * MB + 5);
		const [output] = await node.execute.call(fits.context.ctx);
		expect(output).toHaveLength(1);
		expect(edits(env)[0].form?.files).toEqual([expect.objectContaining({ name: 'image', fileName: 'photo.png', size: 3 * MB + 5 })]);
	});
});

