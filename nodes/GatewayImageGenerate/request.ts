/**
 * One item's image request: read and checked before anything is sent, then turned into the
 * body of POST /v1/images/generations.
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { requestBody } from '../shared/items/body';
import { fieldError, readBinaryPropertyName, readExtraBody, readInteger, readModelId, requireText } from '../shared/items/validate';
import { IMAGE_BACKGROUNDS, IMAGE_BODY_FIELDS, IMAGE_OUTPUT_FORMATS, IMAGE_QUALITIES, MAX_IMAGES_PER_REQUEST } from './description';

export type ResponseFormat = 'url' | 'b64_json';

export const RESPONSE_FORMATS: readonly ResponseFormat[] = ['url', 'b64_json'];

export interface ImageRequest {
	model: string;
	prompt: string;
	n: number;
	responseFormat: ResponseFormat;
	/** Download `url` images into binary data (b64_json images are always decoded). */
	downloadImage: boolean;
	binaryPropertyName: string;
	/** Options → Size, Quality, Background, Output Format: undefined (not sent) unless added. */
	size?: string;
	quality?: string;
	background?: string;
	outputFormat?: string;
	extraBody: IDataObject;
}

/** The request body: the extra fields first, so the node's own fields take precedence. */
export function buildImageBody(request: ImageRequest): IDataObject {
	const fields: IDataObject = {};
	for (const [parameter, field] of Object.entries(IMAGE_BODY_FIELDS)) fields[field] = request[parameter as keyof typeof IMAGE_BODY_FIELDS];
	// Unset options are undefined here, and requestBody leaves them out.
	return requestBody(request.extraBody, fields);
}

/** An option with a fixed set of values; undefined when it was not added. */
function readChoice(ctx: IExecuteFunctions, itemIndex: number, value: unknown, field: string, allowed: readonly string[]): string | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	const text = typeof value === 'string' ? value.trim().toLowerCase() : '';
	if (!allowed.includes(text)) {
		throw fieldError(ctx, itemIndex, field, `must be one of ${allowed.join(', ')}, not ${JSON.stringify(value).slice(0, 40)}`);
	}
	return text;
}

/** Options → Size: `auto` or `<width>x<height>`; undefined when it was not added. */
function readSize(ctx: IExecuteFunctions, itemIndex: number, value: unknown): string | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	const text = typeof value === 'string' ? value.trim() : '';
	if (text.toLowerCase() === 'auto') return 'auto';
	const match = /^(\d{1,5})\s*[xX×]\s*(\d{1,5})$/.exec(text);
	if (!match || Number(match[1]) < 1 || Number(match[2]) < 1) {
		throw fieldError(ctx, itemIndex, 'Size', `must be auto or <width>x<height>, not ${JSON.stringify(value).slice(0, 40)}`, 'For example 1024x1024, 1536x1024 or 1024x1536.');
	}
	return `${Number(match[1])}x${Number(match[2])}`;
}

export function readImageRequest(ctx: IExecuteFunctions, itemIndex: number): ImageRequest {
	const model = readModelId(ctx, itemIndex);
	const prompt = requireText(ctx, itemIndex, 'prompt', 'Prompt', 'Describe the image to generate.');
	const n = readInteger(ctx, itemIndex, ctx.getNodeParameter('n', itemIndex, 1), 'Number of Images', {
		min: 1,
		max: MAX_IMAGES_PER_REQUEST,
	});
	const responseFormat = String(ctx.getNodeParameter('responseFormat', itemIndex, 'url') ?? '').trim() as ResponseFormat;
	if (!RESPONSE_FORMATS.includes(responseFormat)) {
		throw fieldError(ctx, itemIndex, 'Response Format', `must be "url" or "b64_json", not "${String(responseFormat).slice(0, 40)}"`);
	}
	const options = ctx.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const background = readChoice(ctx, itemIndex, options.background, 'Background', IMAGE_BACKGROUNDS);
	const outputFormat = readChoice(ctx, itemIndex, options.outputFormat, 'Output Format', IMAGE_OUTPUT_FORMATS);
	if (background === 'transparent' && outputFormat === 'jpeg') {
		throw fieldError(ctx, itemIndex, 'Background', 'is Transparent, which JPEG cannot hold', 'Set Output Format to PNG or WebP, or the background to Opaque.');
	}
	return {
		model,
		prompt,
		n,
		responseFormat,
		downloadImage: ctx.getNodeParameter('options.downloadImage', itemIndex, true) !== false,
		binaryPropertyName: readBinaryPropertyName(ctx, itemIndex),
		size: readSize(ctx, itemIndex, options.size),
		quality: readChoice(ctx, itemIndex, options.quality, 'Quality', IMAGE_QUALITIES),
		background,
		outputFormat,
		extraBody: readExtraBody(ctx, itemIndex),
	};
}
