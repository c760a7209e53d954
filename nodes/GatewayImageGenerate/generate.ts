/**
 * POST /v1/images/generations for each item, then one output item per image with the file in
 * binary data: inline Base64 decoded, links downloaded at once (they are temporary) as streams.
 */
import type { IBinaryData, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { bufferToBinary, downloadToBinary } from '../shared/files/binary';
import { errorItem } from '../shared/failures/edge';
import { GatewayError, missingResultError, withFields } from '../shared/failures/errors';
import { runPerItem, settleConcurrent } from '../shared/items/itemRunner';
import type { GatewayClient } from '../shared/wire/transport';
import { buildImageBody, readImageRequest } from './request';
import type { ImageRequest } from './request';
import { UNKNOWN_FILE, USAGE_FLAG, fileTypeFromHeader, imageAnswerProblem, planImages } from './response';
import type { ImageAnswer, PlannedImage } from './response';

/** Links of one answer fetched side by side: they are temporary, but one item's batch is small. */
const DOWNLOADS_AT_ONCE = 4;
const GENERATION_DEADLINE_MS = 300_000;
/** The item's deadline (the request with its retries and waits), as messages name it. */
const GENERATION_LIMIT = `the ${GENERATION_DEADLINE_MS / 1000} s limit for generating images`;

async function imageFile(ctx: IExecuteFunctions, client: GatewayClient, image: PlannedImage, itemIndex: number): Promise<IBinaryData | undefined> {
	const what = `Downloading image ${image.index} of item ${itemIndex}`;
	if (image.base64 !== undefined) {
		const bytes = Buffer.from(image.base64, 'base64');
		if (bytes.length === 0) throw new GatewayError({ kind: 'protocol', headline: `The gateway sent image ${image.index} as empty Base64 data`, itemIndex });
		return await bufferToBinary(ctx, bytes, { baseName: image.baseName, fallback: UNKNOWN_FILE });
	}
	if (image.download === undefined) return undefined;
	return await downloadToBinary(ctx, client, {
		link: image.download,
		what,
		expected: 'an image',
		mediaPrefix: 'image/',
		downloadOption: 'Download Image',
		naming: { baseName: image.baseName, fallback: UNKNOWN_FILE },
		fallback: fileTypeFromHeader,
		itemIndex,
	});
}

/** The generated images that did arrive, for the message of a failed sibling. */
function keptImages(items: INodeExecutionData[]): string {
	return items.map(({ json }) => `image ${String(json.index)}${json.url ? ` (${String(json.url)})` : ''}`).join('; ');
}

/**
 * One item: one paid generation request (never re-sent once the gateway may have acted), then
 * every image on its own: one link that fails fails that image only. With Continue On Fail the
 * bad image becomes an error item beside the good ones; without it the error names the images
 * that were generated, so none of them is lost.
 */
async function generateForItem(ctx: IExecuteFunctions, client: GatewayClient, request: ImageRequest, itemIndex: number): Promise<INodeExecutionData[]> {
	const what = 'Generating the images';
	const answer = await client.json<ImageAnswer>({
		method: 'POST',
		path: '/v1/images/generations',
		body: buildImageBody(request),
		itemIndex,
		deadlineMs: GENERATION_DEADLINE_MS,
		limitName: GENERATION_LIMIT,
		retry: { idempotent: false },
		what,
	});
	const problem = imageAnswerProblem(answer);
	if (problem) throw missingResultError(what, problem, answer, { itemIndex });

	const images = planImages(answer, request, client.groupMultiplier);
	const settled = await settleConcurrent(images, DOWNLOADS_AT_ONCE, async (image) => {
		const file = await imageFile(ctx, client, image, itemIndex);
		return file ? { json: image.json, binary: { [request.binaryPropertyName]: file } } : { json: image.json };
	});
	const good = settled.flatMap((entry) => ('value' in entry ? [entry.value] : []));
	const failed = settled.flatMap((entry, position) => ('error' in entry ? [{ error: entry.error, image: images[position] }] : []));
	if (failed.length === 0) return good;
	const withImage = failed.map(({ error, image }) => {
		const { model, index, url, usage } = image.json;
		const fields: Record<string, unknown> = url === undefined ? { model, index } : { model, index, url };
		// The request's usage rides on the first image: its error item keeps it, so it is not lost.
		if (image.json[USAGE_FLAG] === true) Object.assign(fields, { usage, [USAGE_FLAG]: true });
		return withFields(error, fields);
	});
	if (ctx.continueOnFail()) {
		const errors = withImage.map((error) => errorItem(ctx.getNode(), error, itemIndex, client.masker));
		return [...good, ...errors].sort((a, b) => Number(a.json.index ?? 0) - Number(b.json.index ?? 0));
	}
	const [first] = withImage;
	if (good.length > 0 && first instanceof GatewayError) {
		throw first.with({
			hint: `${first.hint ? `${first.hint} ` : ''}The other images of this item were generated and downloaded: ${keptImages(good)}. Turn on Continue On Fail to keep them in the output.`,
			fields: { ...first.fields, generatedImages: good.map(({ json }) => ({ index: json.index, url: json.url ?? null })) },
		});
	}
	throw first;
}

export async function generateImages(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await runPerItem(this, {
		prepare: (itemIndex) => readImageRequest(this, itemIndex),
		run: async (request, itemIndex, client) => await generateForItem(this, client, request, itemIndex),
	});
}
