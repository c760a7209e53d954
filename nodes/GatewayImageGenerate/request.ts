/**
 * One item's image request: read and checked before anything is sent, then turned into the
 * body of POST /v1/images/generations.
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { requestBody } from '../shared/body';
import { fieldError, readBinaryPropertyName, readExtraBody, readInteger, readModelId, requireText } from '../shared/validate';
import { IMAGE_BODY_FIELDS, MAX_IMAGES_PER_REQUEST } from './description';

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
	extraBody: IDataObject;
}

/** The request body: the extra fields first, so the node's own fields take precedence. */
export function buildImageBody(request: ImageRequest): IDataObject {
	const fields: IDataObject = {};
	for (const [parameter, field] of Object.entries(IMAGE_BODY_FIELDS)) fields[field] = request[parameter as keyof typeof IMAGE_BODY_FIELDS];
	return requestBody(request.extraBody, fields);
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
	return {
		model,
		prompt,
		n,
		responseFormat,
		downloadImage: ctx.getNodeParameter('options.downloadImage', itemIndex, true) !== false,
		binaryPropertyName: readBinaryPropertyName(ctx, itemIndex),
		extraBody: readExtraBody(ctx, itemIndex),
	};
}
