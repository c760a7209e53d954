/**
 * Files in, JSON out, the pure parts: image sizes from headers, file types from bytes, reading and
 * checking the attachment and JSON options, the content parts of both formats, the request
 * bodies of Gateway Chat and Gateway Messages (every option, stream on and off), parsing JSON
 * answers, the image options of Gateway Image Generate and its usage, and the first frame of
 * Gateway Video Generate.
 */
import type { IDataObject, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { GatewayChat } from '../../nodes/GatewayChat/GatewayChat.node';
import { chatRequestBody, prepareChatItem, readChatRequest } from '../../nodes/GatewayChat/request';
import type { ChatRequest } from '../../nodes/GatewayChat/request';
import { GatewayImageGenerate } from '../../nodes/GatewayImageGenerate/GatewayImageGenerate.node';
import { buildImageBody, readImageRequest } from '../../nodes/GatewayImageGenerate/request';
import { planImages } from '../../nodes/GatewayImageGenerate/response';
import { GatewayMessages } from '../../nodes/GatewayMessages/GatewayMessages.node';
import { toolInput } from '../../nodes/GatewayMessages/reply';
import { RESPOND_INSTRUCTION, messagesRequestBody, prepareMessagesItem, readMessagesRequest } from '../../nodes/GatewayMessages/request';
import type { MessagesRequest } from '../../nodes/GatewayMessages/request';
import { GatewayVideoGenerate } from '../../nodes/GatewayVideoGenerate/GatewayVideoGenerate.node';
import { buildSubmitBody, checkImageUrl, planFirstFrame, readFirstFrame } from '../../nodes/GatewayVideoGenerate/request';
import {
	attachedBody,
	attachmentParts,
	attachmentType,
	base64Length,
	bodyWithParts,
	checkRequestSize,
	planFiles,
} from '../../nodes/shared/files/attachments';
import { readAttachmentNames, readImageUrls } from '../../nodes/shared/chat/chatInput';
import type { LoadedFile } from '../../nodes/shared/files/attachments';
import { Base64Text, encodeJsonBody } from '../../nodes/shared/wire/jsonBody';
import { GatewayError } from '../../nodes/shared/failures/errors';
import { Base64Decoder, decodeBase64, imageDataUrlProblem } from '../../nodes/shared/files/base64';
import { imageDimensions } from '../../nodes/shared/files/imageSize';
import { jsonReplyData, parseJsonText, readJsonRequest } from '../../nodes/shared/chat/jsonReply';
import { fieldError } from '../../nodes/shared/items/validate';
import { createExecuteContext } from '../helpers/executeContext';
import { binaryItem, pdfBytes, pngBytes, pngHeader, sampleJpeg, sampleMp4, sampleWebp, withBinaryHelpers } from '../helpers/files';
import { fileWaitScope } from '../../nodes/shared/wire/fileWait';

/** A limit no test here reaches: the reads of these files are instant. */
const TEST_LIMIT = { scope: fileWaitScope(Date.now() + 3_600_000), name: 'Max Wait (Seconds)' };

const credentials = { apiKey: 'sk-unit-files', baseUrl: 'http://127.0.0.1:9' };
const MB = 1024 * 1024;

function contextFor(parameters: IDataObject, items?: INodeExecutionData[]) {
	const test = createExecuteContext({ parameters, items, credentials });
	const binaryReads = withBinaryHelpers(test.ctx);
	return { ctx: test.ctx, binaryReads };
}

const chatParameters = (options: IDataObject, extra: IDataObject = {}) => ({
	model: { __rl: true, mode: 'list', value: 'chat-sonnet-5' },
	messages: { values: [{ role: 'user', content: 'What is this?' }] },
	maxTokens: 1000,
	stream: false,
	options,
	...extra,
});

/** A body as the gateway receives it: files (Base64Text) written as their Base64 text. */
const asSent = (value: unknown): unknown => JSON.parse(encodeJsonBody(value).toString()) as unknown;

const loaded = (bytes: Buffer, kind: 'image' | 'pdf', mimeType: string, property = 'data', fileName = `${property}.bin`): LoadedFile => ({
	property,
	kind,
	mimeType,
	fileName,
	size: bytes.length,
	data: bytes,
});

describe('image dimensions from the header', () => {
	it('reads PNG, JPEG and lossy WebP', () => {
		expect(imageDimensions(pngBytes(16, 12))).toEqual({ width: 16, height: 12 });
		expect(imageDimensions(sampleJpeg())).toEqual({ width: 64, height: 64 });
		expect(imageDimensions(sampleWebp())).toEqual({ width: 64, height: 64 });
	});

	it('reads GIF, lossless and extended WebP', () => {
		const gif = Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.from([0x40, 0x1f, 0x58, 0x02]), Buffer.alloc(8)]);
		expect(imageDimensions(gif)).toEqual({ width: 8000, height: 600 });
		const riff = (chunk: string, payload: Buffer) => Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBP'), Buffer.from(chunk), Buffer.alloc(4), payload, Buffer.alloc(16)]);
		const lossless = Buffer.alloc(5);
		lossless[0] = 0x2f;
		lossless.writeUInt32LE((300 - 1) | ((200 - 1) << 14), 1);
		expect(imageDimensions(riff('VP8L', lossless))).toEqual({ width: 300, height: 200 });
		const extended = Buffer.alloc(10);
		extended.writeUIntLE(9000 - 1, 4, 3);
		extended.writeUIntLE(50 - 1, 7, 3);
		expect(imageDimensions(riff('VP8X', extended))).toEqual({ width: 9000, height: 50 });
	});

	it('walks JPEG segments (an EXIF block, fill bytes) to the frame header, progressive included', () => {
		const exif = Buffer.concat([Buffer.from([0xff, 0xe1, 0x00, 0x10]), Buffer.alloc(14)]);
		const frame = Buffer.from([0xff, 0xff, 0xc2, 0x00, 0x11, 0x08, 0x01, 0x2c, 0x1f, 0x41, 0x03]);
		expect(imageDimensions(Buffer.concat([Buffer.from([0xff, 0xd8]), exif, frame, Buffer.alloc(16)]))).toEqual({ width: 8001, height: 300 });
	});

	it('gives up on what it cannot read', () => {
		expect(imageDimensions(Buffer.from('not an image'))).toBeUndefined();
		expect(imageDimensions(pngBytes().subarray(0, 20))).toBeUndefined();
		expect(imageDimensions(Buffer.from([0xff, 0xd8, 0xff, 0xda, 0x00, 0x02]))).toBeUndefined();
		expect(imageDimensions(pdfBytes())).toBeUndefined();
	});
});

describe('file types from bytes', () => {
	it('takes the four image types and PDFs, whatever the name', () => {
		expect(attachmentType(pngBytes())).toMatchObject({ kind: 'image', mimeType: 'image/png' });
		expect(attachmentType(sampleJpeg())).toMatchObject({ kind: 'image', mimeType: 'image/jpeg' });
		expect(attachmentType(sampleWebp())).toMatchObject({ kind: 'image', mimeType: 'image/webp' });
		expect(attachmentType(Buffer.from('GIF87a......'))).toMatchObject({ kind: 'image', mimeType: 'image/gif' });
		expect(attachmentType(pdfBytes())).toEqual({ kind: 'pdf', mimeType: 'application/pdf', extension: 'pdf' });
	});

	it('refuses everything else', () => {
		expect(attachmentType(sampleMp4())).toBeUndefined();
		expect(attachmentType(Buffer.from('hello'))).toBeUndefined();
		expect(attachmentType(Buffer.alloc(0))).toBeUndefined();
	});

	it('takes the type from the first bytes only, never from a search in the content', () => {
		// A CSV that quotes a PDF header is text, not a PDF document.
		expect(attachmentType(Buffer.from('invoice,header\nINV-1,"%PDF-1.7"\n'))).toBeUndefined();
		expect(attachmentType(Buffer.concat([Buffer.from('\r\n\r\n'), pdfBytes()]))).toBeUndefined();
	});
});

describe('Base64, strictly', () => {
	it('decodes standard and URL-safe Base64, padded or not, with line breaks', () => {
		expect(decodeBase64('aGVsbG8=')?.toString()).toBe('hello');
		expect(decodeBase64('aGVsbG8')?.toString()).toBe('hello');
		expect(decodeBase64('aGVs\nbG8=')?.toString()).toBe('hello');
		expect(decodeBase64('-_8=')).toEqual(Buffer.from([0xfb, 0xff]));
		expect(decodeBase64('')).toEqual(Buffer.alloc(0));
	});

	it.each(['not base64 at all!', 'aGVs bG8=!', 'aGVsbG8=aGVs', 'aGVsb', 'a==='])('refuses %j, which Node would decode to some bytes', (text) => {
		expect(Buffer.from(text, 'base64').length).toBeGreaterThanOrEqual(0);
		expect(decodeBase64(text)).toBeUndefined();
	});

	it('decodes Base64 that arrives in pieces of any length, checking every character', () => {
		const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 7) % 256));
		const text = bytes.toString('base64');
		for (const size of [1, 2, 3, 5, 64, 999]) {
			const decoder = new Base64Decoder();
			for (let at = 0; at < text.length; at += size) decoder.write(text.slice(at, at + size));
			expect(decoder.end()?.equals(bytes)).toBe(true);
		}
		const bad = new Base64Decoder();
		bad.write('aGVs');
		bad.write('b!8=');
		expect(bad.end()).toBeUndefined();
		const afterPadding = new Base64Decoder();
		afterPadding.write('aGk=');
		afterPadding.write('aGk=');
		expect(afterPadding.end()).toBeUndefined();
	});

	it.each([['QQ==QQ'], ['QQ=', '=QQ'], ['aGk=aGk=']])('refuses text after padding within a piece or across pieces (%j), as decodeBase64 does', (...pieces) => {
		const decoder = new Base64Decoder();
		for (const piece of pieces) decoder.write(piece);
		expect(decoder.end()).toBeUndefined();
		expect(decodeBase64(pieces.join(''))).toBeUndefined();
	});

	it.each([
		[`data:image/png;base64,${pngBytes().toString('base64')}`, undefined],
		[`data:image/jpeg;base64,${sampleJpeg().toString('base64')}`, undefined],
		[`data:image/jpg;base64,${sampleJpeg().toString('base64')}`, 'is a data URL of image/jpg, but its data is a JPEG image (image/jpeg)'],
		['https://example.com/a.png', undefined],
		['data:image/png;base64,aGVsbG8gd29ybGQ=', 'is a data URL of image/png, but its data is text, not an image'],
		['data:image/png;base64,%%%', 'is a data URL of image/png, but its data is not valid Base64'],
		['data:text/plain;base64,aGVsbG8=', 'is a data URL of text/plain, not of an image'],
		['data:image/svg+xml,<svg/>', 'is a data URL of image/svg+xml that is not Base64-encoded (";base64," is missing)'],
		[`data:image/gif;base64,${pdfBytes().toString('base64')}`, 'is a data URL of image/gif, but its data is application/pdf, not an image'],
	])('checks the data URL %#', (link, problem) => {
		expect(imageDataUrlProblem(link)).toBe(problem);
	});
});

describe('input errors carry what they quote only where the exit masks it', () => {
	const PASTED = 'sk-pasted-into-a-field-0123456789abcdef';

	it('keeps the quote in the message and the hint only: no cause or stack of n8n`s holds another copy', () => {
		const { ctx } = contextFor({});
		const error = fieldError(ctx, 3, 'Image URL', `must be an http(s) link, not "${PASTED}"`, `You gave ${PASTED}.`);
		expect(error.message).toBe(`"Image URL" must be an http(s) link, not "${PASTED}" (item 3)`);
		expect(error.description).toBe(`You gave ${PASTED}.`);
		expect(error.context.itemIndex).toBe(3);
		// What the exit does to an input error: its message and hint masked in place.
		error.message = error.message.replaceAll(PASTED, '***');
		error.description = error.description?.replaceAll(PASTED, '***');
		// n8n stores errors through toJSON (its cause included) and shows the stack.
		expect(JSON.stringify(error)).not.toContain(PASTED);
		expect(String(error.stack)).not.toContain(PASTED);
		expect(JSON.parse(JSON.stringify(error))).toMatchObject({ message: '"Image URL" must be an http(s) link, not "***" (item 3)', description: 'You gave ***.' });
	});
});

describe('reading the options', () => {
	const { ctx } = contextFor({});

	it('reads binary field names, comma-separated or one per line, without repeats', () => {
		expect(readAttachmentNames(ctx, 0, ' photo, invoice ,,photo\nscan')).toEqual(['photo', 'invoice', 'scan']);
		expect(readAttachmentNames(ctx, 0, ['a', ' b '])).toEqual(['a', 'b']);
		expect(readAttachmentNames(ctx, 0, '')).toBeUndefined();
		expect(readAttachmentNames(ctx, 0, ' , ')).toBeUndefined();
		expect(() => readAttachmentNames(ctx, 0, { data: 1 })).toThrow('"Binary Attachments" must be text, but the expression gave an object (item 0)');
		// A list that holds something else says what, in words ("an object", never "a object").
		expect(() => readAttachmentNames(ctx, 0, ['a', { data: 1 }])).toThrow('"Binary Attachments" must be a list of texts, but it holds an object (item 0)');
		expect(() => readAttachmentNames(ctx, 0, ['a', ['b']])).toThrow('"Binary Attachments" must be a list of texts, but it holds a list (item 0)');
		expect(() => readAttachmentNames(ctx, 0, [null])).toThrow('"Binary Attachments" must be a list of texts, but it holds null (item 0)');
		expect(() => readAttachmentNames(ctx, 0, [7])).toThrow('"Binary Attachments" must be a list of texts, but it holds a number (item 0)');
		// Review r7: {{ [$json.photo, $json.scan] }} with a missing field.
		expect(() => readAttachmentNames(ctx, 0, ['photo', undefined])).toThrow('"Binary Attachments" must be a list of texts, but it holds undefined (item 0)');
	});

	it('reads image links one per line or comma-separated, keeping commas inside a link', () => {
		expect(readImageUrls(ctx, 0, 'https://a.example/x.png, https://cdn.example/w_400,h_300/y.jpg\nhttp://b.example/z.gif')).toEqual([
			'https://a.example/x.png',
			'https://cdn.example/w_400,h_300/y.jpg',
			'http://b.example/z.gif',
		]);
		expect(readImageUrls(ctx, 0, ['https://a.example/x.png'])).toEqual(['https://a.example/x.png']);
		expect(readImageUrls(ctx, 0, '  ')).toBeUndefined();
	});

	it.each([
		['ftp://a.example/x.png', 'entry 1 ("ftp://a.example/x.png") is not an http(s) link'],
		['https://a.example/x.png, file:///etc/passwd', 'entry 2 ("file:///etc/passwd") is not an http(s) link'],
		['https://a.example/x y.png', 'entry 1 ("https://a.example/x y.png") is not an http(s) link'],
		['photo.png', 'entry 1 ("photo.png") is not an http(s) link'],
	])('refuses %j', (value, message) => {
		expect(() => readImageUrls(ctx, 0, value)).toThrow(`"Image URLs" ${message} (item 0)`);
	});

	it('reads Response Format and JSON Schema (as text or as an object)', () => {
		expect(readJsonRequest(ctx, 0, {})).toBeUndefined();
		expect(readJsonRequest(ctx, 0, { responseFormat: 'text', jsonSchema: '[not used' })).toBeUndefined();
		expect(readJsonRequest(ctx, 0, { responseFormat: 'jsonObject' })).toEqual({ format: 'jsonObject' });
		expect(readJsonRequest(ctx, 0, { responseFormat: 'jsonSchema', jsonSchema: '{"type":"object"}' })).toEqual({ format: 'jsonSchema', schema: { type: 'object' } });
		expect(readJsonRequest(ctx, 0, { responseFormat: 'jsonSchema', jsonSchema: { type: 'object' } })).toEqual({ format: 'jsonSchema', schema: { type: 'object' } });
	});

	it.each([
		[{ responseFormat: 'xml' }, '"Response Format" must be one of text, jsonObject, jsonSchema, not "xml" (item 0)'],
		[{ responseFormat: 'jsonSchema' }, '"Response JSON Schema" must be set when Response Format is JSON Schema (item 0)'],
		[{ responseFormat: 'jsonSchema', jsonSchema: ' ' }, '"Response JSON Schema" must be set'],
		[{ responseFormat: 'jsonSchema', jsonSchema: '{"type":' }, '"Response JSON Schema" is not valid JSON'],
		[{ responseFormat: 'jsonSchema', jsonSchema: '"object"' }, '"Response JSON Schema" must be a JSON object, not a JSON string (item 0)'],
		[{ responseFormat: 'jsonSchema', jsonSchema: [] }, '"Response JSON Schema" must be a JSON object, not a list (item 0)'],
	])('refuses %j', (options, message) => {
		expect(() => readJsonRequest(ctx, 0, options as IDataObject)).toThrow(message);
	});

	it('needs a User message to attach to', () => {
		const onlySystem = { messages: { values: [{ role: 'system', content: 'Be brief.' }] } };
		expect(() => readChatRequest(contextFor(chatParameters({ urlAttachments: 'https://a.example/x.png' }, onlySystem)).ctx, 0)).toThrow(
			'"Image URLs" needs a message with the role "User" to attach to (item 0)',
		);
		const onlyAssistant = { messages: { values: [{ role: 'assistant', content: 'Hello' }] } };
		expect(() => readMessagesRequest(contextFor(chatParameters({ binaryAttachments: 'data' }, onlyAssistant)).ctx, 0)).toThrow(
			'"Binary Attachments" needs a message with the role "User" to attach to (item 0)',
		);
	});

	it('refuses a schema the messages tool cannot take, and gives a typeless one type object', () => {
		const read = (jsonSchema: IDataObject) => readMessagesRequest(contextFor(chatParameters({ responseFormat: 'jsonSchema', jsonSchema })).ctx, 0);
		expect(() => read({ type: 'string' })).toThrow('"Response JSON Schema" must describe an object at its top level ("type": "object"), not "string" (item 0)');
		const input = read({ properties: { a: { type: 'string' } } });
		expect((messagesRequestBody(input).tools as IDataObject[])[0].input_schema).toEqual({ type: 'object', properties: { a: { type: 'string' } } });
	});
});

describe('content parts', () => {
	const png = pngBytes();
	const pdf = pdfBytes();
	const files = [loaded(png, 'image', 'image/png', 'photo', 'p.png'), loaded(pdf, 'pdf', 'application/pdf', 'invoice', 'invoice.pdf')];
	const links = ['https://a.example/x.png'];

	it('chat-completions: image_url parts with a data URL, PDFs as file parts, links as image_url parts', () => {
		expect(asSent(attachmentParts('chat', files, links))).toEqual([
			{ type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } },
			{ type: 'file', file: { filename: 'invoice.pdf', file_data: `data:application/pdf;base64,${pdf.toString('base64')}` } },
			{ type: 'image_url', image_url: { url: 'https://a.example/x.png' } },
		]);
	});

	it('native messages: image and document blocks with a base64 source, links as url sources', () => {
		expect(asSent(attachmentParts('messages', files, links))).toEqual([
			{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') } },
			{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf.toString('base64') } },
			{ type: 'image', source: { type: 'url', url: 'https://a.example/x.png' } },
		]);
	});

	it('go into the last User message, before its text; the others stay text', () => {
		const conversation = [
			{ role: 'user', content: 'first' },
			{ role: 'assistant', content: 'ok' },
			{ role: 'user', content: 'second' },
			{ role: 'assistant', content: '{' },
		];
		const parts = [{ type: 'image_url', image_url: { url: 'https://a.example/x.png' } }];
		expect(bodyWithParts({ messages: conversation }, parts).messages).toEqual([
			{ role: 'user', content: 'first' },
			{ role: 'assistant', content: 'ok' },
			{ role: 'user', content: [...parts, { type: 'text', text: 'second' }] },
			{ role: 'assistant', content: '{' },
		]);
		expect(bodyWithParts({ messages: conversation }, []).messages).toEqual(conversation);
	});
});

describe('Gateway Chat body', () => {
	const base = (overrides: Partial<ChatRequest> = {}): ChatRequest => ({
		model: 'chat-sonnet-5',
		messages: [{ role: 'user', content: 'What is this?' }],
		maxTokens: 1000,
		stream: false,
		extraBody: {},
		includeRawResponse: false,
		deadlineMs: 600_000,
		idleMs: 60_000,
		...overrides,
	});
	const png = pngBytes();

	it.each([false, true])('with files, links and a JSON schema (stream %s)', (stream) => {
		const schema = { type: 'object', properties: { title: { type: 'string' } } };
		const body = bodyWithParts(chatRequestBody(base({ stream, json: { format: 'jsonSchema', schema } })), attachmentParts('chat', [loaded(png, 'image', 'image/png')], ['https://a.example/x.png']));
		expect(asSent(body)).toEqual({
			model: 'chat-sonnet-5',
			messages: [
				{
					role: 'user',
					content: [
						{ type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } },
						{ type: 'image_url', image_url: { url: 'https://a.example/x.png' } },
						{ type: 'text', text: 'What is this?' },
					],
				},
			],
			max_tokens: 1000,
			stream,
			...(stream ? { stream_options: { include_usage: true } } : {}),
			response_format: { type: 'json_schema', json_schema: { name: 'response', schema, strict: true } },
		});
	});

	it.each([false, true])('JSON Object as response_format json_object (stream %s)', (stream) => {
		expect(chatRequestBody(base({ stream, json: { format: 'jsonObject' } })).response_format).toEqual({ type: 'json_object' });
	});

	it('leaves response_format out for text (Extra Body Fields may still set one), and content as text without attachments', () => {
		expect(chatRequestBody(base())).toEqual({ model: 'chat-sonnet-5', messages: [{ role: 'user', content: 'What is this?' }], max_tokens: 1000, stream: false });
		expect(chatRequestBody(base({ extraBody: { response_format: { type: 'json_object' } } })).response_format).toEqual({ type: 'json_object' });
		expect(chatRequestBody(base({ extraBody: { response_format: { type: 'text' } }, json: { format: 'jsonObject' } })).response_format).toEqual({ type: 'json_object' });
	});

	it('reads every new option of an item', () => {
		const { ctx } = contextFor(chatParameters({ binaryAttachments: 'photo', urlAttachments: 'https://a.example/x.png', responseFormat: 'jsonObject' }));
		expect(readChatRequest(ctx, 0)).toMatchObject({ binaryAttachments: ['photo'], imageUrls: ['https://a.example/x.png'], json: { format: 'jsonObject' } });
		const plain = readChatRequest(contextFor(chatParameters({})).ctx, 0);
		expect([plain.binaryAttachments, plain.imageUrls, plain.json]).toEqual([undefined, undefined, undefined]);
	});
});

describe('Gateway Messages body: JSON as a call of the respond tool', () => {
	const base = (overrides: Partial<MessagesRequest> = {}): MessagesRequest => ({
		model: 'chat-sonnet-5',
		messages: [{ role: 'user', content: 'Read this invoice' }],
		maxTokens: 2000,
		stream: false,
		thinking: 'off',
		extraBody: {},
		includeRawResponse: false,
		deadlineMs: 600_000,
		idleMs: 60_000,
		...overrides,
	});
	const schema = { type: 'object', properties: { total: { type: 'number' } }, required: ['total'] };
	const pdf = pdfBytes();

	it.each([false, true])('forces the tool when nothing thinks, with a document block (stream %s)', (stream) => {
		const body = bodyWithParts(messagesRequestBody(base({ stream, system: 'You read invoices.', json: { format: 'jsonSchema', schema } })), attachmentParts('messages', [loaded(pdf, 'pdf', 'application/pdf')]));
		expect(asSent(body)).toEqual({
			model: 'chat-sonnet-5',
			max_tokens: 2000,
			messages: [
				{
					role: 'user',
					content: [
						{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf.toString('base64') } },
						{ type: 'text', text: 'Read this invoice' },
					],
				},
			],
			stream,
			system: 'You read invoices.',
			tools: [{ name: 'respond', description: expect.stringContaining('the whole answer'), input_schema: schema }],
			tool_choice: { type: 'tool', name: 'respond' },
		});
	});

	it.each([
		['adaptive thinking', { thinking: 'adaptive' as const }],
		['thinking with a budget', { thinking: 'enabled' as const, thinkingBudget: 1024 }],
		['chat-fable-5, which always thinks', { model: 'chat-fable-5' }],
		['thinking from Extra Body Fields', { extraBody: { thinking: { type: 'enabled', budget_tokens: 1024 } } }],
	])('offers the tool with tool_choice auto and asks for it in the system prompt with %s', (_what, overrides) => {
		const body = messagesRequestBody(base({ ...overrides, json: { format: 'jsonObject' } }));
		expect(body.tool_choice).toEqual({ type: 'auto' });
		expect(body.system).toBe(RESPOND_INSTRUCTION);
		expect((body.tools as IDataObject[])[0].input_schema).toEqual({ type: 'object' });
		expect(messagesRequestBody(base({ ...overrides, system: 'Be exact.', json: { format: 'jsonObject' } })).system).toBe(`Be exact.\n\n${RESPOND_INSTRUCTION}`);
	});

	it('sends no tools for text, and Extra Body Fields thinking "disabled" still forces the tool', () => {
		const body = messagesRequestBody(base());
		expect(body.tools).toBeUndefined();
		expect(body.tool_choice).toBeUndefined();
		expect(messagesRequestBody(base({ extraBody: { thinking: { type: 'disabled' } }, json: { format: 'jsonObject' } })).tool_choice).toEqual({ type: 'tool', name: 'respond' });
	});

	it('reads the tool call from the answer', () => {
		const message = { content: [{ type: 'thinking', thinking: 'hm' }, { type: 'tool_use', id: 't1', name: 'respond', input: { total: 3 } }] };
		expect(toolInput(message, 'respond')).toEqual({ total: 3 });
		expect(toolInput({ content: [{ type: 'text', text: '{}' }] }, 'respond')).toBeUndefined();
		expect(toolInput({}, 'respond')).toBeUndefined();
	});
});

describe('checks before sending', () => {
	const png = pngBytes(20, 10);

	it('reads each file, types it from its bytes and keeps its size and pixels', async () => {
		const items = [binaryItem({ photo: { bytes: png, fileName: 'p.jpg', mimeType: 'image/jpeg' }, scan: { bytes: pdfBytes() } })];
		const { ctx } = contextFor({}, items);
		await expect(planFiles(ctx, 0, ['photo', 'scan'], 0, 'messages', TEST_LIMIT)).resolves.toEqual([
			{ property: 'photo', kind: 'image', mimeType: 'image/png', fileName: 'p.jpg', size: png.length, width: 20, height: 10 },
			{ property: 'scan', kind: 'pdf', mimeType: 'application/pdf', fileName: 'scan.pdf', size: pdfBytes().length },
		]);
	});

	it('refuses a file far above every limit from what n8n recorded, without reading it', async () => {
		const item = binaryItem({ huge: { bytes: pngBytes() } });
		item.binary!.huge.bytes = 40 * MB;
		const { ctx, binaryReads } = contextFor({}, [item]);
		await expect(planFiles(ctx, 0, ['huge'], 0, 'chat', TEST_LIMIT)).rejects.toThrow('"Binary Attachments" field "huge" holds 40.0 MB; the largest file the chat-completions format takes is 32.0 MB (item 0)');
		expect(binaryReads.reads).toEqual([]);
	});

	it('takes an image of 20 MB in chat-completions, not one byte more', async () => {
		const exactly = Buffer.concat([pngBytes(), Buffer.alloc(20 * MB - pngBytes().length)]);
		const { ctx } = contextFor({}, [binaryItem({ a: { bytes: exactly }, b: { bytes: Buffer.concat([exactly, Buffer.alloc(1)]) } })]);
		await expect(planFiles(ctx, 0, ['a'], 0, 'chat', TEST_LIMIT)).resolves.toHaveLength(1);
		await expect(planFiles(ctx, 0, ['b'], 0, 'chat', TEST_LIMIT)).rejects.toThrow('"Binary Attachments" field "b" is an image of 20.0 MB; the chat-completions format takes images of at most 20.0 MB (item 0)');
	});

	it('counts the native limit of 5 MB on the Base64 text: 3.75 MB of file pass, a byte more does not', async () => {
		const largest = (5 * MB * 3) / 4;
		const exactly = Buffer.concat([pngBytes(), Buffer.alloc(largest - pngBytes().length)]);
		expect(base64Length(exactly.length)).toBe(5 * MB);
		const { ctx } = contextFor({}, [binaryItem({ a: { bytes: exactly }, b: { bytes: Buffer.concat([exactly, Buffer.alloc(1)]) } })]);
		await expect(planFiles(ctx, 0, ['a'], 0, 'messages', TEST_LIMIT)).resolves.toHaveLength(1);
		await expect(planFiles(ctx, 0, ['b'], 0, 'messages', TEST_LIMIT)).rejects.toThrow('counted on their Base64 text (item 0)');
	});

	it('refuses PDFs above 32 MB', async () => {
		const big = Buffer.concat([pdfBytes(), Buffer.alloc(32 * MB)]);
		const { ctx } = contextFor({}, [binaryItem({ doc: { bytes: big } })]);
		await expect(planFiles(ctx, 0, ['doc'], 0, 'messages', TEST_LIMIT)).rejects.toThrow(/"Binary Attachments" field "doc" (holds 32\.0 MB|is a PDF of 32\.0 MB)/);
	});

	it('takes 8000 px per side in the native format, and 100 images per request', async () => {
		const { ctx } = contextFor({}, [binaryItem({ edge: { bytes: pngHeader(8000, 8000) }, over: { bytes: pngHeader(8001, 10) } })]);
		await expect(planFiles(ctx, 0, ['edge'], 0, 'messages', TEST_LIMIT)).resolves.toHaveLength(1);
		await expect(planFiles(ctx, 0, ['over'], 0, 'messages', TEST_LIMIT)).rejects.toThrow('8001×10 px; the native messages format takes at most 8000 px per side');
		await expect(planFiles(ctx, 0, ['edge'], 100, 'messages', TEST_LIMIT)).rejects.toThrow('"Binary Attachments" and "Image URLs" add 101 images; the native messages format takes at most 100 per request (item 0)');
		await expect(planFiles(ctx, 0, [], 100, 'messages', TEST_LIMIT)).resolves.toEqual([]);
	});

	it('measures the request exactly as it will be sent', async () => {
		const items = [binaryItem({ photo: { bytes: png }, doc: { bytes: pdfBytes() } })];
		const { ctx } = contextFor(chatParameters({ binaryAttachments: 'photo,doc', urlAttachments: 'https://a.example/x.png' }), items);
		const { body, attachments } = await prepareChatItem(ctx, 0);
		const plan = attachments!;
		const real = Buffer.byteLength(JSON.stringify(await attachedBody(ctx, 0, body, plan)));
		// Each 3 bytes more of the first file are 4 more in the request: the check measures the real
		// size (to within that Base64 group) when a file that fills the request to its limit passes,
		// and one 3 bytes larger is refused.
		const added = 3 * Math.floor((32 * MB - real) / 4);
		const filled = (extra: number) => ({ ...plan, files: [{ ...plan.files[0], size: plan.files[0].size + added + extra }, ...plan.files.slice(1)] });
		expect(() => checkRequestSize(ctx, 0, body, filled(0))).not.toThrow();
		expect(() => checkRequestSize(ctx, 0, body, filled(3))).toThrow('a request may be at most 32.0 MB (item 0)');
	});

	it('prepares a Messages item: its files checked, the request measured', async () => {
		const { ctx } = contextFor(chatParameters({ binaryAttachments: 'photo', responseFormat: 'jsonObject' }), [binaryItem({ photo: { bytes: png } })]);
		await expect(prepareMessagesItem(ctx, 0)).resolves.toMatchObject({ attachments: { format: 'messages', files: [{ property: 'photo', mimeType: 'image/png' }] }, request: { json: { format: 'jsonObject' } } });
	});
});

describe('an item is read once', () => {
	/** The parameter names the check of item 0 reads, in order. */
	async function readsOf(prepare: (ctx: ReturnType<typeof contextFor>['ctx'], itemIndex: number) => Promise<unknown>) {
		const options = { binaryAttachments: 'photo', urlAttachments: 'https://a.example/x.png', responseFormat: 'jsonObject', extraBody: '{"seed": 7}', temperature: 0.5 };
		const { ctx } = contextFor(chatParameters(options), [binaryItem({ photo: { bytes: pngBytes() } })]);
		const names: string[] = [];
		const read = ctx.getNodeParameter.bind(ctx);
		ctx.getNodeParameter = ((name: string, ...rest: unknown[]) => {
			names.push(name);
			return (read as (...args: unknown[]) => unknown)(name, ...rest);
		}) as typeof ctx.getNodeParameter;
		await prepare(ctx, 0);
		return names;
	}

	it.each([
		['Gateway Chat', prepareChatItem],
		['Gateway Messages', prepareMessagesItem],
	])('%s reads each parameter once, the Options collection whole, before its files are planned', async (_node, prepare) => {
		expect(await readsOf(prepare)).toEqual(['model', 'options', 'messages.values', 'maxTokens', 'stream']);
	});
});

describe('JSON answers', () => {
	it('parses JSON, also inside one code fence', () => {
		expect(parseJsonText('{"a": 1}')).toEqual({ value: { a: 1 } });
		expect(parseJsonText('  ```json\n{"a": [1, 2]}\n```  ')).toEqual({ value: { a: [1, 2] } });
		expect(parseJsonText('```\n[true]\n```')).toEqual({ value: [true] });
		expect(parseJsonText('Here: {"a": 1}')).toBeUndefined();
		expect(parseJsonText('')).toBeUndefined();
	});

	function failure(text: string, cutOff = false): GatewayError {
		try {
			jsonReplyData({ what: 'The chat request', text, itemIndex: 2, json: { format: 'jsonObject' }, cutOff, fields: { text } });
		} catch (error) {
			return error as GatewayError;
		}
		throw new Error('expected an error');
	}

	it('turns an answer that is not JSON into a protocol error quoting its start, keeping the whole answer', () => {
		const long = `Sorry, ${'no JSON here '.repeat(40)}`;
		const error = failure(long);
		expect(error).toBeInstanceOf(GatewayError);
		expect(error.kind).toBe('protocol');
		expect(error.itemIndex).toBe(2);
		expect(error.fullMessage).toMatch(/^The chat request failed: the model's answer is not JSON: "Sorry, no JSON here .*…"$/);
		// Kept whole (the edge masks it, then shortens it); the message shows its start.
		expect(error.gatewayMessage).toBe(long.trim());
		expect(error.fullMessage.length).toBeLessThan(400);
		expect(error.fields.text).toBe(long);
		expect(error.hint).toMatch(/Response Format JSON Schema/);
	});

	it('says when the answer is empty, or was cut off at Max Tokens', () => {
		expect(failure('  ').fullMessage).toBe("The chat request failed: the model's answer is empty, not JSON");
		expect(failure('{"a": ', true).hint).toMatch(/cut off at Max Tokens/);
	});
});

describe('Gateway Image Generate options', () => {
	const read = (options: IDataObject) =>
		readImageRequest(contextFor({ model: { __rl: true, mode: 'list', value: 'img-image-2' }, prompt: 'a fox', n: 2, responseFormat: 'url', options }).ctx, 0);

	it('reads the four options and sends them; unset ones are not sent', () => {
		const request = read({ size: '1536 X 1024', quality: 'high', background: 'transparent', outputFormat: 'WebP' });
		expect(buildImageBody(request)).toEqual({ model: 'img-image-2', prompt: 'a fox', n: 2, response_format: 'url', size: '1536x1024', quality: 'high', background: 'transparent', output_format: 'webp' });
		expect(buildImageBody(read({ size: 'auto' }))).toEqual({ model: 'img-image-2', prompt: 'a fox', n: 2, response_format: 'url', size: 'auto' });
		expect(buildImageBody(read({}))).toEqual({ model: 'img-image-2', prompt: 'a fox', n: 2, response_format: 'url' });
	});

	it('lets Extra Body Fields set what the options leave unset, and the options win', () => {
		const request = { ...read({ quality: 'low' }), extraBody: { quality: 'high', size: '512x512' } };
		expect(buildImageBody(request)).toMatchObject({ quality: 'low', size: '512x512' });
	});

	it.each([
		[{ size: '1024' }, '"Size" must be auto or <width>x<height>, not "1024" (item 0)'],
		[{ size: '0x10' }, '"Size" must be auto or <width>x<height>'],
		[{ quality: 'ultra' }, '"Quality" must be one of auto, low, medium, high, not "ultra" (item 0)'],
		[{ background: 'green' }, '"Background" must be one of auto, transparent, opaque, not "green" (item 0)'],
		[{ outputFormat: 'gif' }, '"Output Format" must be one of png, jpeg, webp, not "gif" (item 0)'],
		[{ outputFormat: 'jpeg', background: 'transparent' }, '"Background" is Transparent, which JPEG cannot hold (item 0)'],
	])('refuses %j', (options, message) => {
		expect(() => read(options)).toThrow(message);
	});

	it('puts usage on the first image only, with usageCoversAllImages, also for one image', () => {
		const usage = { input_tokens: 3, output_tokens: 2112 };
		const request = read({});
		const two = planImages({ usage, data: [{ url: 'http://h/a.png' }, { url: 'http://h/b.png' }] }, request, 1);
		expect(two.map((image) => [image.json.usage, image.json.usageCoversAllImages])).toEqual([
			[usage, true],
			[undefined, undefined],
		]);
		expect(planImages({ usage, data: [{ b64_json: 'iVBO' }] }, request, 1)[0].json).toMatchObject({ usage, usageCoversAllImages: true });
		expect(planImages({ data: [{ url: 'http://h/a.png' }] }, request, 1)[0].json.usageCoversAllImages).toBeUndefined();
	});
});

describe('Gateway Video Generate first frame', () => {
	const fields = { model: 'video-2-0-fast-260128', prompt: 'p', seconds: '5', size: '1280x720' };
	const frame = async (options: IDataObject, items?: INodeExecutionData[]) => {
		const { ctx } = contextFor({ options }, items);
		return await readFirstFrame(ctx, 0, planFirstFrame(ctx, 0), TEST_LIMIT);
	};

	it('sends image only when set, over Extra Body Fields', () => {
		expect(buildSubmitBody({ ...fields, image: 'https://a.example/f.png' }, { image: 'other', last_frame: 'x' })).toEqual({ ...fields, image: 'https://a.example/f.png', last_frame: 'x' });
		expect(buildSubmitBody(fields, { image: 'from-extra' })).toEqual({ ...fields, image: 'from-extra' });
		expect(buildSubmitBody(fields)).toEqual(fields);
	});

	it('takes an http(s) link or an image data URL as given', async () => {
		await expect(frame({ imageUrl: ' https://a.example/f.png ' })).resolves.toBe('https://a.example/f.png');
		await expect(frame({ imageUrl: 'data:image/png;base64,iVBORw0KGgo=' })).resolves.toBe('data:image/png;base64,iVBORw0KGgo=');
		await expect(frame({})).resolves.toBeUndefined();
		expect(checkImageUrl('data:text/plain;base64,aGk=')).toBe(false);
	});

	it('refuses a data URL whose data is not the image it declares, naming the field and the item', async () => {
		const textUrl = `data:image/png;base64,${Buffer.from('sk-pasted-here-by-mistake').toString('base64')}`;
		await expect(frame({ imageUrl: textUrl })).rejects.toThrow('"Image URL" is a data URL of image/png, but its data is text, not an image (item 0)');
		await expect(frame({ imageUrl: `data:image/webp;base64,${pngBytes().toString('base64')}` })).rejects.toThrow(
			'"Image URL" is a data URL of image/webp, but its data is a PNG image (image/png) (item 0)',
		);
	});

	it('turns a binary image into a data URL typed from its bytes', async () => {
		const webp = sampleWebp();
		await expect(frame({ imageBinaryProperty: 'data' }, [binaryItem({ data: { bytes: webp, mimeType: 'image/png' } })])).resolves.toEqual(new Base64Text(webp, 'data:image/webp;base64,'));
	});

	it('refuses both options, a missing field, a file that is not an image and one above 10 MB', async () => {
		await expect(frame({ imageUrl: 'https://a.example/f.png', imageBinaryProperty: 'data' })).rejects.toThrow('"Image URL" and "Image From Binary Field" are both set');
		await expect(frame({ imageBinaryProperty: 'data' }, [binaryItem({ other: { bytes: pngBytes() } })])).rejects.toThrow('it has: other');
		await expect(frame({ imageBinaryProperty: 'data' }, [binaryItem({ data: { bytes: sampleMp4() } })])).rejects.toThrow('"Image From Binary Field" field "data" holds no image');
		const big = Buffer.concat([pngBytes(), Buffer.alloc(10 * MB)]);
		await expect(frame({ imageBinaryProperty: 'data' }, [binaryItem({ data: { bytes: big } })])).rejects.toThrow('is an image of 10.0 MB; at most 10.0 MB');
		await expect(frame({ imageUrl: { url: 'x' } })).rejects.toThrow('"Image URL" must be text');
	});
});

describe('the panels', () => {
	const optionsOf = (properties: INodeProperties[]) => (properties.find((p) => p.name === 'options')?.options ?? []) as INodeProperties[];
	const nodes = { chat: new GatewayChat(), messages: new GatewayMessages(), image: new GatewayImageGenerate(), video: new GatewayVideoGenerate() };

	it.each(Object.entries(nodes))('%s lists its options in alphabetical order, as n8n shows them', (_name, node) => {
		const names = optionsOf(node.description.properties).map((option) => option.displayName);
		expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b)));
	});

	it('Chat and Messages share the attachment and JSON options, and JSON Schema shows only for Response Format JSON Schema', () => {
		for (const node of [nodes.chat, nodes.messages]) {
			const byName = Object.fromEntries(optionsOf(node.description.properties).map((option) => [option.name, option]));
			expect(byName.binaryAttachments).toMatchObject({ type: 'string', default: '', placeholder: 'e.g. data, invoice' });
			expect(byName.urlAttachments).toMatchObject({ type: 'string', default: '' });
			expect(byName.responseFormat).toMatchObject({ type: 'options', default: 'text' });
			expect((byName.responseFormat.options as Array<{ value: string }>).map((option) => option.value).sort()).toEqual(['jsonObject', 'jsonSchema', 'text']);
			expect(byName.jsonSchema).toMatchObject({ type: 'json', displayOptions: { show: { responseFormat: ['jsonSchema'] } } });
			expect(JSON.parse(byName.jsonSchema.default as string)).toMatchObject({ type: 'object' });
		}
	});

	it('Image Generate and Video Generate name the gateway field of each new option', () => {
		const image = Object.fromEntries(optionsOf(nodes.image.description.properties).map((option) => [option.name, option.description]));
		expect(image).toMatchObject({ size: expect.stringContaining('`size`'), quality: expect.stringContaining('`quality`'), background: expect.stringContaining('`background`'), outputFormat: expect.stringContaining('`output_format`') });
		const video = Object.fromEntries(optionsOf(nodes.video.description.properties).map((option) => [option.name, option.description]));
		expect(video).toMatchObject({ imageUrl: expect.stringContaining('`image`'), imageBinaryProperty: expect.stringContaining('`image`') });
	});
});
