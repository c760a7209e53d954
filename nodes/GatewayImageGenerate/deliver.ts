/**
 * One item's paid image request (a generation or an edit) and its answer: one output item per
 * image with the file in binary data, inline Base64 decoded, links downloaded at once (they are
 * temporary) as streams. The request is never re-sent once the gateway may have acted; one image
 * that fails fails that image only, and the others are kept (the output, or the error's words).
 */
import type { IBinaryData, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { bufferToBinary, downloadToBinary } from '../shared/files/binary';
import { errorItem } from '../shared/failures/edge';
import { GatewayError, formatSize, missingResultError, withFields } from '../shared/failures/errors';
import { settleConcurrent } from '../shared/items/itemRunner';
import { callExtra, jsonObjectAnswer } from '../shared/wire/transport';
import type { GatewayCall, GatewayClient, ItemLimit } from '../shared/wire/transport';
import { ImageAnswerReader } from './inlineImages';
import type { InlineImages } from './inlineImages';
import type { ImageRequest } from './request';
import { USAGE_FLAG, fileTypeFromHeader, imageAnswerProblem, planImages } from './response';
import type { ImageAnswer, PlannedImage } from './response';

/** Links of one answer fetched side by side: they are temporary, but one item's batch is small. */
const DOWNLOADS_AT_ONCE = 4;
export const IMAGE_DEADLINE_MS = 300_000;
/** The item's deadline (the request with its retries and waits, its downloads), as messages name it: `doing` "generating". */
export const imageLimitName = (doing: string) => `the ${IMAGE_DEADLINE_MS / 1000} s limit for ${doing} images`;
const MB = 1024 * 1024;
/**
 * The largest answer kept. Its images are held decoded until n8n stores them, so the bound is what
 * n8n can take (its database binary mode caps one file at 512 MB), not what JSON answers usually
 * are: 1 GiB of answer is about 768 MiB of images.
 */
export const MAX_IMAGE_ANSWER_BYTES = 1024 * MB;
/** The answer without its images' data: a few kilobytes of JSON. */
const MAX_ANSWER_TEXT_BYTES = 64 * MB;

/**
 * Sends the paid generation request and reads its answer as it streams in, decoding each image
 * as it arrives (inlineImages.ts). The answer is then judged as any JSON answer is.
 */
export async function requestImages(
	client: GatewayClient,
	call: GatewayCall,
	limits = { maxAnswerBytes: MAX_IMAGE_ANSWER_BYTES, maxTextBytes: MAX_ANSWER_TEXT_BYTES },
): Promise<{ answer: ImageAnswer; images: InlineImages }> {
	const what = call.what ?? 'Generating the images';
	const response = await client.stream(call);
	const reader = new ImageAnswerReader(limits.maxAnswerBytes, limits.maxTextBytes);
	const extra = callExtra(call, { status: response.status });
	try {
		for await (const chunk of response.body) {
			if (reader.write(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk))) continue;
			throw new GatewayError({
				kind: 'protocol',
				headline: `${what} failed: the answer is larger than ${formatSize(limits.maxAnswerBytes)} (${formatSize(limits.maxTextBytes)} without its images), more than the node keeps`,
				hint: 'The gateway answered, so it may have generated (and billed) the images. Ask for fewer images per item, or for links (Response Format: URL), which are downloaded one by one.',
				mayHaveActed: true,
				...extra,
			});
		}
	} catch (error) {
		response.body.destroy();
		throw error instanceof GatewayError ? error : response.failure(error);
	}
	const answer = jsonObjectAnswer<ImageAnswer>({ status: response.status, headers: response.headers, body: reader.text() }, what, extra);
	return { answer, images: reader.images };
}

async function imageFile(
	ctx: IExecuteFunctions,
	client: GatewayClient,
	image: PlannedImage,
	itemIndex: number,
	inline: InlineImages,
	limit: Pick<GatewayCall, 'notAfter' | 'limitName'>,
): Promise<IBinaryData | undefined> {
	if (image.base64 !== undefined) {
		const decoded = inline.take(image.base64);
		if (decoded.bytes === undefined) {
			throw new GatewayError({
				kind: 'protocol',
				headline: `Decoding image ${image.index} of item ${itemIndex} failed: the gateway sent it as b64_json that ${decoded.problem}`,
				hint: 'The gateway generated (and billed) the image but sent data that is no image file. Run the item again, or ask for links (Response Format: URL).',
				mayHaveActed: true,
				itemIndex,
			});
		}
		return await bufferToBinary(ctx, decoded.bytes, image.baseName);
	}
	if (image.download === undefined) return undefined;
	return await downloadToBinary(ctx, client, {
		link: image.download,
		what: `Downloading image ${image.index} of item ${itemIndex}`,
		expected: 'an image',
		mediaPrefix: 'image/',
		downloadOption: 'Download Image',
		baseName: image.baseName,
		fallback: fileTypeFromHeader,
		itemIndex,
		...limit,
	});
}

/** The generated images that did arrive, for the message of a failed sibling. */
function keptImages(items: INodeExecutionData[]): string {
	return items.map(({ json }) => `image ${String(json.index)}${json.url ? ` (${String(json.url)})` : ''}`).join('; ');
}

/** The paid request of one item: where it goes, its body, what it does (for messages). */
export type ImageCall = Required<Pick<GatewayCall, 'path' | 'body' | 'what'>>;

/**
 * One item: one paid request (never re-sent once the gateway may have acted), then every image
 * on its own: one link that fails fails that image only. With Continue On Fail the bad image
 * becomes an error item beside the good ones; without it the error names the images that were
 * made, so none of them is lost. `limit`: the item's one deadline, for the request with its waits
 * and the downloads of its links.
 */
export async function deliverImages(ctx: IExecuteFunctions, client: GatewayClient, request: ImageRequest, itemIndex: number, call: ImageCall, limit: ItemLimit): Promise<INodeExecutionData[]> {
	const { answer, images: inline } = await requestImages(client, { method: 'POST', ...call, itemIndex, ...limit, retry: { idempotent: false } });
	const problem = imageAnswerProblem(answer);
	if (problem) throw missingResultError(call.what, problem, answer, { itemIndex });

	const images = planImages(answer, request, client.groupMultiplier);
	const settled = await settleConcurrent(images, DOWNLOADS_AT_ONCE, async (image) => {
		const file = await imageFile(ctx, client, image, itemIndex, inline, limit);
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
