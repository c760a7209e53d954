/**
 * Gateway Image Generate in a real n8n (test/e2e/workflows/image-*.json and the examples
 * examples/image-daily-post.json and image-edit-product-photo.json): the binary output must be a
 * decodable image of the right type (an edit's too, its files sent as the gateway read them),
 * the key must never reach the file host, and failures must read as plain words.
 */
import * as fs from 'fs';
import * as path from 'path';
import { PNG } from 'pngjs';

import type { E2eItem } from './harness';
import { binaryBuffer, describeWorkflow, gatewayRequests, loadE2eResults, loadE2eRun, nodeItems, nodeRun, workflowError, workflowResult } from './harness';

const results = () => loadE2eResults();
const fixture = (name: string) => fs.readFileSync(path.join(__dirname, '../fixtures', name));

/** Decodes a PNG (throws when it is not one) and returns its size. */
function pngSize(bytes: Buffer): [number, number] {
	const png = PNG.sync.read(bytes);
	return [png.width, png.height];
}

function expectPngItem(item: E2eItem, property = 'data') {
	expect(item.binary?.[property]).toMatchObject({ mimeType: 'image/png', fileExtension: 'png', fileName: expect.stringMatching(/\.png$/) });
	expect(pngSize(binaryBuffer(item, property))).toEqual([64, 64]);
}

/** The generation requests that asked for exactly these prompts (each workflow uses its own). */
const generationRequestsFor = (...prompts: string[]) =>
	gatewayRequests((request) => {
		if (request.server !== 'api' || request.path !== '/v1/images/generations') return false;
		try {
			return prompts.includes(JSON.parse(request.rawBody).prompt);
		} catch {
			return false;
		}
	});

describeWorkflow('mgwImage0001', 'links downloaded into PNG files, one item per image', () => {
	const id = 'mgwImage0001';
	const items = () => nodeItems(results(), id, 'Generate Images');

	it('makes one item per image, paired with the input item it came from', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		expect(items().map((item) => [item.pairedItem, item.json.index])).toEqual([
			[{ item: 0 }, 0],
			[{ item: 0 }, 1],
			[{ item: 1 }, 0],
			[{ item: 1 }, 1],
		]);
	});

	it('puts a decodable PNG in binary data, named after its link', () => {
		for (const item of items()) {
			expectPngItem(item);
			expect(item.binary!.data.fileName).toBe(String(item.json.url).split('/').pop());
		}
		// Different images, not one image four times.
		expect(new Set(items().map((item) => binaryBuffer(item).toString('base64'))).size).toBeGreaterThan(1);
	});

	it('outputs model, index, url, revised_prompt, usage and the cost estimate', () => {
		const { fileBaseUrl } = loadE2eRun().gateway;
		expect(items()[2].json).toMatchObject({
			model: 'img-image-2',
			index: 0,
			url: expect.stringMatching(new RegExp(`^${fileBaseUrl}/files/images/img_\\w+\\.png$`)),
			revised_prompt: 'A detailed image of: a lighthouse at dawn',
			usage: expect.objectContaining({ output_tokens: 2 * 1056 }),
			estimatedCostUsd: 0.04,
		});
	});

	it('sends the key to the gateway, and never to the file host', () => {
		const { apiKey } = loadE2eRun().credentials.good;
		const generations = generationRequestsFor('a lighthouse at dusk', 'a lighthouse at dawn');
		expect(generations).toHaveLength(2);
		for (const request of generations) expect(request.headers.authorization).toBe(`Bearer ${apiKey}`);
		const downloads = gatewayRequests((request) => request.server === 'files');
		expect(downloads.length).toBeGreaterThanOrEqual(4);
		for (const request of downloads) {
			expect(request.headers.authorization).toBeUndefined();
			expect(JSON.stringify(request.headers)).not.toContain(apiKey);
		}
	});
});

describeWorkflow('mgwImage0002', 'JPEG by link, WebP inline, links only', () => {
	const id = 'mgwImage0002';

	it('types a downloaded JPEG from its bytes', () => {
		const [item] = nodeItems(results(), id, 'JPEG by Link');
		expect(item.binary?.data).toMatchObject({ mimeType: 'image/jpeg', fileExtension: 'jpg', fileName: expect.stringMatching(/^img_\w+\.jpg$/) });
		const bytes = binaryBuffer(item);
		expect([...bytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
		expect(bytes.equals(fixture('sample-image.jpg'))).toBe(true);
		expect(JSON.parse(generationRequestsFor('a bowl of cherries')[0].rawBody)).toEqual({
			output_format: 'jpeg',
			size: '1024x1024',
			model: 'img-image-2',
			prompt: 'a bowl of cherries',
			n: 1,
			response_format: 'url',
		});
	});

	it('decodes inline WebP into the binary field the user chose', () => {
		const [item] = nodeItems(results(), id, 'WebP Inline');
		expect(Object.keys(item.binary ?? {})).toEqual(['image']);
		expect(item.binary!.image).toMatchObject({ mimeType: 'image/webp', fileExtension: 'webp', fileName: 'image-0.webp' });
		const bytes = binaryBuffer(item, 'image');
		expect(bytes.subarray(0, 4).toString('latin1')).toBe('RIFF');
		expect(bytes.subarray(8, 12).toString('latin1')).toBe('WEBP');
		expect(bytes.equals(fixture('sample-image.webp'))).toBe(true);
		expect(item.json).not.toHaveProperty('url');
		expect(item.json).not.toHaveProperty('b64_json');
	});

	it('gives links only when Download Image is off', () => {
		const items = nodeItems(results(), id, 'Links Only');
		expect(items.map((item) => item.json.index)).toEqual([0, 1, 2]);
		for (const item of items) {
			expect(item.binary).toBeUndefined();
			expect(item.json.url).toMatch(/\/files\/images\/img_\w+\.png$/);
		}
		const links = new Set(items.map((item) => new URL(String(item.json.url)).pathname));
		expect(gatewayRequests((request) => request.server === 'files' && links.has(request.path))).toHaveLength(0);
	});
});

describeWorkflow('mgwImage0003', 'an expired link', () => {
	it('fails with an error that says the link expired and names the image and item', () => {
		const error = workflowError(results(), 'mgwImage0003');
		expect(error).toMatchObject({
			node: 'Generate Images',
			message: expect.stringMatching(/^Downloading image 0 of item 0 failed: the link has expired or is gone \(127\.0\.0\.1:\d+ answered HTTP 403\): "Request has expired"$/),
			description: expect.stringContaining('temporary'),
		});
	});
});

describeWorkflow('mgwImage0004', 'Continue On Fail', () => {
	it('keeps the good image and turns each failed item into an error item paired with its input', () => {
		const items = nodeItems(results(), 'mgwImage0004', 'Generate Images');
		expect(workflowResult(results(), 'mgwImage0004').status).toBe('success');
		expect(items.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
		expectPngItem(items[0]);
		expect(items[1].json).toMatchObject({
			error: expect.stringMatching(/^Downloading image 0 of item 1 failed: the link has expired/),
			index: 0,
			url: expect.stringContaining('/files/images/'),
		});
		expect(items[1].binary).toBeUndefined();
		expect(items[2].json).toMatchObject({ error: '"Prompt" must not be empty (item 2)' });
	});
});

describeWorkflow('mgwImage0005', 'a refused key', () => {
	it('fails in plain words, without the key', () => {
		const error = workflowError(results(), 'mgwImage0005');
		expect(error?.message).toMatch(/^Generating the images failed: the gateway refused the API key \(HTTP 401\)/);
		expect(JSON.stringify(error)).not.toContain(loadE2eRun().credentials.bad.apiKey);
	});
});

describeWorkflow('mgwImage0006', 'bad input', () => {
	it('is refused before any request, naming the field and the item', () => {
		expect(workflowError(results(), 'mgwImage0006')?.message).toBe('"Number of Images" must be from 1 to 10, not 11 (item 0)');
		expect(generationRequestsFor('eleven foxes that are never drawn')).toHaveLength(0);
	});
});

describeWorkflow('mgwExImage0001', 'example: daily image post', () => {
	const id = 'mgwExImage0001';

	it('runs from the manual trigger and hands on a PNG with caption and alt text', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		const [post] = nodeItems(results(), id, 'Prepare the Post');
		expect(post.json).toMatchObject({
			model: 'img-image-2',
			estimatedCostUsd: 0.04,
			caption: expect.stringMatching(/^Happy \w+day! /),
			altText: expect.stringContaining('A detailed image of: A bright, friendly square illustration'),
			fileName: expect.stringMatching(/^img_\w+\.png$/),
		});
		expectPngItem(post);
		expect(nodeRun(results(), id, 'Gateway Image Generate').items).toHaveLength(1);
	});
});

/** The edit requests that asked for this prompt (each workflow uses its own). */
const editRequestsFor = (prompt: string) => gatewayRequests((request) => request.server === 'api' && request.path === '/v1/images/edits' && request.form?.fields.prompt === prompt);

describeWorkflow('mgwImage0007', 'edits: one image, an image with a mask, a missing field', () => {
	const id = 'mgwImage0007';

	it('edits one image into two PNG files, sent as the part `image` with its name and type', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		const items = nodeItems(results(), id, 'Edit One Image');
		expect(items.map((item) => [item.pairedItem, item.json.index, item.json.estimatedCostUsd])).toEqual([
			[{ item: 0 }, 0, 0.04],
			[{ item: 0 }, 1, 0.04],
		]);
		for (const item of items) expectPngItem(item);
		const [request] = editRequestsFor('the same mug, glazed bright red');
		expect(String(request.headers['content-type'])).toMatch(/^multipart\/form-data; boundary=/);
		expect(request.headers.authorization).toBe(`Bearer ${loadE2eRun().credentials.good.apiKey}`);
		expect(request.form?.fields).toMatchObject({ model: 'img-image-2', n: 2, response_format: 'b64_json' });
		expect(request.form?.files).toEqual([expect.objectContaining({ name: 'image', fileName: 'image-0.png', contentType: 'image/png' })]);
		// The very file the Base Image node made.
		const [base] = nodeItems(results(), id, 'Base Image');
		expect(request.form?.files[0].size).toBe(binaryBuffer(base).length);
	});

	it('sends a mask as the part `mask` and downloads the edited image from its link', () => {
		const [item] = nodeItems(results(), id, 'Edit With Mask');
		expectPngItem(item);
		expect(item.json.url).toMatch(/\/files\/images\/img_\w+\.png$/);
		const [request] = editRequestsFor('a thin gold rim on the mug, nothing else changed');
		expect(request.form?.files.map((file) => [file.name, file.contentType])).toEqual([
			['image', 'image/png'],
			['mask', 'image/png'],
		]);
		expect(request.form?.fields).toMatchObject({ size: '1024x1024' });
	});

	it('refuses a missing binary field before any request, naming the field and the item', () => {
		const [item] = nodeItems(results(), id, 'Edit Missing Field');
		expect(item.json.error).toBe('"Images From Binary Fields" names the binary field "photo", which this item does not have (it has: data) (item 0)');
		expect(editRequestsFor('never sent: the item has no field photo')).toHaveLength(0);
	});
});

describeWorkflow('mgwExImageEdit01', 'example: edit a product photo', () => {
	const id = 'mgwExImageEdit01';

	it('runs from the manual trigger and hands on two edited PNG files', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		const items = nodeItems(results(), id, 'New Background');
		expect(items).toHaveLength(2);
		for (const item of items) {
			expectPngItem(item);
			expect(item.json).toMatchObject({ model: 'img-image-2', estimatedCostUsd: 0.04 });
		}
		const edits = gatewayRequests((request) => request.path === '/v1/images/edits' && String(request.form?.fields.prompt).startsWith('Keep the teapot exactly as it is'));
		expect(edits).toHaveLength(1);
		expect(edits[0].form?.fields).toMatchObject({ size: '1024x1024', quality: 'high', n: 2 });
	});
});
