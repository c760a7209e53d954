/**
 * Gateway Image Generate, the pure parts: reading and checking an item, the request body, and
 * what each output item gets from the gateway's answer.
 */
import { Readable } from 'stream';
import type { IDataObject } from 'n8n-workflow';

import { GatewayImageGenerate } from '../../nodes/GatewayImageGenerate/GatewayImageGenerate.node';
import { ImageAnswerReader } from '../../nodes/GatewayImageGenerate/inlineImages';
import { IMAGE_BODY_FIELDS } from '../../nodes/GatewayImageGenerate/description';
import { buildImageBody, readImageRequest } from '../../nodes/GatewayImageGenerate/request';
import type { ImageRequest } from '../../nodes/GatewayImageGenerate/request';
import type { ImageAnswer } from '../../nodes/GatewayImageGenerate/response';
import {
	estimateImageCostUsd,
	fileTypeFromHeader,
	imageAnswerProblem,
	linkBaseName,
	planImages,
} from '../../nodes/GatewayImageGenerate/response';
import { downloadToBinary, isPageContentType } from '../../nodes/shared/files/binary';
import { GatewayError } from '../../nodes/shared/failures/errors';
import { GatewayClient } from '../../nodes/shared/wire/transport';
import { createExecuteContext } from '../helpers/executeContext';

// Port 9 (discard) is never listened on here: any request would fail, and none may be sent.
const credentials = { apiKey: 'sk-unit-image', baseUrl: 'http://127.0.0.1:9' };
const model = { __rl: true, mode: 'list', value: 'img-image-2' };

const read = (parameters: IDataObject, itemIndex = 0) => {
	const { ctx } = createExecuteContext({ parameters: { model, ...parameters }, credentials });
	return readImageRequest(ctx, itemIndex);
};

const request = (overrides: Partial<ImageRequest> = {}): ImageRequest => ({
	model: 'img-image-2',
	prompt: 'a red fox',
	n: 1,
	responseFormat: 'url',
	downloadImage: true,
	binaryPropertyName: 'data',
	extraBody: {},
	...overrides,
});

describe('reading an item', () => {
	it('applies the defaults of the contract', () => {
		expect(read({ prompt: '  a red fox  ' })).toEqual(request());
	});

	it('reads every field, including a model typed by id and n given as digits', () => {
		const parsed = read({
			model: { __rl: true, mode: 'id', value: 'img-custom-1' },
			prompt: 'a fox',
			n: '3',
			responseFormat: 'b64_json',
			options: { downloadImage: false, binaryPropertyName: 'image', extraBody: '{"size":"1024x1024"}' },
		});
		expect(parsed).toEqual(
			request({ model: 'img-custom-1', prompt: 'a fox', n: 3, responseFormat: 'b64_json', downloadImage: false, binaryPropertyName: 'image', extraBody: { size: '1024x1024' } }),
		);
	});

	it('accepts extra body fields given as an object', () => {
		expect(read({ prompt: 'x', options: { extraBody: { quality: 'high' } } }).extraBody).toEqual({ quality: 'high' });
	});

	it.each([
		[{ prompt: '' }, '"Prompt" must not be empty (item 0)'],
		[{ prompt: '   ' }, '"Prompt" must not be empty (item 0)'],
		[{ prompt: { text: 'a fox' } }, '"Prompt" must be text, but the expression gave an object (item 0)'],
		[{ prompt: ['a fox'] }, '"Prompt" must be text, but the expression gave a list (item 0)'],
		[{ prompt: 'x', n: 0 }, '"Number of Images" must be from 1 to 10, not 0 (item 0)'],
		[{ prompt: 'x', n: 11 }, '"Number of Images" must be from 1 to 10, not 11 (item 0)'],
		[{ prompt: 'x', n: 2.5 }, '"Number of Images" must be a whole number, not "2.5" (item 0)'],
		[{ prompt: 'x', n: 'two' }, '"Number of Images" must be a whole number, not "two" (item 0)'],
		[{ prompt: 'x', responseFormat: 'png' }, '"Response Format" must be "url" or "b64_json", not "png" (item 0)'],
		[{ prompt: 'x', options: { extraBody: '[1, 2]' } }, '"Extra Body Fields" must be a JSON object (item 0)'],
		[{ prompt: 'x', options: { extraBody: '"size"' } }, '"Extra Body Fields" must be a JSON object (item 0)'],
		[{ prompt: 'x', options: { extraBody: '{size: 1}' } }, '"Extra Body Fields" is not valid JSON'],
		[{ prompt: 'x', options: { binaryPropertyName: 'my image' } }, '"Put Output File in Field" must be a field name'],
		[{ prompt: 'x', model: { __rl: true, mode: 'id', value: ' ' } }, '"Model" must not be empty (item 0)'],
	])('refuses %j', (parameters, message) => {
		expect(() => read(parameters)).toThrow(message);
	});

	it('names the item that is wrong', () => {
		const { ctx } = createExecuteContext({
			parameters: (itemIndex) => ({ model, prompt: itemIndex === 2 ? '' : 'ok' }),
			items: [{ json: {} }, { json: {} }, { json: {} }],
			credentials,
		});
		expect(() => readImageRequest(ctx, 2)).toThrow('"Prompt" must not be empty (item 2)');
	});
});

describe('the request body', () => {
	it('maps every node field to its gateway field', () => {
		expect(buildImageBody(request({ n: 4, responseFormat: 'b64_json' }))).toEqual({
			model: 'img-image-2',
			prompt: 'a red fox',
			n: 4,
			response_format: 'b64_json',
		});
		expect(Object.values(IMAGE_BODY_FIELDS).sort()).toEqual(['background', 'model', 'n', 'output_format', 'prompt', 'quality', 'response_format', 'size']);
	});

	it('merges extra fields, and the node fields win', () => {
		const body = buildImageBody(request({ extraBody: { size: '1024x1536', quality: 'high', n: 9, prompt: 'other', response_format: 'b64_json' } }));
		expect(body).toEqual({ size: '1024x1536', quality: 'high', model: 'img-image-2', prompt: 'a red fox', n: 1, response_format: 'url' });
	});

	it('does not change the extra fields it was given', () => {
		const extraBody = { size: '512x512' };
		buildImageBody(request({ extraBody }));
		expect(extraBody).toEqual({ size: '512x512' });
	});
});

describe('checking the answer', () => {
	it.each([
		[undefined, 'images (no "data" list)'],
		[{}, 'images (no "data" list)'],
		[{ data: [] }, 'images (no "data" list)'],
		[{ data: 'x' }, 'images (no "data" list)'],
		[{ data: [{ url: 'http://x/a.png' }, { revised_prompt: 'no image' }] }, '"url" or "b64_json" for image 1'],
		[{ data: [{ url: '' }] }, '"url" or "b64_json" for image 0'],
	])('refuses %j, saying what it lacks', (answer, missing) => {
		expect(imageAnswerProblem(answer)).toBe(missing);
	});

	it('accepts links and Base64', () => {
		expect(imageAnswerProblem({ data: [{ url: 'http://x/a.png' }, { b64_json: 'iVBO' }] })).toBeUndefined();
	});
});

describe('reading an answer with its images decoded as they arrive', () => {
	const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.from(Array.from({ length: 300 }, (_, i) => i % 256))]);
	const jpeg = Buffer.concat([Buffer.from('ffd8ffe0', 'hex'), Buffer.alloc(200, 7)]);

	/** The answer fed in pieces of `size` bytes: the text kept, parsed, and each image taken by its placeholder. */
	function read(answer: string, size: number, limits = { answer: 1e9, text: 1e6 }) {
		const reader = new ImageAnswerReader(limits.answer, limits.text);
		const bytes = Buffer.from(answer);
		let accepted = true;
		for (let at = 0; at < bytes.length && accepted; at += size) accepted = reader.write(bytes.subarray(at, at + size));
		if (!accepted) return { accepted };
		const parsed = JSON.parse(reader.text()) as { data: IDataObject[] } & IDataObject;
		const images = parsed.data.map((entry) => (typeof entry.b64_json === 'string' ? reader.images.take(entry.b64_json) : undefined));
		return { accepted, parsed, images };
	}

	it.each([1, 2, 3, 7, 64, 100_000])('decodes every b64_json and keeps the rest as it was, in pieces of %i bytes', (size) => {
		const answer = JSON.stringify({
			created: 1,
			data: [
				{ b64_json: png.toString('base64'), revised_prompt: 'say "b64_json": "x" \\ here' },
				{ url: 'http://h/a.png', note: ['b64_json', 'b64_json:'] },
				{ revised_prompt: 'j', b64_json: `data:image/jpeg;base64,${jpeg.toString('base64')}` },
			],
			usage: { total_tokens: 3 },
		}).replace('"b64_json":', '"b64_json" :\n ');
		const { parsed, images } = read(answer, size);
		expect(images?.[0]?.bytes?.equals(png)).toBe(true);
		expect(images?.[1]).toBeUndefined();
		expect(images?.[2]?.bytes?.equals(jpeg)).toBe(true);
		expect(parsed).toEqual({
			created: 1,
			data: [
				{ b64_json: '[image data 0: 308 B]', revised_prompt: 'say "b64_json": "x" \\ here' },
				{ url: 'http://h/a.png', note: ['b64_json', 'b64_json:'] },
				{ revised_prompt: 'j', b64_json: '[image data 1: 204 B]' },
			],
			usage: { total_tokens: 3 },
		});
	});

	it('reads escaped slashes and line breaks, which some encoders write into Base64', () => {
		const base64 = png.toString('base64');
		const escaped = `${base64.slice(0, 76)}\\n${base64.slice(76)}`.replace(/\//g, '\\/');
		for (const size of [1, 5, 1000]) expect(read(`{"data":[{"b64_json":"${escaped}"}]}`, size).images?.[0]?.bytes?.equals(png)).toBe(true);
	});

	it.each([
		['not base64 at all!!', 'is not valid Base64'],
		['aGVsbG8=aGVsbG8=', 'is not valid Base64'],
		['aGVs\\u0062G8=', 'is not valid Base64'],
		[Buffer.from('just some words').toString('base64'), 'decodes to text, not an image'],
		[Buffer.from('%PDF-1.7\n').toString('base64'), 'decodes to application/pdf, not an image'],
	])('says why %j is no image', (value, problem) => {
		const { parsed, images } = read(`{"data":[{"b64_json":"${value}"}]}`, 3);
		expect(images?.[0]).toEqual({ problem });
		expect(parsed?.data[0].b64_json).toBe(`[image data 0: ${problem}]`);
	});

	it('leaves an empty b64_json empty, so that a url beside it is taken', () => {
		const { parsed } = read('{"data":[{"url":"http://h/a.png","b64_json":""},{"b64_json":" "}]}', 4);
		expect(parsed?.data).toEqual([{ url: 'http://h/a.png', b64_json: '' }, { b64_json: ' ' }]);
		expect(imageAnswerProblem(parsed)).toBe('"url" or "b64_json" for image 1');
		const [image] = planImages(parsed as ImageAnswer, request(), 1);
		expect([image.download, image.base64]).toEqual(['http://h/a.png', undefined]);
	});

	it('decodes a b64_json value that is no placeholder (a key the reader did not see) as Base64 itself', () => {
		const reader = new ImageAnswerReader(1e6, 1e6);
		expect(reader.images.take(png.toString('base64')).bytes?.equals(png)).toBe(true);
		expect(reader.images.take('garbage!')).toEqual({ problem: 'is not valid Base64' });
		expect(reader.images.take(` data:image/png;base64,${png.toString('base64')}\n`).bytes?.equals(png)).toBe(true);
	});

	it('stops at the answer`s limit, and at the limit of its text without the images', () => {
		const answer = JSON.stringify({ data: [{ b64_json: png.toString('base64') }] });
		expect(read(answer, 10, { answer: answer.length, text: 100 }).accepted).toBe(true);
		expect(read(answer, 10, { answer: answer.length - 1, text: 100 }).accepted).toBe(false);
		expect(read(JSON.stringify({ data: [{ revised_prompt: 'x'.repeat(200) }] }), 10, { answer: 1e6, text: 100 }).accepted).toBe(false);
	});
});

describe('one output item per image', () => {
	const answer = {
		created: 1_700_000_000,
		output_format: 'png',
		usage: { input_tokens: 5, output_tokens: 2112, total_tokens: 2117 },
		data: [
			{ url: 'http://files.example/files/images/img_a1.png?sig=abc', revised_prompt: 'A detailed fox' },
			{ url: 'http://files.example/files/images/img_b2.png', revised_prompt: 'A detailed fox' },
		],
	};

	it('gives each image its json and says to download its link', () => {
		const images = planImages(answer, request({ n: 2 }), 1);
		expect(images).toEqual([
			{
				index: 0,
				baseName: 'img_a1',
				download: 'http://files.example/files/images/img_a1.png?sig=abc',
				json: {
					model: 'img-image-2',
					index: 0,
					url: 'http://files.example/files/images/img_a1.png?sig=abc',
					revised_prompt: 'A detailed fox',
					created: 1_700_000_000,
					output_format: 'png',
					usage: answer.usage,
					usageCoversAllImages: true,
					estimatedCostUsd: 0.04,
				},
			},
			expect.objectContaining({ index: 1, baseName: 'img_b2', download: 'http://files.example/files/images/img_b2.png' }),
		]);
		expect(images[1].json).toMatchObject({ index: 1, url: 'http://files.example/files/images/img_b2.png' });
	});

	it('keeps links only when downloading is off', () => {
		const [image] = planImages(answer, request({ downloadImage: false }), 1);
		expect(image.download).toBeUndefined();
		expect(image.base64).toBeUndefined();
		expect(image.json.url).toBe(answer.data[0].url);
	});

	it('decodes Base64 whatever the download option, and never puts it in json', () => {
		const inline = { data: [{ b64_json: 'data:image/png;base64,iVBORw0KGgo=', revised_prompt: 'r' }] };
		for (const downloadImage of [true, false]) {
			const [image] = planImages(inline, request({ responseFormat: 'b64_json', downloadImage }), 1);
			expect(image).toEqual({
				index: 0,
				baseName: 'image-0',
				base64: 'data:image/png;base64,iVBORw0KGgo=',
				json: { model: 'img-image-2', index: 0, revised_prompt: 'r', estimatedCostUsd: 0.04 },
			});
		}
	});

	it('prefers the model the gateway reports, and its own fields never override the node`s', () => {
		const [image] = planImages({ model: 'img-image-2-2026', index: 7, estimatedCostUsd: 99, data: [{ url: 'http://h/x.png', index: 5 }] }, request(), 1);
		expect(image.json).toEqual({ model: 'img-image-2-2026', index: 0, url: 'http://h/x.png', estimatedCostUsd: 0.04 });
	});

	it('applies the group multiplier to the catalogue price, per image', () => {
		const images = planImages(answer, request({ n: 2 }), 0.8);
		expect(images.map((image) => image.json.estimatedCostUsd)).toEqual([0.032, 0.032]);
	});
});

describe('small decisions', () => {
	it('estimates the cost from the catalogue, falling back to the document`s image price', () => {
		expect(estimateImageCostUsd('img-image-2', 1)).toBe(0.04);
		expect(estimateImageCostUsd('img-image-2', 0.3)).toBe(0.012);
		expect(estimateImageCostUsd('img-unknown', 2)).toBe(0.08);
	});

	it.each([
		['http://h/files/images/img_1.png?x=1', 'img_1'],
		['https://cdn.example/a/b/photo%20one.jpeg', 'photo one'],
		['https://cdn.example/a/b/', undefined],
		['https://cdn.example', undefined],
		['not a link', undefined],
	])('names the file after the link %s', (link, name) => {
		expect(linkBaseName(link)).toBe(name);
	});

	it.each([
		['image/png', { mimeType: 'image/png', extension: 'png' }],
		['image/jpeg; charset=binary', { mimeType: 'image/jpeg', extension: 'jpg' }],
		['image/svg+xml', { mimeType: 'image/svg+xml', extension: 'svg' }],
		['application/octet-stream', { mimeType: 'application/octet-stream', extension: 'bin' }],
		[undefined, { mimeType: 'application/octet-stream', extension: 'bin' }],
	])('falls back to the host`s type %s when the bytes are of no known type', (header, type) => {
		expect(fileTypeFromHeader(header)).toEqual(type);
	});
});

describe('a page where an image should be', () => {
	it.each([
		['text/html; charset=utf-8', true],
		['application/json', true],
		['application/xml', true],
		['text/plain', true],
		['image/png', false],
		['application/octet-stream', false],
		['binary/octet-stream', false],
		[undefined, false],
	])('%s is a page: %s', (contentType, page) => {
		expect(isPageContentType(contentType)).toBe(page);
	});
});

describe('the node', () => {
	const node = new GatewayImageGenerate();
	const { description } = node;

	it('is named and shaped as the contract says', () => {
		expect(description.name).toBe('gatewayImageGenerate');
		expect(description.displayName).toBe('Gateway Image Generate');
		expect(description.version).toBe(1);
		expect(description.usableAsTool).toBe(true);
		expect(description.credentials).toEqual([{ name: 'gatewayApi', required: true, testedBy: 'gatewayApiTest' }]);
		const names = description.properties.map((property) => property.name);
		expect(names).toEqual(['operation', 'model', 'images', 'prompt', 'n', 'responseFormat', 'options']);
		const byName = Object.fromEntries(description.properties.map((property) => [property.name, property]));
		// A workflow saved before Edit existed has no operation: it keeps generating.
		expect(byName.operation.default).toBe('generate');
		expect((byName.operation.options ?? []).map((option) => (option as { value: string }).value)).toEqual(['generate', 'edit']);
		expect(byName.images).toMatchObject({ default: 'data', displayOptions: { show: { operation: ['edit'] } } });
		expect(byName.model.default).toEqual({ mode: 'list', value: 'img-image-2' });
		expect(byName.n.default).toBe(1);
		expect(byName.responseFormat.default).toBe('url');
		const options = (byName.options.options ?? []) as Array<{ name: string; default: unknown }>;
		// The defaults an option gets when it is added; an option not added is not sent (contract).
		expect(Object.fromEntries(options.map((option) => [option.name, option.default]))).toEqual({
			background: 'auto',
			binaryPropertyName: 'data',
			concurrency: 10,
			downloadImage: true,
			extraBody: '{}',
			maskBinaryProperty: '',
			outputFormat: 'png',
			quality: 'auto',
			size: '1024x1024',
		});
	});

	it('lists image models in its picker', () => {
		expect(typeof node.methods.listSearch.searchImageModels).toBe('function');
	});

	it('refuses bad input before any request, naming field and item', async () => {
		const { ctx, requests } = createExecuteContext({
			parameters: (itemIndex) => ({ model, prompt: 'fox', n: itemIndex === 1 ? 12 : 1 }),
			items: [{ json: {} }, { json: {} }],
			credentials,
		});
		await expect(node.execute.call(ctx)).rejects.toThrow('"Number of Images" must be from 1 to 10, not 12 (item 1)');
		expect(requests).toHaveLength(0);
	});

	it('with Continue On Fail, a bad item becomes an error item paired with its input', async () => {
		const { ctx, requests } = createExecuteContext({
			parameters: { model, prompt: 'fox', options: { extraBody: '[]' } },
			continueOnFail: true,
			credentials,
		});
		const [output] = await node.execute.call(ctx);
		expect(output).toEqual([{ json: { error: '"Extra Body Fields" must be a JSON object (item 0)', errorDescription: expect.any(String) }, pairedItem: { item: 0 } }]);
		expect(requests).toHaveLength(0);
	});
});

describe('expired links (shared transport wording)', () => {
	const link = 'http://files.example:8080/files/images/img_1.png?sig=secret';

	/** What GatewayClient.download makes of one answer of a file host (another origin than the gateway). */
	async function downloadFailure(status: number, body = ''): Promise<GatewayError> {
		const { ctx } = createExecuteContext({ parameters: {}, credentials: { apiKey: 'sk-unit-image', baseUrl: 'http://gw.example:8080' } });
		ctx.helpers.httpRequest = (async () => ({ statusCode: status, headers: { 'content-type': 'text/plain' }, body: Readable.from([Buffer.from(body)]) })) as never;
		const client = await GatewayClient.create(ctx);
		const failure = await client.download(link, { what: 'Downloading image 1 of item 2', itemIndex: 2, retry: false }).then(
			() => undefined,
			(error: unknown) => error,
		);
		if (!(failure instanceof GatewayError)) throw new Error(`expected a GatewayError, got ${String(failure)}`);
		return failure;
	}

	it('says the link expired, names what failed and the host, never the link`s signature', async () => {
		const failure = await downloadFailure(403);
		expect(failure.kind).toBe('not_found');
		expect(failure.fullMessage).toBe('Downloading image 1 of item 2 failed: the link has expired or is gone (files.example:8080 answered HTTP 403)');
		expect(failure.hint).toMatch(/temporary/);
		expect(failure.itemIndex).toBe(2);
		expect(failure.fullMessage).not.toContain('secret');
	});

	it('quotes what the file host said', async () => {
		const failure = await downloadFailure(410, 'gone for good');
		expect(failure.fullMessage).toBe('Downloading image 1 of item 2 failed: the link has expired or is gone (files.example:8080 answered HTTP 410): "gone for good"');
	});

	it.each([
		[403, true],
		[404, true],
		[410, true],
		[400, false],
		[401, false],
		[500, false],
	])('treats HTTP %i from a file host as expired: %s', async (status, expired) => {
		const failure = await downloadFailure(status);
		expect(failure.status).toBe(status);
		expect(failure.kind === 'not_found' && /has expired/.test(failure.headline)).toBe(expired);
	});
});

describe('streaming a download into binary data (shared binary.ts)', () => {
	const { ctx, binaries } = createExecuteContext({ parameters: {}, credentials });
	const pngHead = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

	/** downloadToBinary of a link whose host answers 200 with `chunks`. */
	async function download(...chunks: Buffer[]) {
		ctx.helpers.httpRequest = (async () => ({ statusCode: 200, headers: { 'content-type': 'application/octet-stream' }, body: Readable.from(chunks) })) as never;
		const client = await GatewayClient.create(ctx);
		return await downloadToBinary(ctx, client, { link: 'http://files.example:8080/img_1', what: 'Downloading image 0', expected: 'an image', mediaPrefix: 'image/', downloadOption: 'Download Image', baseName: 'img_1', itemIndex: 0 });
	}

	it('keeps every byte of a file that arrives in small chunks', async () => {
		const file = Buffer.concat([pngHead, Buffer.alloc(100, 7)]);
		const binary = await download(file.subarray(0, 5), file.subarray(5, 40), file.subarray(40));
		expect(binary).toMatchObject({ mimeType: 'image/png', fileName: 'img_1.png' });
		expect(Buffer.from(binary.data, 'base64').equals(file)).toBe(true);
		expect(binaries[binaries.length - 1].streamed).toBe(true);
	});

	it('keeps every byte of a file shorter than the peek', async () => {
		const tiny = Buffer.from([0, 1, 2, 3, 0xfe, 0xff]);
		const binary = await download(tiny);
		expect(binary).toMatchObject({ mimeType: 'application/octet-stream', fileName: 'img_1.bin' });
		expect(Buffer.from(binary.data, 'base64').equals(tiny)).toBe(true);
	});
});
