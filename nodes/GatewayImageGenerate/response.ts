/**
 * The answer of POST /v1/images/generations (interface document (docs/gateway-interface.md) 2.2) -> what each output item
 * gets: its JSON, and where its file comes from (a link to download, or inline Base64).
 * Pure, so every decision here is unit-tested.
 */
import type { IDataObject } from 'n8n-workflow';

import { UNKNOWN_FILE } from '../shared/files/binary';
import type { FileType } from '../shared/files/binary';
import { roundMoney } from '../shared/account/balance';
import { IMAGE_PRICE_USD, findModel } from '../shared/panel/models';
import type { ImageRequest } from './request';

export interface ImageAnswer extends IDataObject {
	data?: IDataObject[];
}

export interface PlannedImage {
	index: number;
	json: IDataObject;
	/** A link to download into binary data now. */
	download?: string;
	/** Inline image data: the reader's placeholder for it, or Base64 (InlineImages.take decodes either). */
	base64?: string;
	/** The file name without extension (the extension comes from the bytes). */
	baseName: string;
}

/** What the answer lacks ("images (…)"), or undefined when every element carries an image. */
export function imageAnswerProblem(answer: unknown): string | undefined {
	const data = (answer as ImageAnswer | undefined)?.data;
	if (!Array.isArray(data) || data.length === 0) return 'images (no "data" list)';
	const bad = data.findIndex((entry) => !isNonEmptyString(entry?.url) && !isNonEmptyString(entry?.b64_json));
	if (bad !== -1) return `"url" or "b64_json" for image ${bad}`;
	return undefined;
}

const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';

/** About 0.04 USD per image (catalogue price), times the group's discount multiplier. */
export function estimateImageCostUsd(model: string, groupMultiplier: number): number {
	const price = findModel(model)?.pricePerImageUsd ?? IMAGE_PRICE_USD;
	return roundMoney(price * groupMultiplier);
}

/** `https://cdn/x/img_42.png?sig=…` -> `img_42`; undefined when the link has no usable name. */
export function linkBaseName(link: string): string | undefined {
	try {
		const last = new URL(link).pathname.split('/').pop() ?? '';
		const name = decodeURIComponent(last).replace(/\.[A-Za-z0-9]{1,5}$/, '');
		return name.trim() === '' ? undefined : name;
	} catch {
		return undefined;
	}
}

// Per-image fields the node sets itself, or that belong in binary data rather than JSON.
const OWN_IMAGE_FIELDS = new Set(['b64_json', 'url', 'index', 'model']);
/** Says, on the first image, that its `usage` is the whole request's. */
export const USAGE_FLAG = 'usageCoversAllImages';
// Answer fields that are not about each image, or are set by the node (`usage` goes on the first image only).
const OWN_ANSWER_FIELDS = new Set(['data', 'model', 'index', 'url', 'estimatedCostUsd', 'usage', USAGE_FLAG]);

/**
 * One entry per image: `model`, `index`, `url` (when there was one), what else the gateway said
 * about the image (`revised_prompt` …) and the answer (`created`, `output_format` …), and the
 * estimate. The answer's `usage` counts the whole request: it is on the first image only, with
 * `usageCoversAllImages: true`, so a sum over the items counts it once.
 */
export function planImages(answer: ImageAnswer, request: ImageRequest, groupMultiplier: number): PlannedImage[] {
	const model = isNonEmptyString(answer.model) ? answer.model : request.model;
	const estimatedCostUsd = estimateImageCostUsd(model, groupMultiplier);
	const answerFields = Object.entries(answer).filter(([key]) => !OWN_ANSWER_FIELDS.has(key));
	return (answer.data ?? []).map((entry, index) => {
		const url = isNonEmptyString(entry.url) ? entry.url : undefined;
		const json: IDataObject = { model, index };
		if (url) json.url = url;
		for (const [key, value] of Object.entries(entry)) if (!OWN_IMAGE_FIELDS.has(key)) json[key] = value;
		for (const [key, value] of answerFields) if (!(key in json)) json[key] = value;
		if (index === 0 && answer.usage !== undefined && answer.usage !== null) {
			json.usage = answer.usage;
			json[USAGE_FLAG] = true;
		}
		json.estimatedCostUsd = estimatedCostUsd;

		const planned: PlannedImage = { index, json, baseName: (url && linkBaseName(url)) || `image-${index}` };
		if (isNonEmptyString(entry.b64_json)) planned.base64 = entry.b64_json;
		else if (url && request.downloadImage) planned.download = url;
		return planned;
	});
}

/** When the bytes are of no type we know, the host's own image/* type is the next best guess. */
export function fileTypeFromHeader(contentType: unknown): FileType {
	const match = /^image\/([a-z0-9.+-]+)/i.exec(String(contentType ?? '').trim());
	if (!match) return UNKNOWN_FILE;
	const subtype = match[1].toLowerCase();
	return { mimeType: `image/${subtype}`, extension: subtype === 'jpeg' ? 'jpg' : subtype.replace(/\+.*$/, '') };
}
