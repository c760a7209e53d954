'use strict';
// Synchronous image generation. `url` answers link to the file host (another origin);
// `b64_json` answers carry the bytes inline. All images are real, decodable files.
const { sendJson } = require('./http');
const { invalidRequest } = require('./errors');
const { requireModel } = require('./models');
const { has, rateLimitOnce } = require('./magic');
const { IMAGE_FORMATS, imageBytes } = require('./media');
const { countTokens } = require('./reply');
const { randomHex, unixNow } = require('./util');
const { charge, imageQuota } = require('./newapi');

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
	const body = ctx.json();
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

module.exports = { generate };
