/**
 * Files in, JSON out, over real HTTP against the loopback gateway: attachments (binary images and
 * PDFs, image links) and JSON answers in Gateway Chat and Gateway Messages, streamed and not; the
 * four image options and usage of Gateway Image Generate; the first frame of Gateway Video
 * Generate. The gateway decodes every attachment, checks its type against its bytes and names what
 * it received (type, size, SHA-256) in its answer, so these tests see what arrived. Bad input is
 * refused before any request: the gateway's log stays empty.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { complete } from '../../nodes/GatewayChat/complete';
import { generateImages } from '../../nodes/GatewayImageGenerate/generate';
import { createMessage } from '../../nodes/GatewayMessages/create';
import { executeVideo } from '../../nodes/GatewayVideoGenerate/router';
import { useGateway } from '../gateway/testing';
import { createExecuteContext } from '../helpers/executeContext';
import { createFakeClock } from '../helpers/fakeClock';
import { binaryItem, pdfBytes, pngBytes, pngHeader, sampleJpeg, sampleMp4, sampleWebp, sha256, withBinaryHelpers } from '../helpers/files';

const KEY = 'sk-integration-files-0123456789';
const env = useGateway();

type Parameters = IDataObject | ((itemIndex: number) => IDataObject);
interface RunOptions {
	items?: INodeExecutionData[];
	continueOnFail?: boolean;
}

const say = (content: string, system?: string) => ({ values: [...(system ? [{ role: 'system', content: system }] : []), { role: 'user', content }] });
const model = (value: string) => ({ __rl: true, mode: 'id', value });

function context(nodeType: string, defaults: IDataObject, parameters: Parameters, options: RunOptions) {
	const test = createExecuteContext({
		parameters: (itemIndex) => ({ ...defaults, ...(typeof parameters === 'function' ? parameters(itemIndex) : parameters) }),
		items: options.items,
		continueOnFail: options.continueOnFail,
		credentials: { apiKey: KEY, baseUrl: env.gateway.baseUrl },
		nodeType: `n8n-nodes-model-gateway.${nodeType}`,
	});
	const binaryReads = withBinaryHelpers(test.ctx);
	return { ...test, binaryReads };
}

async function chat(parameters: Parameters, options: RunOptions = {}) {
	const test = context('gatewayChat', { model: model('chat-sonnet-5'), messages: say('Describe this'), maxTokens: 4096, stream: false, options: {} }, parameters, options);
	const [output] = await complete.call(test.ctx);
	return { output, ...test };
}

async function messages(parameters: Parameters, options: RunOptions = {}) {
	const test = context('gatewayMessages', { model: model('chat-sonnet-5'), messages: say('Describe this'), maxTokens: 4096, stream: false, options: {} }, parameters, options);
	const [output] = await createMessage.call(test.ctx);
	return { output, ...test };
}

const sent = (path: string, index = 0) => JSON.parse(env.gateway.requests.filter((request) => request.path === path)[index].rawBody) as IDataObject;
const apiRequests = () => env.gateway.requests.filter((request) => request.server === 'api');

const png = pngBytes(16, 12);
const pdf = pdfBytes();
const photoAndInvoice = () => binaryItem({ photo: { bytes: png, fileName: 'photo.png', mimeType: 'image/png' }, invoice: { bytes: pdf, fileName: 'invoice-0042.pdf', mimeType: 'application/pdf' } });
const LINK = 'https://cdn.example.com/w_400,h_300/shoe.jpg';
const summaryOf = (bytes: Buffer, mime: string) => `${mime} ${bytes.length} B sha256 ${sha256(bytes).slice(0, 12)}`;

/** Runs the same parameters with Stream off and on. */
async function bothWays(run: typeof chat, parameters: IDataObject, options: RunOptions = {}) {
	const plain = await run({ ...parameters, stream: false }, options);
	const streamed = await run({ ...parameters, stream: true }, options);
	return { plain: plain.output[0].json, streamed: streamed.output[0].json };
}

describe('Gateway Chat: attachments', () => {
	it('sends a PNG and a PDF from binary and an image link as content parts, and the gateway names exactly those bytes, streamed or not', async () => {
		const parameters = { options: { binaryAttachments: 'photo, invoice', urlAttachments: LINK } };
		const { plain, streamed } = await bothWays(chat, parameters, { items: [photoAndInvoice()] });
		expect(plain.text).toBe(`Echo from chat-sonnet-5: Describe this [attached: ${summaryOf(png, 'image/png')}, ${summaryOf(pdf, 'application/pdf')}, link ${LINK}]`);
		expect(streamed).toEqual(plain);
		const body = sent('/v1/chat/completions');
		expect(body.messages).toEqual([
			{
				role: 'user',
				content: [
					{ type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } },
					{ type: 'file', file: { filename: 'invoice-0042.pdf', file_data: `data:application/pdf;base64,${pdf.toString('base64')}` } },
					{ type: 'image_url', image_url: { url: LINK } },
					{ type: 'text', text: 'Describe this' },
				],
			},
		]);
		expect(sent('/v1/chat/completions', 1)).toMatchObject({ stream: true, messages: body.messages });
	});

	it('types a file from its bytes, not from its name or the MIME type n8n was told', async () => {
		const jpeg = sampleJpeg();
		const { output } = await chat({ options: { binaryAttachments: 'data' } }, { items: [binaryItem({ data: { bytes: jpeg, fileName: 'photo.png', mimeType: 'image/png' } })] });
		expect(output[0].json.text).toContain(summaryOf(jpeg, 'image/jpeg'));
		const [part] = (sent('/v1/chat/completions').messages as IDataObject[])[0].content as IDataObject[];
		expect(part).toEqual({ type: 'image_url', image_url: { url: `data:image/jpeg;base64,${jpeg.toString('base64')}` } });
	});

	it('puts the files into the last User message only, before its text', async () => {
		const conversation = { values: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'First' }, { role: 'assistant', content: 'Ok' }, { role: 'user', content: 'Now this' }] };
		await chat({ messages: conversation, options: { binaryAttachments: 'photo' } }, { items: [photoAndInvoice()] });
		const sentMessages = sent('/v1/chat/completions').messages as IDataObject[];
		expect(sentMessages.slice(0, 3)).toEqual(conversation.values.slice(0, 3));
		expect(sentMessages[3]).toEqual({ role: 'user', content: [expect.objectContaining({ type: 'image_url' }), { type: 'text', text: 'Now this' }] });
	});

	it('reads each file twice (checked before any request, encoded when sent), never all items at once', async () => {
		const items = [photoAndInvoice(), photoAndInvoice()];
		const { binaryReads } = await chat({ options: { binaryAttachments: 'photo' } }, { items });
		expect(binaryReads.reads).toEqual([
			{ itemIndex: 0, property: 'photo' },
			{ itemIndex: 1, property: 'photo' },
			{ itemIndex: 0, property: 'photo' },
			{ itemIndex: 1, property: 'photo' },
		]);
	});

	it('works without any binary data when the options are not set (a tool call from an AI Agent)', async () => {
		const { output } = await chat({ options: { binaryAttachments: '', urlAttachments: '' } }, { items: [{ json: { query: 'hi' } }] });
		expect(output[0].json.text).toBe('Echo from chat-sonnet-5: Describe this');
		expect(sent('/v1/chat/completions').messages).toEqual([{ role: 'user', content: 'Describe this' }]);
	});
});

describe('Gateway Chat: JSON answers', () => {
	it('asks with response_format json_object and parses the answer into data, the same streamed', async () => {
		const { plain, streamed } = await bothWays(chat, { options: { responseFormat: 'jsonObject', binaryAttachments: 'photo' } }, { items: [photoAndInvoice()] });
		expect(sent('/v1/chat/completions').response_format).toEqual({ type: 'json_object' });
		expect(plain.data).toEqual({
			echo: 'Echo from chat-sonnet-5: Describe this',
			model: 'chat-sonnet-5',
			attachments: [{ kind: 'image', mimeType: 'image/png', bytes: png.length, sha256: sha256(png) }],
		});
		expect(plain.text).toBe(JSON.stringify(plain.data));
		expect(streamed).toEqual(plain);
	});

	it('asks with response_format json_schema (strict) and returns the object that follows it', async () => {
		const schema = { type: 'object', properties: { title: { type: 'string' }, colours: { type: 'array', items: { type: 'string' } }, sha256: { type: 'string' } }, required: ['title', 'colours', 'sha256'], additionalProperties: false };
		const { plain, streamed } = await bothWays(chat, { options: { responseFormat: 'jsonSchema', jsonSchema: JSON.stringify(schema), binaryAttachments: 'photo' } }, { items: [photoAndInvoice()] });
		expect(sent('/v1/chat/completions').response_format).toEqual({ type: 'json_schema', json_schema: { name: 'response', schema, strict: true } });
		expect(plain.data).toEqual({ title: 'title: Describe this', colours: ['colours: Describe this'], sha256: sha256(png) });
		expect(streamed).toEqual(plain);
	});

	it('fails with an error that quotes the start of an answer that is not JSON, streamed or not', async () => {
		for (const stream of [false, true]) {
			await expect(chat({ stream, messages: say('Describe [not-json]'), options: { responseFormat: 'jsonObject' } })).rejects.toThrow(
				'The chat request failed: the model\'s answer is not JSON: "Sure! Here is what I found: the product looks great."',
			);
		}
	});

	it('keeps the whole answer on the error item with Continue On Fail', async () => {
		const { output } = await chat({ messages: say('Describe [not-json]'), options: { responseFormat: 'jsonObject' } }, { continueOnFail: true });
		expect(output[0].json).toMatchObject({
			error: expect.stringContaining("the model's answer is not JSON"),
			kind: 'protocol',
			text: 'Sure! Here is what I found: the product looks great.',
			finishReason: 'stop',
		});
	});

	it('explains an answer cut off at Max Tokens', async () => {
		const run = chat({ maxTokens: 2, options: { responseFormat: 'jsonObject' } });
		await expect(run).rejects.toMatchObject({ description: expect.stringContaining('cut off at Max Tokens') });
	});
});

describe('Gateway Messages: attachments', () => {
	it('sends image and document blocks and an image url block, and the gateway names exactly those bytes, streamed or not', async () => {
		const { plain, streamed } = await bothWays(messages, { options: { binaryAttachments: 'photo,invoice', urlAttachments: `${LINK}\nhttps://example.com/b.png` } }, { items: [photoAndInvoice()] });
		expect(plain.text).toBe(
			`Echo from chat-sonnet-5: Describe this [attached: ${summaryOf(png, 'image/png')}, ${summaryOf(pdf, 'application/pdf')}, link ${LINK}, link https://example.com/b.png]`,
		);
		expect(streamed).toEqual(plain);
		expect(sent('/v1/messages').messages).toEqual([
			{
				role: 'user',
				content: [
					{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') } },
					{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf.toString('base64') } },
					{ type: 'image', source: { type: 'url', url: LINK } },
					{ type: 'image', source: { type: 'url', url: 'https://example.com/b.png' } },
					{ type: 'text', text: 'Describe this' },
				],
			},
		]);
	});

	it('sends a WebP with its own type whatever the file is called', async () => {
		const webp = sampleWebp();
		const { output } = await messages({ options: { binaryAttachments: 'data' } }, { items: [binaryItem({ data: { bytes: webp, fileName: 'x.jpg', mimeType: 'image/jpeg' } })] });
		expect(output[0].json.text).toContain(summaryOf(webp, 'image/webp'));
	});

	it('refuses an image above 5 MB counted on its Base64 text, which Gateway Chat still sends', async () => {
		// 4 MB as a file: 5.3 MB of Base64, over the native limit, under the chat-completions one.
		const big = Buffer.concat([pngBytes(4, 4), Buffer.alloc(4 * 1024 * 1024)]);
		const items = [binaryItem({ data: { bytes: big, fileName: 'big.png' } })];
		await expect(messages({ options: { binaryAttachments: 'data' } }, { items })).rejects.toThrow(
			'"Binary Attachments" field "data" is an image of 5.3 MB once Base64-encoded (4.0 MB as a file); the native messages format takes images of at most 5.0 MB counted on their Base64 text (item 0)',
		);
		expect(apiRequests()).toEqual([]);
		const { output } = await chat({ options: { binaryAttachments: 'data' } }, { items });
		expect(output[0].json.text).toContain(`image/png ${big.length} B`);
	});
});

describe('Gateway Messages: JSON answers', () => {
	const schema = { type: 'object', properties: { invoiceNumber: { type: 'string' }, total: { type: 'number' }, kind: { type: 'string' } }, required: ['invoiceNumber', 'total'] };

	it('asks for a forced call of the respond tool and returns its input as data, the same streamed', async () => {
		const { plain, streamed } = await bothWays(messages, { options: { responseFormat: 'jsonSchema', jsonSchema: schema, binaryAttachments: 'invoice' } }, { items: [photoAndInvoice()] });
		const body = sent('/v1/messages');
		expect(body.tools).toEqual([{ name: 'respond', description: expect.any(String), input_schema: schema }]);
		expect(body.tool_choice).toEqual({ type: 'tool', name: 'respond' });
		expect(body.system).toBeUndefined();
		expect(plain.data).toEqual({ invoiceNumber: 'invoiceNumber: Describe this', total: 1, kind: 'pdf' });
		expect(plain.text).toBe(JSON.stringify(plain.data));
		expect(plain.stopReason).toBe('tool_use');
		expect(streamed).toEqual({ ...plain, content: [{ ...(plain.content as IDataObject[])[0], id: expect.any(String) }] });
	});

	it('with JSON Object, any object: the tool takes {"type": "object"}', async () => {
		const { output } = await messages({ options: { responseFormat: 'jsonObject' } });
		expect((sent('/v1/messages').tools as IDataObject[])[0].input_schema).toEqual({ type: 'object' });
		expect(output[0].json.data).toEqual({ echo: 'Echo from chat-sonnet-5: Describe this', model: 'chat-sonnet-5', attachments: [] });
	});

	it('with thinking, offers the tool with tool_choice auto and asks for it in the system prompt (a forced tool is refused with thinking)', async () => {
		const { plain, streamed } = await bothWays(messages, { model: model('chat-fable-5'), options: { responseFormat: 'jsonObject', system: 'You read invoices.' } });
		const body = sent('/v1/messages');
		expect(body.tool_choice).toEqual({ type: 'auto' });
		expect(body.system).toBe('You read invoices.\n\nAnswer by calling the respond tool: its input is your whole answer.');
		expect(plain.data).toEqual({ echo: 'Echo from chat-fable-5: Describe this', model: 'chat-fable-5', attachments: [] });
		expect(plain.thinking).toBeDefined();
		expect((streamed.data as IDataObject).echo).toBe((plain.data as IDataObject).echo);
	});

	it('fails with an error quoting the answer when the model answers in words', async () => {
		await expect(messages({ messages: say('Read it [not-json]'), options: { responseFormat: 'jsonObject' } })).rejects.toThrow(
			'The messages request failed: the model\'s answer is not JSON: "Sure! Here is what I found: the product looks great."',
		);
	});
});

describe('bad input is refused before any request, naming the field and the item', () => {
	const withMp4 = () => binaryItem({ clip: { bytes: sampleMp4(), fileName: 'clip.mp4', mimeType: 'video/mp4' } });
	const cases: Array<[string, IDataObject, INodeExecutionData[], string]> = [
		['a video', { binaryAttachments: 'clip' }, [withMp4()], '"Binary Attachments" field "clip" holds video/mp4 (n8n lists it as video/mp4, clip.mp4): only PNG, JPEG, GIF and WebP images and PDF documents can be attached (item 0)'],
		['text', { binaryAttachments: 'notes' }, [binaryItem({ notes: { bytes: Buffer.from('hello'), fileName: 'notes.txt', mimeType: 'text/plain' } })], '"Binary Attachments" field "notes" holds a file of no image or PDF type (n8n lists it as text/plain, notes.txt)'],
		[
			'a CSV that quotes a PDF header',
			{ binaryAttachments: 'table' },
			[binaryItem({ table: { bytes: Buffer.from('invoice,header\nINV-1,%PDF-1.7\n'), fileName: 'table.csv', mimeType: 'text/csv' } })],
			'"Binary Attachments" field "table" holds a file of no image or PDF type (n8n lists it as text/csv, table.csv)',
		],
		['a missing field', { binaryAttachments: 'photo, scan' }, [photoAndInvoice()], '"Binary Attachments" names the binary field "scan", which this item does not have (it has: photo, invoice) (item 0)'],
		['no binary at all', { binaryAttachments: 'data' }, [{ json: {} }], '"Binary Attachments" names the binary field "data", which this item does not have (it has no binary data at all) (item 0)'],
		['a link that is not http(s)', { urlAttachments: 'ftp://example.com/a.png' }, [{ json: {} }], '"Image URLs" entry 1 ("ftp://example.com/a.png") is not an http(s) link (item 0)'],
		['a schema that is not an object', { responseFormat: 'jsonSchema', jsonSchema: '[1, 2]' }, [{ json: {} }], '"Response JSON Schema" must be a JSON object, not a list (item 0)'],
		['a schema that is not JSON', { responseFormat: 'jsonSchema', jsonSchema: '{type: object}' }, [{ json: {} }], '"Response JSON Schema" is not valid JSON'],
		['too many images', { urlAttachments: Array.from({ length: 101 }, (_, i) => `https://example.com/${i}.png`).join('\n') }, [{ json: {} }], '"Image URLs" add 101 images; the chat-completions format takes at most 100 per request (item 0)'],
	];

	it.each(cases)('Gateway Chat: %s', async (_what, options, items, message) => {
		await expect(chat({ options }, { items })).rejects.toThrow(message);
		expect(apiRequests()).toEqual([]);
	});

	it('Gateway Chat: a request above 32 MB with its files', async () => {
		const big = Buffer.concat([pdf, Buffer.alloc(9 * 1024 * 1024)]);
		const items = [binaryItem({ a: { bytes: big }, b: { bytes: big }, c: { bytes: big } })];
		await expect(chat({ options: { binaryAttachments: 'a,b,c' } }, { items })).rejects.toThrow(/"Binary Attachments" make a request of 36\.0 MB \(files are sent as Base64, a third larger than the files\); a request may be at most 32\.0 MB \(item 0\)/);
		expect(apiRequests()).toEqual([]);
	});

	it('Gateway Messages: an image above 8000 px per side', async () => {
		const items = [binaryItem({ wide: { bytes: pngHeader(9000, 600) } })];
		await expect(messages({ options: { binaryAttachments: 'wide' } }, { items })).rejects.toThrow(
			'"Binary Attachments" field "wide" is an image of 9000×600 px; the native messages format takes at most 8000 px per side (item 0)',
		);
		expect(apiRequests()).toEqual([]);
	});

	it('Gateway Messages: more than 20 images with one above 2000 px', async () => {
		const files = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`p${i}`, { bytes: i === 7 ? pngHeader(2400, 100) : pngHeader(100, 100) }]));
		const items = [binaryItem(files)];
		await expect(messages({ options: { binaryAttachments: Object.keys(files).join(',') } }, { items })).rejects.toThrow(
			'"Binary Attachments" field "p7" is an image of 2400×100 px; with more than 20 images in one request the native messages format takes at most 2000 px per side (item 0)',
		);
		expect(apiRequests()).toEqual([]);
	});

	it('Gateway Messages: a schema whose top level is not an object', async () => {
		await expect(messages({ options: { responseFormat: 'jsonSchema', jsonSchema: '{"type": "array"}' } })).rejects.toThrow('"Response JSON Schema" must describe an object at its top level ("type": "object"), not "array" (item 0)');
		expect(apiRequests()).toEqual([]);
	});

	it('a bad second item stops the run before the first is sent', async () => {
		const items = [photoAndInvoice(), { json: {} }];
		await expect(messages({ options: { binaryAttachments: 'photo' } }, { items })).rejects.toThrow('(item 1)');
		expect(apiRequests()).toEqual([]);
	});

	it('with Continue On Fail, the bad item becomes an error item and the good one is sent', async () => {
		const items = [{ json: {} }, photoAndInvoice()];
		const { output } = await chat({ options: { binaryAttachments: 'photo' } }, { items, continueOnFail: true });
		expect(output[0].json.error).toContain('"Binary Attachments" names the binary field "photo", which this item does not have');
		expect(output[1].json.text).toContain(summaryOf(png, 'image/png'));
		expect(apiRequests()).toHaveLength(1);
	});
});

describe('Gateway Image Generate: size, quality, background and output format', () => {
	async function images(options: IDataObject, parameters: IDataObject = {}) {
		const test = context('gatewayImageGenerate', { model: model('img-image-2'), prompt: 'a shop icon', n: 2, responseFormat: 'url', options }, parameters, {});
		const [output] = await generateImages.call(test.ctx);
		return { output, ...test };
	}

	it('sends the four options and saves a WebP answer as .webp, typed from its bytes', async () => {
		const { output } = await images({ size: '1024x1024', quality: 'high', background: 'transparent', outputFormat: 'webp' });
		expect(sent('/v1/images/generations')).toEqual({ model: 'img-image-2', prompt: 'a shop icon', n: 2, response_format: 'url', size: '1024x1024', quality: 'high', background: 'transparent', output_format: 'webp' });
		for (const item of output) {
			expect(item.binary!.data).toMatchObject({ mimeType: 'image/webp', fileExtension: 'webp' });
			expect(item.binary!.data.fileName).toMatch(/\.webp$/);
			expect(item.json).toMatchObject({ size: '1024x1024', quality: 'high', background: 'transparent', output_format: 'webp' });
		}
	});

	it('sends none of them when they are not set', async () => {
		await images({});
		expect(sent('/v1/images/generations')).toEqual({ model: 'img-image-2', prompt: 'a shop icon', n: 2, response_format: 'url' });
	});

	it('puts the request\'s usage on the first image only, saying that it covers all images', async () => {
		const { output } = await images({}, { n: 3, responseFormat: 'b64_json' });
		expect(output[0].json).toMatchObject({ usage: expect.objectContaining({ output_tokens: 3 * 1056 }), usageCoversAllImages: true });
		for (const item of output.slice(1)) {
			expect(item.json.usage).toBeUndefined();
			expect(item.json.usageCoversAllImages).toBeUndefined();
		}
		const total = output.reduce((sum, item) => sum + Number((item.json.usage as IDataObject | undefined)?.output_tokens ?? 0), 0);
		expect(total).toBe(3 * 1056);
	});

	it('refuses a transparent JPEG and a bad size before any request', async () => {
		await expect(images({ background: 'transparent', outputFormat: 'jpeg' })).rejects.toThrow('"Background" is Transparent, which JPEG cannot hold (item 0)');
		await expect(images({ size: 'huge' })).rejects.toThrow('"Size" must be auto or <width>x<height>, not "huge" (item 0)');
		expect(apiRequests()).toEqual([]);
	});
});

describe('Gateway Video Generate: a first frame', () => {
	async function submit(options: IDataObject, items?: INodeExecutionData[]) {
		const test = context('gatewayVideoGenerate', { operation: 'submit', model: model('video-2-0-fast-260128'), prompt: 'the shoe turns slowly', seconds: 5, size: '1280x720', options }, {}, { items });
		const [output] = await executeVideo(test.ctx, { clock: createFakeClock() });
		return { output, ...test };
	}

	it('sends Image URL as given in image', async () => {
		await submit({ imageUrl: LINK });
		expect(sent('/v1/video/generations')).toEqual({ model: 'video-2-0-fast-260128', prompt: 'the shoe turns slowly', seconds: '5', size: '1280x720', image: LINK });
	});

	it('sends a binary image as a data URL with the type from its bytes, which the gateway decodes and accepts', async () => {
		const jpeg = sampleJpeg();
		const { output } = await submit({ imageBinaryProperty: 'frame' }, [binaryItem({ frame: { bytes: jpeg, fileName: 'frame.png', mimeType: 'image/png' } })]);
		expect(sent('/v1/video/generations').image).toBe(`data:image/jpeg;base64,${jpeg.toString('base64')}`);
		expect(output[0].json.task_id).toMatch(/^task_/);
	});

	it('refuses both options, a missing field and a file that is not an image before any request', async () => {
		await expect(submit({ imageUrl: LINK, imageBinaryProperty: 'frame' })).rejects.toThrow('"Image URL" and "Image From Binary Field" are both set; the video takes one first frame (item 0)');
		await expect(submit({ imageBinaryProperty: 'frame' }, [{ json: {} }])).rejects.toThrow('"Image From Binary Field" names the binary field "frame", which this item does not have (it has no binary data at all) (item 0)');
		await expect(submit({ imageBinaryProperty: 'frame' }, [binaryItem({ frame: { bytes: pdf } })])).rejects.toThrow('"Image From Binary Field" field "frame" holds application/pdf: the first frame must be a PNG, JPEG, GIF or WebP image (item 0)');
		await expect(submit({ imageUrl: 'file:///etc/passwd' })).rejects.toThrow('"Image URL" must be an http(s) link or a data URL of an image');
		expect(apiRequests()).toEqual([]);
	});

	// A data URL is checked like a file: its Base64 must decode to an image of the type it declares.
	it.each([
		['text', `data:image/png;base64,${Buffer.from('this is only some text').toString('base64')}`, '"Image URL" is a data URL of image/png, but its data is text, not an image (item 0)'],
		['a JPEG', `data:image/png;base64,${sampleJpeg().toString('base64')}`, '"Image URL" is a data URL of image/png, but its data is a JPEG image (image/jpeg) (item 0)'],
		['a PDF', `data:image/png;base64,${pdf.toString('base64')}`, '"Image URL" is a data URL of image/png, but its data is application/pdf, not an image (item 0)'],
		['Base64 that does not decode', 'data:image/png;base64,iVBORw0KGgo=iVBO', '"Image URL" is a data URL of image/png, but its data is not valid Base64 (item 0)'],
		['no data', 'data:image/png;base64,', '"Image URL" must be an http(s) link or a data URL of an image'],
		// The gateway compares the declared type exactly, so the node does too.
		['a JPEG declared as image/jpg', `data:image/jpg;base64,${sampleJpeg().toString('base64')}`, '"Image URL" is a data URL of image/jpg, but its data is a JPEG image (image/jpeg) (item 0)'],
	])('refuses a data URL of image/png that holds %s before any request', async (_what, imageUrl, message) => {
		await expect(submit({ imageUrl })).rejects.toThrow(message);
		expect(apiRequests()).toEqual([]);
	});

	it('sends a data URL whose bytes are the image it declares', async () => {
		const jpeg = `data:image/jpeg;base64,${sampleJpeg().toString('base64')}`;
		await submit({ imageUrl: jpeg });
		expect(sent('/v1/video/generations').image).toBe(jpeg);
	});
});
