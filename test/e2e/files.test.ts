/**
 * Files in, JSON out, in a real n8n: files made by a Code node with `this.helpers.prepareBinaryData`
 * (n8n 2.x keeps them on disk, "filesystem" mode; n8n 1.x in the run data; a second batch on 2.x
 * in its "database" mode) go into Gateway Chat and Gateway Messages, the loopback gateway decodes
 * them and answers JSON that names their type, size and SHA-256, and the next node maps a field of
 * `json.data`. Also: image-to-video from a binary image, an image with the four options, bad input
 * refused before any request, the options in tool form, and the two examples.
 * Workflows: test/e2e/workflows/files-*.json, examples/chat-describe-product-photo.json and
 * examples/messages-invoice-pdf-to-fields.json.
 */
import * as crypto from 'node:crypto';

import type { LoggedRequest } from '../gateway';
import type { E2eItem } from './harness';
import { E2E_N8N_MAJOR, binaryBuffer, describeWorkflow, gatewayRequests, loadE2eResults, nodeItems, nodeRun, workflowResult } from './harness';

const results = () => loadE2eResults();
const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');
const body = (request: LoggedRequest) => JSON.parse(request.rawBody) as Record<string, any>;
const requestsWith = (path: string, words: string) => gatewayRequests((r) => r.path === path && r.rawBody.includes(words));
const toolResponse = (id: string, node: string) => (nodeRun(results(), id, node).connectionOutputs?.ai_tool?.[0]?.[0] as E2eItem).json.response as Array<Record<string, unknown>>;

describeWorkflow('mgwFiles0001', 'a PNG and a PDF from binary, JSON back, a field of json.data mapped in the next node', () => {
	const id = 'mgwFiles0001';
	const made = () => nodeItems(results(), id, 'Make Files')[0];
	const photo = () => binaryBuffer(made(), 'photo');
	const invoice = () => binaryBuffer(made(), 'invoice');
	const described = () => [
		{ kind: 'image', mimeType: 'image/png', bytes: photo().length, sha256: sha256(photo()) },
		{ kind: 'pdf', mimeType: 'application/pdf', bytes: invoice().length, sha256: sha256(invoice()) },
	];

	it('runs, with the files where this n8n line keeps them', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		const { photo: stored } = made().binary!;
		if (E2E_N8N_MAJOR >= 2) expect(stored.id).toMatch(/^filesystem-v2:/);
		else expect(stored.id).toBeUndefined();
		expect(photo().subarray(1, 4).toString()).toBe('PNG');
		expect(invoice().subarray(0, 5).toString()).toBe('%PDF-');
	});

	it('Gateway Messages sends an image block and a document block with the very bytes, and asks for the respond tool', () => {
		const [plain, streamed] = requestsWith('/v1/messages', 'order A-1001').map(body);
		expect(plain.messages).toEqual([
			{
				role: 'user',
				content: [
					{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: photo().toString('base64') } },
					{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: invoice().toString('base64') } },
					{ type: 'text', text: 'Summarise the product photo and the invoice of order A-1001.' },
				],
			},
		]);
		expect(plain.tool_choice).toEqual({ type: 'tool', name: 'respond' });
		expect(plain.tools[0]).toMatchObject({ name: 'respond', input_schema: { type: 'object', required: ['summary', 'attachments'] } });
		expect(plain.stream).toBe(false);
		expect(streamed).toEqual({ ...plain, stream: true });
	});

	it('returns the JSON the gateway gave (what it decoded: type, size, hash) in json.data, the same streamed', () => {
		const [read] = nodeItems(results(), id, 'Read Files');
		expect(read.json.data).toEqual({ summary: 'summary: Summarise the product photo and the invoice of…', attachments: described() });
		expect(read.json).toMatchObject({ stopReason: 'tool_use', text: JSON.stringify(read.json.data) });
		const [streamed] = nodeItems(results(), id, 'Read Files Streamed');
		expect(streamed.json.data).toEqual(read.json.data);
		expect(streamed.json.text).toBe(read.json.text);
	});

	it('the next node maps fields of json.data', () => {
		expect(nodeItems(results(), id, 'Map Fields')[0].json).toEqual({
			summary: 'summary: Summarise the product photo and the invoice of…',
			photoSha256: sha256(photo()),
			invoiceType: 'application/pdf',
			invoiceBytes: invoice().length,
		});
	});

	it('Gateway Chat sends image_url and file parts and the link as given, streamed, and parses the JSON object', () => {
		const [sent] = requestsWith('/v1/chat/completions', 'order A-1001').map(body);
		expect(sent).toMatchObject({ stream: true, response_format: { type: 'json_object' } });
		expect(sent.messages[0].content).toEqual([
			{ type: 'image_url', image_url: { url: `data:image/png;base64,${photo().toString('base64')}` } },
			{ type: 'file', file: { filename: 'invoice-0042.pdf', file_data: `data:application/pdf;base64,${invoice().toString('base64')}` } },
			{ type: 'image_url', image_url: { url: 'https://cdn.example.com/w_400,h_300/shoe.jpg' } },
			{ type: 'text', text: 'Summarise the product photo and the invoice of order A-1001.' },
		]);
		const [chat] = nodeItems(results(), id, 'Chat Files');
		expect((chat.json.data as Record<string, unknown>).attachments).toEqual([
			described()[0],
			{ ...described()[1], filename: 'invoice-0042.pdf' },
			{ kind: 'link', url: 'https://cdn.example.com/w_400,h_300/shoe.jpg' },
		]);
		expect(nodeItems(results(), id, 'Map Chat Fields')[0].json).toEqual({
			echo: 'Echo from chat-sonnet-5: Summarise the product photo and the invoice of order A-1001.',
			photoType: 'image/png',
			link: 'https://cdn.example.com/w_400,h_300/shoe.jpg',
		});
	});
});

describeWorkflow('mgwDbModeFiles01', "the same files from n8n's database binary data mode", () => {
	const id = 'mgwDbModeFiles01';

	it('reads them back from the database and sends their bytes', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		const made = nodeItems(results(), id, 'Make Files')[0];
		expect(made.binary!.photo.id).toMatch(/^database:/);
		const photo = binaryBuffer(made, 'photo');
		const invoice = binaryBuffer(made, 'invoice');
		expect(nodeItems(results(), id, 'Read Files')[0].json.text).toBe(
			`Echo from chat-sonnet-5: Database mode: describe these [attached: image/png ${photo.length} B sha256 ${sha256(photo).slice(0, 12)}, application/pdf ${invoice.length} B sha256 ${sha256(invoice).slice(0, 12)}]`,
		);
	});
});

describeWorkflow('mgwFiles0002', 'image-to-video from a binary image, and from a link', () => {
	const id = 'mgwFiles0002';

	it('sends the binary image as a data URL in image, waits and downloads the MP4', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		const frame = binaryBuffer(nodeItems(results(), id, 'Make Frame')[0], 'frame');
		const [submit] = requestsWith('/v1/video/generations', 'turns slowly on a white table').map(body);
		expect(submit).toEqual({ model: 'video-2-0-fast-260128', prompt: 'The product turns slowly on a white table', seconds: '5', size: '1280x720', image: `data:image/png;base64,${frame.toString('base64')}` });
		const [video] = nodeItems(results(), id, 'Animate');
		expect(video.json).toMatchObject({ status: 'SUCCESS', task_id: expect.stringMatching(/^task_/) });
		expect(video.binary!.video.mimeType).toBe('video/mp4');
		expect(binaryBuffer(video, 'video').subarray(4, 8).toString()).toBe('ftyp');
	});

	it('sends Image URL as given, and a model-specific last frame through Extra Body Fields', () => {
		const [submit] = requestsWith('/v1/video/generations', 'from the link').map(body);
		expect(submit).toMatchObject({ image: 'https://cdn.example.com/frames/shoe.png', last_frame: 'https://cdn.example.com/frames/shoe-end.png' });
		expect(nodeItems(results(), id, 'Submit From Link')[0].json.task_id).toMatch(/^task_/);
	});
});

describeWorkflow('mgwFiles0003', 'an image with size, quality, background and output format', () => {
	const id = 'mgwFiles0003';

	it('sends the four options', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		expect(requestsWith('/v1/images/generations', 'shop icon').map(body)).toEqual([
			{ model: 'img-image-2', prompt: 'A square shop icon of a fern, flat style', n: 2, response_format: 'url', size: '1024x1024', quality: 'high', background: 'transparent', output_format: 'webp' },
		]);
	});

	it('saves WebP answers as .webp files typed image/webp, and a Base64 JPEG as .jpg', () => {
		const icons = nodeItems(results(), id, 'Shop Icon');
		expect(icons).toHaveLength(2);
		for (const item of icons) {
			expect(item.binary!.data).toMatchObject({ mimeType: 'image/webp', fileExtension: 'webp', fileName: expect.stringMatching(/\.webp$/) });
			expect(binaryBuffer(item).subarray(8, 12).toString()).toBe('WEBP');
			expect(item.json).toMatchObject({ size: '1024x1024', quality: 'high', background: 'transparent', output_format: 'webp' });
		}
		const [banner] = nodeItems(results(), id, 'Banner Inline');
		expect(banner.binary!.banner).toMatchObject({ mimeType: 'image/jpeg', fileName: 'image-0.jpg' });
	});

	it('puts the usage of the request on the first image only, saying it covers all images', () => {
		const [first, second] = nodeItems(results(), id, 'Shop Icon');
		expect(first.json).toMatchObject({ usage: expect.objectContaining({ output_tokens: 2 * 1056 }), usageCoversAllImages: true });
		expect(second.json.usage).toBeUndefined();
		expect(second.json.usageCoversAllImages).toBeUndefined();
	});
});

describeWorkflow('mgwFiles0004', 'bad input refused before any request, naming field and item; an answer that is not JSON', () => {
	const id = 'mgwFiles0004';
	const errorOf = (node: string) => nodeItems(results(), id, node)[0].json.error;

	it('refuses each before sending (Continue On Fail items), and nothing of them reaches the gateway', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		expect(errorOf('Attach Text')).toBe(
			'"Binary Attachments" field "notes" holds a file of no image or PDF type (n8n lists it as text/plain, notes.txt): only PNG, JPEG, GIF and WebP images and PDF documents can be attached (item 0)',
		);
		expect(errorOf('Attach Missing')).toBe('"Binary Attachments" names the binary field "scan", which this item does not have (it has: notes, photo) (item 0)');
		expect(errorOf('Schema Not Object')).toBe('"Response JSON Schema" must be a JSON object, not a list (item 0)');
		expect(errorOf('Two First Frames')).toBe('"Image URL" and "Image From Binary Field" are both set; the video takes one first frame (item 0)');
		expect(gatewayRequests((r) => r.rawBody.includes('refused-0004'))).toEqual([]);
	});

	it('an answer in words instead of JSON is an error quoting its start, and the item keeps the whole answer', () => {
		expect(nodeItems(results(), id, 'Answer Not JSON')[0].json).toMatchObject({
			error: 'The messages request failed: the model\'s answer is not JSON: "Sure! Here is what I found: the product looks great."',
			kind: 'protocol',
			text: 'Sure! Here is what I found: the product looks great.',
		});
		expect(requestsWith('/v1/messages', '[not-json]')).toHaveLength(1);
	});
});

describeWorkflow('mgwFiles0005', 'the options in tool form: JSON answers work, a file the tool item lacks is a clear error', () => {
	const id = 'mgwFiles0005';

	it('Gateway Messages as a tool returns the parsed JSON to the agent', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		const [answer] = toolResponse(id, 'Read As Json');
		expect(answer.data).toEqual({ echo: 'Echo from chat-opus-4-6: which fern likes shade?', model: 'chat-opus-4-6', attachments: [] });
		const [sent] = requestsWith('/v1/messages', 'which fern likes shade').map(body);
		expect(sent).toMatchObject({ model: 'chat-opus-4-6', tool_choice: { type: 'tool', name: 'respond' }, messages: [{ role: 'user', content: 'which fern likes shade?' }] });
	});

	it('Gateway Chat as a tool with Binary Attachments: the item has no file, the agent reads why, nothing is sent', () => {
		const [answer] = toolResponse(id, 'Describe Attachment');
		expect(answer.error).toBe('"Binary Attachments" names the binary field "data", which this item does not have (it has no binary data at all) (item 0)');
		expect(gatewayRequests((r) => r.path === '/v1/chat/completions' && body(r).model === 'chat-opus-4-6')).toEqual([]);
		expect(String(nodeItems(results(), id, 'AI Agent')[0].json.output)).toContain('Describe_Attachment: [{"error":"\\"Binary Attachments\\" names the binary field \\"data\\"');
	});
});

describeWorkflow('mgwExChat0002', 'example: describe a product photo', () => {
	const id = 'mgwExChat0002';

	it('sends the photo and maps the listing fields from json.data', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		const photo = binaryBuffer(nodeItems(results(), id, 'Product Photo')[0], 'photo');
		const [sent] = requestsWith('/v1/chat/completions', 'shop listing').map(body);
		expect(sent.messages[1].content[0]).toEqual({ type: 'image_url', image_url: { url: `data:image/png;base64,${photo.toString('base64')}` } });
		expect(sent.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'response', strict: true } });
		const [listing] = nodeItems(results(), id, 'Listing');
		expect(Object.keys(listing.json)).toEqual(['sku', 'title', 'description', 'colours', 'altText']);
		expect(listing.json.sku).toBe('SHOE-RED-42');
		expect(listing.json.title).toMatch(/^title: Describe this product photo/);
	});
});

describeWorkflow('mgwExMsg0002', 'example: invoice PDF to fields', () => {
	const id = 'mgwExMsg0002';

	it('sends the PDF as a document block and maps the invoice fields from json.data', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		const pdf = binaryBuffer(nodeItems(results(), id, 'Invoice PDF')[0], 'invoice');
		const [sent] = requestsWith('/v1/messages', 'Read this invoice').map(body);
		expect(sent.messages[0].content[0]).toEqual({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf.toString('base64') } });
		expect(nodeItems(results(), id, 'Invoice Row')[0].json).toMatchObject({ invoiceDate: '2026-01-31', total: 1, lineCount: 1, receivedFrom: 'billing@acme-garden.example' });
	});
});
