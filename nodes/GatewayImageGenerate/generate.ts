/**
 * POST /v1/images/generations for each item, then one output item per image with the file in
 * binary data: inline Base64 decoded, links downloaded at once (they are temporary) as streams.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { IBinaryData, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { bufferToBinary, isPageContentType, streamToBinary } from '../shared/binary';
import type { FileType } from '../shared/binary';
import { attachItemFields } from '../shared/errors';
import { mapConcurrent, runPerItem } from '../shared/itemRunner';
import type { GatewayClient } from '../shared/transport';
import { buildImageBody, readImageRequest } from './request';
import type { ImageRequest } from './request';
import { UNKNOWN_FILE, fileTypeFromHeader, imageAnswerProblem, planImages } from './response';
import type { ImageAnswer, PlannedImage } from './response';

/** Links of one answer fetched side by side: they are temporary, but one item's batch is small. */
const DOWNLOADS_AT_ONCE = 4;
const GENERATION_TIMEOUT_MS = 300_000;

async function imageFile(
	ctx: IExecuteFunctions,
	client: GatewayClient,
	image: PlannedImage,
	itemIndex: number,
): Promise<IBinaryData | undefined> {
	if (image.base64 !== undefined) {
		const bytes = Buffer.from(image.base64, 'base64');
		if (bytes.length === 0) {
			throw new NodeOperationError(ctx.getNode(), `The gateway sent image ${image.index} as empty Base64 data (item ${itemIndex})`, { itemIndex });
		}
		return await bufferToBinary(ctx, bytes, { baseName: image.baseName, fallback: UNKNOWN_FILE });
	}
	if (image.download === undefined) return undefined;
	return await downloadImage(ctx, client, image, image.download, itemIndex);
}

/** Streams a link into binary data, typed from its first bytes. */
async function downloadImage(
	ctx: IExecuteFunctions,
	client: GatewayClient,
	image: PlannedImage,
	link: string,
	itemIndex: number,
): Promise<IBinaryData> {
	const what = `Downloading image ${image.index} of item ${itemIndex}`;
	const response = await client.download(link, { itemIndex, what });
	const contentType = response.headers['content-type'];
	let refused: NodeOperationError | undefined;
	const refusePages = (sniffed: FileType | undefined) => {
		if (sniffed || !isPageContentType(contentType)) return;
		refused = new NodeOperationError(ctx.getNode(), `${what} failed: the link answered with ${String(contentType).split(';')[0]} instead of an image`, {
			itemIndex,
			description: 'The file host sent a page (often an error or login page) instead of the image. Check the link in the output.',
		});
		throw refused;
	};
	try {
		return await streamToBinary(ctx, response.body, { baseName: image.baseName, fallback: fileTypeFromHeader(contentType) }, refusePages);
	} catch (error) {
		response.body.destroy();
		const reason = client.scrub((error as Error)?.message ?? String(error));
		throw refused ?? new NodeOperationError(ctx.getNode(), `${what} failed: the image could not be received in full (${reason})`, { itemIndex });
	}
}

async function generateForItem(
	ctx: IExecuteFunctions,
	client: GatewayClient,
	request: ImageRequest,
	itemIndex: number,
): Promise<INodeExecutionData[]> {
	const answer = await client.json<ImageAnswer>({
		method: 'POST',
		path: '/v1/images/generations',
		body: buildImageBody(request),
		itemIndex,
		timeoutMs: GENERATION_TIMEOUT_MS,
		what: 'Generating the images',
		// Retried as usual (unlike a video submit): a lost answer leaves nothing to recover, so a
		// retry costs no more than the re-run the user would otherwise make.
	});
	const problem = imageAnswerProblem(answer);
	if (problem) throw new NodeOperationError(ctx.getNode(), `${problem} (item ${itemIndex})`, { itemIndex });

	const images = planImages(answer, request, client.groupMultiplier);
	return await mapConcurrent(images, DOWNLOADS_AT_ONCE, async (image) => {
		try {
			const file = await imageFile(ctx, client, image, itemIndex);
			return file ? { json: image.json, binary: { [request.binaryPropertyName]: file } } : { json: image.json };
		} catch (error) {
			// On Continue On Fail the error item still says which image and link failed.
			const { model, index, url } = image.json;
			throw attachItemFields(error as Error, url === undefined ? { model, index } : { model, index, url });
		}
	});
}

export async function generateImages(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await runPerItem(this, {
		prepare: (itemIndex) => readImageRequest(this, itemIndex),
		run: async (request, itemIndex, client) => await generateForItem(this, client, request, itemIndex),
	});
}
