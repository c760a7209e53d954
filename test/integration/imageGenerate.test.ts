/**
 * Gateway Image Generate against the loopback gateway over real HTTP: both response formats,
 * several images and items, real decodable files typed from their bytes, the key never sent to
 * the file host, expired links, and gateway errors.
 */
import * as fs from 'fs';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as path from 'path';
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';
import { PNG } from 'pngjs';

import { GatewayImageGenerate } from '../../nodes/GatewayImageGenerate/GatewayImageGenerate.node';
import { requestImages } from '../../nodes/GatewayImageGenerate/deliver';
import { GatewayError } from '../../nodes/shared/failures/errors';
import { GatewayClient } from '../../nodes/shared/wire/transport';
import { useGateway } from '../gateway/testing';
import { binaryBytes, createExecuteContext } from '../helpers/executeContext';
import type { GatewayCredentialData } from '../helpers/executeContext';

const KEY = 'sk-integration-image-0123456789';
const GENERATIONS = '/v1/images/generations';
const node = new GatewayImageGenerate();
const fixture = (name: string) => fs.readFileSync(path.join(__dirname, '../fixtures', name));
// One loopback gateway for the file, with a clean log and state before each test.
const env = useGateway();

interface RunOptions {
	items?: INodeExecutionData[];
	continueOnFail?: boolean;
	credentials?: Partial<GatewayCredentialData>;
}

async function run(parameters: IDataObject | ((itemIndex: number) => IDataObject), options: RunOptions = {}) {
	const withDefaults = (itemIndex: number) => ({
		model: { __rl: true, mode: 'list', value: 'img-image-2' },
		...(typeof parameters === 'function' ? parameters(itemIndex) : parameters),
	});
	const context = createExecuteContext({
		parameters: withDefaults,
		items: options.items,
		continueOnFail: options.continueOnFail,
		credentials: { apiKey: KEY, baseUrl: env.gateway.baseUrl, ...options.credentials },
		nodeType: 'n8n-nodes-model-gateway.gatewayImageGenerate',
	});
	const [output] = await node.execute.call(context.ctx);
	return { output, ...context };
}

const fileRequests = () => env.gateway.requests.filter((request) => request.server === 'files');
const generationRequests = () => env.gateway.requests.filter((request) => request.server === 'api' && request.path === GENERATIONS);

function decodePng(bytes: Buffer) {
	const png = PNG.sync.read(bytes);
	return { width: png.width, height: png.height, firstPixel: [...png.data.subarray(0, 3)] };
}

describe('url images (the default)', () => {
	it('downloads every image at once into a real PNG file, one item per image', async () => {
		const { output, binaries } = await run({ prompt: 'a red fox', n: 3 });
		expect(output).toHaveLength(3);
		const colours = new Set<string>();
		output.forEach((item, index) => {
			expect(item.pairedItem).toEqual({ item: 0 });
			expect(item.json).toMatchObject({
				model: 'img-image-2',
				index,
				url: expect.stringMatching(new RegExp(`^${env.gateway.fileBaseUrl}/files/images/img_\\w+\\.png$`)),
				revised_prompt: 'A detailed image of: a red fox',
				estimatedCostUsd: 0.04,
			});
			// The request's usage once, on the first image: a sum over the items counts it once.
			if (index === 0) expect(item.json).toMatchObject({ usage: expect.objectContaining({ output_tokens: 3 * 1056 }), usageCoversAllImages: true });
			else expect(item.json.usage).toBeUndefined();
			const binary = item.binary!.data;
			expect(binary).toMatchObject({ mimeType: 'image/png', fileExtension: 'png' });
			expect(binary.fileName).toBe(`${String(item.json.url).split('/').pop()}`);
			const image = decodePng(binaryBytes(item));
			expect([image.width, image.height]).toEqual([64, 64]);
			colours.add(image.firstPixel.join(','));
		});
		expect(colours.size).toBe(3); // three different images, not one three times
		expect(binaries.every((entry) => entry.streamed)).toBe(true);
	});

	it('sends the key to the gateway and never to the file host', async () => {
		const { requests } = await run({ prompt: 'a red fox', n: 2 });
		expect(generationRequests()).toHaveLength(1);
		expect(generationRequests()[0].headers.authorization).toBe(`Bearer ${KEY}`);
		expect(fileRequests()).toHaveLength(2);
		for (const request of fileRequests()) expect(request.headers.authorization).toBeUndefined();
		const downloads = requests.filter((request) => String(request.url).startsWith(env.gateway.fileBaseUrl));
		expect(downloads).toHaveLength(2);
		for (const request of downloads) expect(JSON.stringify(request.headers ?? {})).not.toContain(KEY);
	});

	it('sends exactly the documented body, with extra fields merged and the node fields winning', async () => {
		await run({ prompt: 'a fox', n: 2, options: { extraBody: '{"output_format":"jpeg","size":"1024x1024","n":7}' } });
		expect(JSON.parse(generationRequests()[0].rawBody)).toEqual({
			output_format: 'jpeg',
			size: '1024x1024',
			model: 'img-image-2',
			prompt: 'a fox',
			n: 2,
			response_format: 'url',
		});
	});

	it('types a JPEG from its bytes, with the matching extension', async () => {
		const { output } = await run({ prompt: 'a fox', options: { extraBody: { output_format: 'jpeg' } } });
		expect(output[0].binary!.data).toMatchObject({ mimeType: 'image/jpeg', fileExtension: 'jpg' });
		expect(output[0].binary!.data.fileName).toMatch(/^img_\w+\.jpg$/);
		expect(binaryBytes(output[0]).equals(fixture('sample-image.jpg'))).toBe(true);
	});

	it('puts the file in the binary field the user chose', async () => {
		const { output } = await run({ prompt: 'a fox', options: { binaryPropertyName: 'picture' } });
		expect(Object.keys(output[0].binary!)).toEqual(['picture']);
		expect(decodePng(binaryBytes(output[0], 'picture')).width).toBe(64);
	});

	it('gives links only when Download Image is off', async () => {
		const { output } = await run({ prompt: 'a fox', n: 2, options: { downloadImage: false } });
		expect(output.map((item) => item.binary)).toEqual([undefined, undefined]);
		expect(output.map((item) => item.json.index)).toEqual([0, 1]);
		expect(output.every((item) => String(item.json.url).startsWith(env.gateway.fileBaseUrl))).toBe(true);
		expect(fileRequests()).toHaveLength(0);
	});
});

describe('b64_json images', () => {
	it('decodes Base64 into PNG files, one item per image, with no url and no download', async () => {
		const { output, binaries } = await run({ prompt: 'a blue bird', n: 2, responseFormat: 'b64_json' });
		expect(output).toHaveLength(2);
		output.forEach((item, index) => {
			expect(item.json).toEqual(
				expect.objectContaining({ model: 'img-image-2', index, revised_prompt: 'A detailed image of: a blue bird', estimatedCostUsd: 0.04 }),
			);
			expect(item.json).not.toHaveProperty('url');
			expect(item.json).not.toHaveProperty('b64_json');
			expect(item.binary!.data).toMatchObject({ mimeType: 'image/png', fileName: `image-${index}.png`, fileExtension: 'png' });
			expect(decodePng(binaryBytes(item)).height).toBe(64);
		});
		expect(binaries.some((entry) => entry.streamed)).toBe(false);
		expect(fileRequests()).toHaveLength(0);
	});

	it('types WebP from its bytes', async () => {
		const { output } = await run({ prompt: 'x', responseFormat: 'b64_json', options: { extraBody: { output_format: 'webp' } } });
		expect(output[0].binary!.data).toMatchObject({ mimeType: 'image/webp', fileName: 'image-0.webp' });
		expect(binaryBytes(output[0]).equals(fixture('sample-image.webp'))).toBe(true);
	});
});

describe('several items', () => {
	it('keeps input order and pairs each image with its item, whatever order the answers arrive in', async () => {
		env.gateway.setOptions({ delayMs: 30 });
		const prompts = ['first', 'second', 'third'];
		const counts = [2, 1, 3];
		const { output } = await run((itemIndex) => ({ prompt: prompts[itemIndex], n: counts[itemIndex] }), {
			items: prompts.map((prompt) => ({ json: { prompt } })),
		});
		expect(output.map((item) => [item.pairedItem, item.json.index])).toEqual([
			[{ item: 0 }, 0],
			[{ item: 0 }, 1],
			[{ item: 1 }, 0],
			[{ item: 2 }, 0],
			[{ item: 2 }, 1],
			[{ item: 2 }, 2],
		]);
		expect(output.map((item) => item.json.revised_prompt)).toEqual(
			['first', 'first', 'second', 'third', 'third', 'third'].map((prompt) => `A detailed image of: ${prompt}`),
		);
		expect(output.every((item) => item.binary?.data.mimeType === 'image/png')).toBe(true);
	});

	it('estimates the cost with the credential`s group multiplier', async () => {
		const { output } = await run({ prompt: 'x', n: 2 }, { credentials: { groupMultiplier: 0.5 } });
		expect(output.map((item) => item.json.estimatedCostUsd)).toEqual([0.02, 0.02]);
	});
});

describe('expired links', () => {
	it('says the link expired and names the image and the item, not a stack', async () => {
		const promise = run({ prompt: 'old news [expired]' });
		await expect(promise).rejects.toThrow(
			new RegExp(`^Downloading image 0 of item 0 failed: the link has expired or is gone \\(127\\.0\\.0\\.1:${env.gateway.filePort} answered HTTP 403\\): "Request has expired"$`),
		);
		await promise.catch((error) => {
			expect(error.description).toMatch(/temporary/);
			expect(JSON.stringify({ ...error, message: error.message, description: error.description, stack: error.stack })).not.toContain(KEY.slice(3));
		});
		expect(fileRequests()).toHaveLength(1); // a 403 is not retried
	});

	it('with Continue On Fail, the failed item keeps its link and the other items go on', async () => {
		const { output } = await run((itemIndex) => ({ prompt: itemIndex === 0 ? 'x [expired]' : 'fresh' }), {
			items: [{ json: {} }, { json: {} }],
			continueOnFail: true,
		});
		expect(output).toHaveLength(2);
		expect(output[0]).toEqual({
			json: {
				error: expect.stringContaining('Downloading image 0 of item 0 failed: the link has expired'),
				errorDescription: expect.stringMatching(/temporary/),
				kind: 'not_found',
				httpCode: 403,
				gatewayMessage: 'Request has expired',
				mayHaveActed: false,
				model: 'img-image-2',
				index: 0,
				url: expect.stringContaining(`${env.gateway.fileBaseUrl}/files/images/`),
				// The first image carries the request's usage: its error item keeps it.
				usage: expect.objectContaining({ output_tokens: 1056 }),
				usageCoversAllImages: true,
			},
			pairedItem: { item: 0 },
		});
		expect(output[1].pairedItem).toEqual({ item: 1 });
		expect(output[1].binary!.data.mimeType).toBe('image/png');
	});
});

describe('gateway errors', () => {
	it('retries a bare 429 (the gateway did nothing), then succeeds', async () => {
		const { output } = await run({ prompt: 'busy [429-once]' });
		expect(output).toHaveLength(1);
		expect(output[0].binary!.data.mimeType).toBe('image/png');
		expect(generationRequests()).toHaveLength(2);
	});

	// A paid generation is not sent again once the gateway may have acted on it: no paying twice.
	it.each(['502-html', '504-html', 'reset'] as const)('does not send the generation again after %s, and says it may have gone through', async (fault) => {
		env.gateway.queueFaults(GENERATIONS, [fault]);
		const error = (await run({ prompt: 'busy' }).catch((e: unknown) => e)) as Error & { description?: string };
		expect(error.message).toMatch(/^Generating the images failed: /);
		expect(error.description).toMatch(/^The request may have gone through even so: it was not sent again, so as not to pay twice/);
		// Said once (a reset used to say it twice).
		expect(error.description?.split('may have gone through')).toHaveLength(2);
		expect(generationRequests()).toHaveLength(1);
		expect(fileRequests()).toHaveLength(0);
	});

	it.each([
		[{ prompt: 'x' }, { apiKey: 'sk-invalid-key-123' }, /^Generating the images failed: the gateway refused the API key \(HTTP 401\): "Invalid token/],
		[{ prompt: 'x' }, { apiKey: 'sk-noquota-key-123' }, /^Generating the images failed: the gateway refused the request for lack of quota or permission \(HTTP 403\)/],
		[{ prompt: 'x', model: { __rl: true, mode: 'id', value: 'img-nope' } }, {}, /^Generating the images failed: the gateway has no channel for this model \(HTTP 503\)/],
		[
			{ prompt: 'x', options: { extraBody: { output_format: 'gif' } } },
			{},
			/^Generating the images failed: the gateway refused the request \(HTTP 400\): "output_format must be one of png, jpeg, webp/,
		],
	])('explains %j with credential %j in plain words', async (parameters, credentials, message) => {
		const promise = run(parameters, { credentials });
		await expect(promise).rejects.toThrow(message);
		await promise.catch((error) => expect(`${error.message} ${error.description ?? ''}`).not.toMatch(/sk-(invalid|noquota|integration)/));
		expect(fileRequests()).toHaveLength(0);
	});

	it('with Continue On Fail, a refused item becomes an error item and the others go on', async () => {
		const { output } = await run(
			(itemIndex) => ({ prompt: 'x', model: { __rl: true, mode: 'id', value: itemIndex === 1 ? 'img-nope' : 'img-image-2' } }),
			{ items: [{ json: {} }, { json: {} }, { json: {} }], continueOnFail: true },
		);
		expect(output.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
		expect(output[1].json.error).toMatch(/^Generating the images failed: the gateway has no channel for this model \(HTTP 503\)/);
		expect(output[1].json).toMatchObject({ kind: 'unknown_model', httpCode: 503, gatewayCode: 'model_not_found' });
		expect(output[0].binary!.data.mimeType).toBe('image/png');
		expect(output[2].binary!.data.mimeType).toBe('image/png');
	});

	it('refuses bad input before any request', async () => {
		await expect(run({ prompt: 'x', n: 0 })).rejects.toThrow('"Number of Images" must be from 1 to 10, not 0 (item 0)');
		await expect(run({ prompt: '' })).rejects.toThrow('"Prompt" must not be empty (item 0)');
		await expect(run({ prompt: 'x', options: { extraBody: '"big"' } })).rejects.toThrow('"Extra Body Fields" must be a JSON object (item 0)');
		expect(env.gateway.requests).toHaveLength(0);
	});
});

describe('links on hosts that misbehave', () => {
	// A stand-in gateway and file host, for answers the loopback gateway does not give.
	const seen: Array<{ server: string; path: string; authorization?: string }> = [];
	let api: http.Server;
	let files: http.Server;
	let apiUrl: string;
	let filesUrl: string;
	let links: string[] = [];
	const png = fixturePng();
	// Bytes of no type we sniff, and not text: a file all the same.
	const MYSTERY = Buffer.from([0x00, 0x01, 0x02, 0xfe, 0xff, 0x10, 0x80, 0x7f, 0x00, 0x42]);

	function fixturePng(): Buffer {
		const image = new PNG({ width: 2, height: 2 });
		image.data.fill(200);
		return PNG.sync.write(image);
	}

	const listen = async (server: http.Server) => {
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	};

	beforeAll(async () => {
		api = http.createServer((req, res) => {
			seen.push({ server: 'api', path: req.url ?? '', authorization: req.headers.authorization });
			if (req.url === GENERATIONS) {
				res.writeHead(200, { 'content-type': 'application/json' });
				res.end(JSON.stringify({ data: links.map((url) => ({ url })) }));
			} else if (req.url === '/files/moved.png') {
				res.writeHead(302, { location: `${filesUrl}/ok.png` }).end();
			} else res.writeHead(404).end();
		});
		files = http.createServer((req, res) => {
			seen.push({ server: 'files', path: req.url ?? '', authorization: req.headers.authorization });
			if (req.url === '/ok.png') {
				res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
			} else if (req.url === '/broken.png') {
				res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length * 10 });
				res.write(png.subarray(0, 40), () => res.destroy());
			} else if (req.url === '/login.png') {
				res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<html><title>Sign in</title></html>');
			} else if (req.url === '/mystery') {
				res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(MYSTERY);
			} else if (req.url === '/words') {
				res.writeHead(200, { 'content-type': 'application/octet-stream' }).end('AccessDenied: not an image at all');
			} else res.writeHead(404).end();
		});
		apiUrl = await listen(api);
		filesUrl = await listen(files);
	});
	afterAll(async () => {
		api.closeAllConnections();
		files.closeAllConnections();
		await Promise.all([new Promise((resolve) => api.close(resolve)), new Promise((resolve) => files.close(resolve))]);
	});
	beforeEach(() => {
		seen.length = 0;
	});

	const runAgainstStub = async (paths: string[]) => {
		links = paths.map((link) => (link.startsWith('/files/') ? apiUrl : filesUrl) + link);
		return await run({ prompt: 'x', n: paths.length }, { credentials: { baseUrl: apiUrl } });
	};

	it('sends the key to a link on the gateway`s own origin, and drops it when that link redirects elsewhere', async () => {
		const { output } = await runAgainstStub(['/files/moved.png']);
		expect(output[0].binary!.data).toMatchObject({ mimeType: 'image/png', fileName: 'moved.png' });
		expect(seen.find((entry) => entry.path === '/files/moved.png')?.authorization).toBe(`Bearer ${KEY}`);
		expect(seen.find((entry) => entry.path === '/ok.png')).toEqual({ server: 'files', path: '/ok.png', authorization: undefined });
	});

	it('reports a download that breaks off, in plain words', async () => {
		await expect(runAgainstStub(['/broken.png'])).rejects.toThrow(
			/^Downloading image 0 of item 0 failed: the connection to 127\.0\.0\.1:\d+ was dropped before the answer was complete$/,
		);
	});

	it('refuses a page served in place of the image, naming the images that did arrive', async () => {
		const error = (await runAgainstStub(['/ok.png', '/login.png']).catch((e: unknown) => e)) as Error & { description?: string; context?: IDataObject };
		expect(error.message).toBe('Downloading image 1 of item 0 failed: the link answered with text/html instead of an image: "<html><title>Sign in</title></html>"');
		// The good image was generated (and paid for): the error says where it is.
		expect(error.description).toContain(`The other images of this item were generated and downloaded: image 0 (${filesUrl}/ok.png)`);
		expect(error.context?.itemFields).toMatchObject({ index: 1, url: `${filesUrl}/login.png`, generatedImages: [{ index: 0, url: `${filesUrl}/ok.png` }] });
	});

	it('with Continue On Fail, keeps the good images of an item beside an error item for the bad one', async () => {
		links = ['/ok.png', '/login.png', '/ok.png'].map((link) => filesUrl + link);
		const { output } = await run({ prompt: 'x', n: 3 }, { credentials: { baseUrl: apiUrl }, continueOnFail: true });
		expect(output.map((item) => [item.json.index, item.pairedItem])).toEqual([
			[0, { item: 0 }],
			[1, { item: 0 }],
			[2, { item: 0 }],
		]);
		expect(output[0].binary!.data.mimeType).toBe('image/png');
		expect(output[1].json).toMatchObject({ error: expect.stringMatching(/^Downloading image 1 of item 0 failed: the link answered with text\/html/), url: `${filesUrl}/login.png` });
		expect(output[1].binary).toBeUndefined();
		expect(output[2].binary!.data.mimeType).toBe('image/png');
	});

	it('keeps bytes of a type it does not know, typed as the host says', async () => {
		const { output } = await runAgainstStub(['/mystery']);
		expect(output[0].binary!.data).toMatchObject({ mimeType: 'application/octet-stream', fileName: 'mystery.bin' });
		expect(binaryBytes(output[0]).equals(MYSTERY)).toBe(true);
	});

	it('refuses a few words of text served as a file, quoting them', async () => {
		await expect(runAgainstStub(['/words'])).rejects.toThrow(
			'Downloading image 0 of item 0 failed: the link answered with text (served as application/octet-stream) instead of an image: "AccessDenied: not an image at all"',
		);
	});
});

describe('b64_json answers a gateway gets wrong, or makes large', () => {
	// A stand-in gateway that answers the generation with whatever body the test sets.
	let api: http.Server;
	let apiUrl: string;
	let answer: Buffer = Buffer.alloc(0);
	let generations = 0;
	const MiB = 1024 * 1024;

	const pngOf = (size: number, seed: number) => {
		const image = new PNG({ width: 2, height: 2 });
		image.data.fill(seed);
		const bytes = PNG.sync.write(image);
		// Bytes after the image's end are kept as they are: a file of exactly `size` bytes, typed from its start.
		return size <= bytes.length ? bytes : Buffer.concat([bytes, Buffer.alloc(size - bytes.length, seed)]);
	};
	// Put together as bytes: a JSON.stringify of large strings would take seconds.
	const answerOf = (b64: Array<string | Buffer>) =>
		Buffer.concat([
			Buffer.from('{"created":1,"data":['),
			...b64.flatMap((value, index) => [Buffer.from(`${index ? ',' : ''}{"b64_json":"`), Buffer.isBuffer(value) ? value : Buffer.from(JSON.stringify(value).slice(1, -1)), Buffer.from('","revised_prompt":"r"}')]),
			Buffer.from(']}'),
		]);

	beforeAll(async () => {
		api = http.createServer((req, res) => {
			req.resume();
			req.on('end', () => {
				if (req.url !== GENERATIONS) return void res.writeHead(404).end();
				generations++;
				res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
				res.end(answer);
			});
		});
		await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
		apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
	});
	afterAll(async () => {
		api.closeAllConnections();
		await new Promise((resolve) => api.close(resolve));
	});
	beforeEach(() => {
		generations = 0;
	});

	const good = [pngOf(100, 10), pngOf(100, 20)];
	const garbage = () => answerOf([good[0].toString('base64'), 'not base64 at all!!', Buffer.from('an error, not an image').toString('base64'), good[1].toString('base64')]);

	it('fails the image whose b64_json is not Base64, naming it and saying the gateway billed it; the error names the images that came', async () => {
		answer = garbage();
		const error = (await run({ prompt: 'x', n: 4, responseFormat: 'b64_json' }, { credentials: { baseUrl: apiUrl } }).catch((e: unknown) => e)) as Error & { description?: string; context?: IDataObject };
		expect(error.message).toBe('Decoding image 1 of item 0 failed: the gateway sent it as b64_json that is not valid Base64');
		expect(error.description).toMatch(/^The gateway generated \(and billed\) the image but sent data that is no image file\./);
		expect(error.description).toContain('The other images of this item were generated and downloaded: image 0; image 3.');
		expect(error.context?.itemFields).toMatchObject({ mayHaveActed: true, index: 1 });
		expect(generations).toBe(1);
	});

	it('with Continue On Fail, keeps the good images of the answer beside an error item for each bad one', async () => {
		answer = garbage();
		const { output } = await run({ prompt: 'x', n: 4, responseFormat: 'b64_json' }, { credentials: { baseUrl: apiUrl }, continueOnFail: true });
		expect(output.map((item) => [item.json.index, item.binary?.data.fileName ?? item.json.error])).toEqual([
			[0, 'image-0.png'],
			[1, 'Decoding image 1 of item 0 failed: the gateway sent it as b64_json that is not valid Base64'],
			[2, 'Decoding image 2 of item 0 failed: the gateway sent it as b64_json that decodes to text, not an image'],
			[3, 'image-3.png'],
		]);
		expect(binaryBytes(output[0]).equals(good[0])).toBe(true);
		expect(binaryBytes(output[3]).equals(good[1])).toBe(true);
		expect(output[1].json).toMatchObject({ kind: 'protocol', mayHaveActed: true, model: 'img-image-2' });
		expect(output.some((item) => item.binary?.data.fileName === 'image-1.bin')).toBe(false);
	});

	it('keeps an answer of several large images, far over 64 MiB, every image whole', async () => {
		const images = [pngOf(18 * MiB, 1), pngOf(18 * MiB, 2), pngOf(18 * MiB, 3)];
		answer = answerOf(images.map((bytes) => Buffer.from(bytes.toString('base64'))));
		expect(answer.length).toBeGreaterThan(70 * MiB);
		const { output } = await run({ prompt: 'x', n: 3, responseFormat: 'b64_json' }, { credentials: { baseUrl: apiUrl } });
		answer = Buffer.alloc(0);
		expect(output.map((item) => item.binary?.data.fileName)).toEqual(['image-0.png', 'image-1.png', 'image-2.png']);
		output.forEach((item, index) => expect(binaryBytes(item).equals(images[index])).toBe(true));
		expect(generations).toBe(1);
	}, 60_000);

	it('over what the node keeps, says the gateway may have acted (it answered, so it billed), and does not ask again', async () => {
		answer = answerOf([pngOf(2 * MiB, 1).toString('base64')]);
		const { ctx } = createExecuteContext({ parameters: {}, credentials: { apiKey: KEY, baseUrl: apiUrl } });
		const client = await GatewayClient.create(ctx);
		const call = { method: 'POST' as const, path: GENERATIONS, body: { prompt: 'x' }, itemIndex: 0, retry: { idempotent: false }, what: 'Generating the images' };
		const error = (await requestImages(client, call, { maxAnswerBytes: MiB, maxTextBytes: 64 * 1024 }).catch((e: unknown) => e)) as GatewayError;
		expect(error).toBeInstanceOf(GatewayError);
		expect(error.message).toBe('Generating the images failed: the answer is larger than 1.0 MB (64.0 KB without its images), more than the node keeps');
		expect(error.hint).toMatch(/^The gateway answered, so it may have generated \(and billed\) the images\./);
		expect(error.mayHaveActed).toBe(true);
		expect(generations).toBe(1);
	});
});
