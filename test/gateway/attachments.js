'use strict';
// Files and links in chat requests, checked as the real services check them and described, so
// that an answer tells the test exactly what arrived.
//  - chat-completions parts: `image_url` (a Base64 data URL, or an http(s) link) and `file`
//    (`file_data` a data URL of a PDF, with a `filename`);
//  - native message blocks: `image` (a `base64` source, or a `url` source) and `document` (a
//    `base64` PDF source);
//  - the video submit's `image` (an http(s) link or a data URL of an image).
// Base64 is decoded and the bytes typed from their first bytes: a media type that does not match
// the data, Base64 that does not decode, or a "PDF" that is none is a 400, worded like the real
// API. Each file is described as { kind, mimeType, bytes, sha256 } (sha256 of the decoded bytes,
// hex), each link as { kind: 'link', url }, in the order they came.
const crypto = require('node:crypto');
const { invalidRequest } = require('./errors');

const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
/** The native format's limit per image, counted on the Base64 text. */
const NATIVE_IMAGE_BASE64_LIMIT = 5 * 1024 * 1024;

/** The type of the bytes: one of the image types, application/pdf, or null. */
function sniff(bytes) {
	const ascii = (a, b) => bytes.subarray(a, b).toString('latin1');
	if (bytes.length >= 8 && bytes.readUInt32BE(0) === 0x89504e47 && bytes.readUInt32BE(4) === 0x0d0a1a0a) return 'image/png';
	if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
	if (bytes.length >= 6 && /^GIF8[79]a$/.test(ascii(0, 6))) return 'image/gif';
	if (bytes.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
	if (ascii(0, 1024).includes('%PDF-')) return 'application/pdf';
	return null;
}

const sha256 = (bytes) => crypto.createHash('sha256').update(bytes).digest('hex');

function decodeBase64(ctx, text, where) {
	if (typeof text !== 'string' || text.length === 0 || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
		throw invalidRequest(ctx, `${where}: the data is not valid base64`, { param: where, code: 'invalid_base64' });
	}
	return Buffer.from(text, 'base64');
}

/** Decodes a file, checks that it is what its declared type says, and describes it. */
function checkedFile(ctx, where, declared, base64, kind) {
	const bytes = decodeBase64(ctx, base64, where);
	const actual = sniff(bytes);
	if (kind === 'image' && !IMAGE_TYPES.includes(actual)) {
		throw invalidRequest(ctx, `${where}: the data is not a supported image (png, jpeg, gif, webp)`, { param: where, code: 'invalid_image' });
	}
	if (kind === 'pdf' && actual !== 'application/pdf') {
		throw invalidRequest(ctx, `${where}: the data is not a PDF`, { param: where, code: 'invalid_file' });
	}
	if (declared !== actual) {
		throw invalidRequest(ctx, `${where}: Image does not match the provided media type ${declared} (the data is ${actual})`, { param: where, code: 'invalid_media_type' });
	}
	return { kind, mimeType: actual, bytes: bytes.length, sha256: sha256(bytes) };
}

const DATA_URL = /^data:([^;,]+);base64,([\s\S]*)$/;
const isLink = (value) => typeof value === 'string' && /^https?:\/\/[^\s/]+/i.test(value);

function dataUrlFile(ctx, where, url, kind) {
	const match = DATA_URL.exec(url);
	if (!match) throw invalidRequest(ctx, `${where}: expected a data URL (data:<type>;base64,<data>)`, { param: where });
	return checkedFile(ctx, where, match[1].toLowerCase(), match[2], kind);
}

/** One chat-completions content part: null for text, a description for a file or link, else a 400. */
function chatPart(ctx, part, where) {
	switch (part?.type) {
		case 'text':
			if (typeof part.text !== 'string') throw invalidRequest(ctx, `${where}.text must be a string`, { param: `${where}.text` });
			return null;
		case 'image_url': {
			const url = part.image_url?.url;
			if (isLink(url)) return { kind: 'link', url };
			if (typeof url === 'string' && url.startsWith('data:')) return dataUrlFile(ctx, `${where}.image_url.url`, url, 'image');
			throw invalidRequest(ctx, `${where}.image_url.url must be an http(s) URL or a base64 data URL`, { param: `${where}.image_url.url` });
		}
		case 'file': {
			const file = part.file ?? {};
			if (typeof file.filename !== 'string' || file.filename === '') {
				throw invalidRequest(ctx, `${where}.file.filename is required with file_data`, { param: `${where}.file.filename` });
			}
			return { ...dataUrlFile(ctx, `${where}.file.file_data`, file.file_data, 'pdf'), filename: file.filename };
		}
		default:
			throw invalidRequest(ctx, `${where}.type must be one of text, image_url, file`, { param: `${where}.type` });
	}
}

/** One native content block: null for text and tool blocks, a description for a file or link, else a 400. */
function nativeBlock(ctx, block, where) {
	const source = block?.source ?? {};
	switch (block?.type) {
		case 'text':
		case 'tool_use':
		case 'tool_result':
		case 'thinking':
		case 'redacted_thinking':
			return null;
		case 'image':
			if (source.type === 'url') {
				if (!isLink(source.url)) throw invalidRequest(ctx, `${where}.source.url: must be an http(s) URL`);
				return { kind: 'link', url: source.url };
			}
			if (source.type !== 'base64') throw invalidRequest(ctx, `${where}.source.type: Input should be 'base64' or 'url'`);
			if (!IMAGE_TYPES.includes(source.media_type)) {
				throw invalidRequest(ctx, `${where}.source.media_type: Input should be ${IMAGE_TYPES.map((t) => `'${t}'`).join(', ')}`);
			}
			if (typeof source.data === 'string' && source.data.length > NATIVE_IMAGE_BASE64_LIMIT) {
				throw invalidRequest(ctx, `${where}.source.base64: image exceeds 5 MB maximum: ${source.data.length} bytes > ${NATIVE_IMAGE_BASE64_LIMIT} bytes`);
			}
			return checkedFile(ctx, `${where}.source.base64`, source.media_type, source.data, 'image');
		case 'document':
			if (source.type === 'url') {
				if (!isLink(source.url)) throw invalidRequest(ctx, `${where}.source.url: must be an http(s) URL`);
				return { kind: 'link', url: source.url };
			}
			if (source.type !== 'base64' || source.media_type !== 'application/pdf') {
				throw invalidRequest(ctx, `${where}.source: a base64 document must have media_type 'application/pdf'`);
			}
			return checkedFile(ctx, `${where}.source.base64`, source.media_type, source.data, 'pdf');
		default:
			throw invalidRequest(ctx, `${where}.type: Input tag '${String(block?.type)}' found using 'type' does not match any of the expected tags`);
	}
}

/**
 * Checks every part of every message and returns the descriptions of the files and links in the
 * last user message (what the answer talks about). `format` is 'chat' or 'native'.
 */
function messageAttachments(ctx, messages, format) {
	let found = [];
	messages.forEach((message, i) => {
		if (!Array.isArray(message?.content)) return;
		const described = message.content
			.map((part, j) => (format === 'chat' ? chatPart(ctx, part, `messages[${i}].content[${j}]`) : nativeBlock(ctx, part, `messages.${i}.content.${j}`)))
			.filter(Boolean);
		if (message.role === 'user') found = described;
	});
	return found;
}

/** The video submit's `image`: a link, or a data URL of an image; undefined when absent. */
function videoImage(ctx, image) {
	if (image === undefined) return undefined;
	if (isLink(image)) return { kind: 'link', url: image };
	if (typeof image === 'string' && image.startsWith('data:')) return dataUrlFile(ctx, 'image', image, 'image');
	throw invalidRequest(ctx, 'image must be an http(s) URL or a base64 data URL of an image', { param: 'image', code: 'invalid_value' });
}

/** "[attached: image/png 358 B sha256 1a2b3c4d5e6f, link https://…]" for the echoed answer; '' for none. */
function attachmentSummary(attachments) {
	if (!attachments.length) return '';
	const each = attachments.map((a) => (a.kind === 'link' ? `link ${a.url}` : `${a.mimeType} ${a.bytes} B sha256 ${a.sha256.slice(0, 12)}`));
	return `[attached: ${each.join(', ')}]`;
}

module.exports = { sniff, messageAttachments, videoImage, attachmentSummary, NATIVE_IMAGE_BASE64_LIMIT };
