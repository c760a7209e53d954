'use strict';
// Synchronous image generation and edits. `url` answers link to the file host (another origin);
// `b64_json` answers carry the bytes inline. All images are real, decodable files. An edit is a
// multipart/form-data request (multipart.js reads it for real), answered as a generation is.
const crypto = require('node:crypto');
const { sendJson } = require('./http');
const { invalidRequest, relayError } = require('./errors');
const { parseMultipart, MultipartError } = require('./multipart');
const { requireModel } = require('./models');
const { has, rateLimitOnce } = require('./magic');
const { IMAGE_FORMATS, imageBytes } = require('./media');
const { countTokens } = require('./reply');
const { randomHex, unixNow } = require('./util');
const { charge, imageQuota, isNewApi } = require('./newapi');

const MAX_N = 10;
const OUTPUT_TOKENS_PER_IMAGE = 1056;

function validate(ctx, body) {
	requireModel(ctx, body.model, 'image');
	if (typeof body.prompt !== 'string' || body.prompt.trim() === '') {
		throw invalidRequest(ctx, 'prompt is required and must be a non-empty string', { param: 'prompt' });
	}
	const n = body.n ?? 1;
	if (!Number.isInteger(n) || n < 1 || n > MAX_N) {
		throw invalidRequest(ctx, `n must be an integer between 1 and ${MAX_N}, got ${JSON.stringify(body.n)}`, {
			param: 'n',
			code: 'invalid_value',
		});
	}
	const responseFormat = body.response_format ?? 'url';
	if (responseFormat !== 'url' && responseFormat !== 'b64_json') {
		throw invalidRequest(ctx, `response_format must be 'url' or 'b64_json', got ${JSON.stringify(responseFormat)}`, {
			param: 'response_format',
			code: 'invalid_value',
		});
	}
	const outputFormat = body.output_format ?? 'png';
	if (!Object.hasOwn(IMAGE_FORMATS, outputFormat)) {
		throw invalidRequest(ctx, `output_format must be one of png, jpeg, webp, got ${JSON.stringify(outputFormat)}`, {
			param: 'output_format',
			code: 'invalid_value',
		});
	}
	const options = imageOptionsOf(ctx, body, outputFormat);
	return { n, responseFormat, outputFormat, options };
}

const QUALITIES = ['auto', 'low', 'medium', 'high'];
const BACKGROUNDS = ['auto', 'transparent', 'opaque'];

/** `size`, `quality` and `background`, checked as image models check them; echoed in the answer. */
function imageOptionsOf(ctx, body, outputFormat) {
	const options = {};
	if (body.size !== undefined) {
		if (typeof body.size !== 'string' || !/^(auto|\d{1,5}x\d{1,5})$/.test(body.size)) {
			throw invalidRequest(ctx, `size must be 'auto' or '<width>x<height>', got ${JSON.stringify(body.size)}`, { param: 'size', code: 'invalid_value' });
		}
		options.size = body.size;
	}
	if (body.quality !== undefined) {
		if (!QUALITIES.includes(body.quality)) {
			throw invalidRequest(ctx, `quality must be one of ${QUALITIES.join(', ')}, got ${JSON.stringify(body.quality)}`, { param: 'quality', code: 'invalid_value' });
		}
		options.quality = body.quality;
	}
	if (body.background !== undefined) {
		if (!BACKGROUNDS.includes(body.background)) {
			throw invalidRequest(ctx, `background must be one of ${BACKGROUNDS.join(', ')}, got ${JSON.stringify(body.background)}`, { param: 'background', code: 'invalid_value' });
		}
		if (body.background === 'transparent' && outputFormat === 'jpeg') {
			throw invalidRequest(ctx, 'Transparent background is not supported for output_format jpeg; use png or webp.', { param: 'background', code: 'invalid_value' });
		}
		options.background = body.background;
	}
	return options;
}

async function generate(ctx) {
	answerImages(ctx, ctx.json());
}

/** Answers an image request (a generation's JSON body, or an edit's text fields) with its images. */
function answerImages(ctx, body) {
	const { n, responseFormat, outputFormat, options } = validate(ctx, body);
	if (rateLimitOnce(ctx, body.prompt)) return;
	charge(ctx, imageQuota(ctx, n));
	const expired = has(body.prompt, 'expired');
	const revisedPrompt = `A detailed image of: ${body.prompt}`;
	const data = Array.from({ length: n }, (_, index) => {
		if (responseFormat === 'b64_json') {
			return { b64_json: imageBytes(outputFormat, index).toString('base64'), revised_prompt: revisedPrompt };
		}
		const id = `img_${randomHex(12)}`;
		ctx.gw.images.set(id, { format: outputFormat, index, expired });
		const url = `${ctx.gw.fileBaseUrl}/files/images/${id}.${IMAGE_FORMATS[outputFormat].ext}`;
		return { url, revised_prompt: revisedPrompt };
	});
	const inputTokens = countTokens(body.prompt);
	sendJson(ctx.res, 200, {
		created: unixNow(),
		data,
		output_format: outputFormat,
		...options,
		usage: {
			input_tokens: inputTokens,
			output_tokens: OUTPUT_TOKENS_PER_IMAGE * n,
			total_tokens: inputTokens + OUTPUT_TOKENS_PER_IMAGE * n,
			input_tokens_details: { text_tokens: inputTokens, image_tokens: 0 },
		},
	});
}

// ---------- edits ----------

/** What OpenAI's edit endpoint takes: up to 16 images (PNG, JPEG, WebP), a PNG mask. */
const MAX_EDIT_IMAGES = 16;
const EDIT_TYPES = { 'image/png': ['png'], 'image/jpeg': ['jpg', 'jpeg'], 'image/webp': ['webp'] };

/** The type of an image from its first bytes, or undefined. */
function sniffImage(bytes) {
	if (bytes.length >= 8 && bytes.readUInt32BE(0) === 0x89504e47 && bytes.readUInt32BE(4) === 0x0d0a1a0a) return 'image/png';
	if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
	if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
	return undefined;
}

/** The text fields an edit takes, as the JSON body of a generation would hold them. */
const EDIT_FIELDS = ['model', 'prompt', 'n', 'response_format', 'size', 'quality', 'background', 'output_format'];

/**
 * Reads the form. new-api's distributor reads the model from the form first: a form it cannot read
 * has no model for it, so the answer is its 400 for a missing model (seen on a real build); OpenAI
 * answers 400 naming the body.
 */
function readEditForm(ctx) {
	try {
		return parseMultipart(ctx.req.headers['content-type'], ctx.rawBytes);
	} catch (error) {
		if (!(error instanceof MultipartError)) throw error;
		if (isNewApi(ctx.gw)) throw relayError(ctx, 400, 'Model name not specified, model name cannot be empty', { nativeType: 'new_api_error', withRequestId: true });
		throw invalidRequest(ctx, `Invalid multipart/form-data body: ${error.message}`, { code: 'invalid_multipart' });
	}
}

/** Each file checked as the endpoint checks it: an image whose bytes, declared type and file name agree. */
function checkEditFile(ctx, file, param, allowed) {
	const sniffed = sniffImage(file.bytes);
	if (!sniffed || !allowed.includes(sniffed)) {
		throw invalidRequest(ctx, `Invalid file '${param}': the bytes are no ${allowed.map((type) => type.slice(6).toUpperCase()).join(', ')} image (${file.bytes.length} bytes).`, { param, code: 'invalid_image_file' });
	}
	if (file.contentType !== sniffed) {
		throw invalidRequest(ctx, `Invalid file '${param}': its Content-Type ${file.contentType} is not its bytes' type ${sniffed}.`, { param, code: 'invalid_image_format' });
	}
	// new-api forwards each file with the type its file name's extension says (detectImageMimeType).
	const extension = /\.([A-Za-z0-9]+)$/.exec(file.fileName)?.[1]?.toLowerCase();
	if (!EDIT_TYPES[sniffed].includes(extension)) {
		throw invalidRequest(ctx, `Invalid file '${param}': the file name ${JSON.stringify(file.fileName)} does not end in .${EDIT_TYPES[sniffed][0]}.`, { param, code: 'invalid_image_format' });
	}
	return { name: param, fileName: file.fileName, contentType: file.contentType, size: file.bytes.length, sha256: crypto.createHash('sha256').update(file.bytes).digest('hex') };
}

/**
 * POST /v1/images/edits: the images as `image` (one) or `image[]` (several; new-api reads either and
 * forwards several as `image[]`), an optional PNG `mask`, and the text fields of a generation.
 */
async function edit(ctx) {
	const form = readEditForm(ctx);
	const images = [...(form.files.image ?? []), ...(form.files['image[]'] ?? [])];
	// new-api refuses it while converting the request for its channel (relay/channel/openai/adaptor.go): a 500.
	if (images.length === 0 && isNewApi(ctx.gw)) throw relayError(ctx, 500, 'image is required', { code: 'convert_request_failed', nativeType: 'new_api_error', withRequestId: true, layer: 'relay' });
	if (images.length === 0) throw invalidRequest(ctx, 'image is required', { param: 'image', code: 'missing_required_parameter' });
	if (images.length > MAX_EDIT_IMAGES) throw invalidRequest(ctx, `Too many images: ${images.length}; at most ${MAX_EDIT_IMAGES}.`, { param: 'image', code: 'invalid_value' });
	const name = form.files.image ? 'image' : 'image[]';
	const files = images.map((file) => checkEditFile(ctx, file, name, Object.keys(EDIT_TYPES)));
	const masks = form.files.mask ?? [];
	if (masks.length > 1) throw invalidRequest(ctx, 'Only one mask may be given.', { param: 'mask', code: 'invalid_value' });
	for (const mask of masks) files.push(checkEditFile(ctx, mask, 'mask', ['image/png']));
	// Every text part is logged; those of a generation are read as its JSON fields.
	const fields = Object.fromEntries(Object.entries(form.fields).map(([name, values]) => [name, values[0]]));
	const body = {};
	for (const field of EDIT_FIELDS) if (fields[field]) body[field] = fields[field];
	if (body.n !== undefined) {
		if (!/^\d{1,3}$/.test(body.n)) throw invalidRequest(ctx, `n must be an integer, got ${JSON.stringify(body.n)}`, { param: 'n', code: 'invalid_value' });
		body.n = Number(body.n);
	}
	ctx.entry.form = { fields: { ...fields, ...body }, files };
	answerImages(ctx, body);
}

module.exports = { generate, edit };
