/**
 * Operation Edit: POST /v1/images/edits for each item, a multipart/form-data body (interface
 * document 2.2a) with the item's images, an optional mask, and the generation's fields as text
 * parts; the answer is a generation's (deliver.ts). Every file is checked before any request
 * (there, named, of an image type its bytes show, not too large; a PNG mask) and streamed into the
 * body as it is sent where n8n keeps it outside the item.
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { formatSize } from '../shared/failures/errors';
import { sniffFileType } from '../shared/files/binary';
import type { FileField } from '../shared/files/binary';
import { checkedFileToSend, describeBinary, fileToCheck } from '../shared/files/attachments';
import type { CheckedFile } from '../shared/files/attachments';
import { runPerItem } from '../shared/items/itemRunner';
import { fieldError, readList, readText } from '../shared/items/validate';
import { fileWaitScope } from '../shared/wire/fileWait';
import type { FileWaitLimit } from '../shared/wire/fileWait';
import { MultipartForm } from '../shared/wire/multipart';
import type { FormPart } from '../shared/wire/multipart';
import { itemDeadline } from '../shared/wire/transport';
import { IMAGE_DEADLINE_MS, deliverImages, imageLimitName } from './deliver';
import { IMAGES_FIELD, MASK_FIELD, MAX_EDIT_IMAGES } from './description';
import { buildImageBody, readImageRequest } from './request';
import type { ImageRequest } from './request';

const EDIT_LIMIT = imageLimitName('editing');
/** OpenAI's limit per image for its GPT image models; a mask is one of them too. */
export const MAX_EDIT_FILE_BYTES = 50 * 1024 * 1024;
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp'];
const MASK_TYPES = ['image/png'];
/** Enough of a file's start for its type. */
const HEAD_BYTES = 64;

/** A file of the item checked for the edit: which part it goes in, under which name. */
interface EditFile extends CheckedFile {
	field: FileField;
	part: 'image' | 'image[]' | 'mask';
	/** The item's file name with the extension of its type (new-api types a forwarded file by it). */
	fileName: string;
}

interface EditInput {
	request: ImageRequest;
	files: EditFile[];
}

const typeNames = (types: readonly string[]) => types.map((type) => type.slice('image/'.length).toUpperCase()).join(', ');

/** The file name n8n lists, its extension replaced by the one its bytes show (`photo.jpeg` holding a PNG: `photo.png`). */
function partFileName(listed: unknown, property: string, extension: string): string {
	const base = typeof listed === 'string' && listed.trim() !== '' ? listed.trim().replace(/\.[A-Za-z0-9]{1,5}$/, '') : property;
	return `${base}.${extension}`;
}

/** One file checked before any request: there, not empty, not too large, of a type `types` holds (from its bytes). */
async function checkFile(ctx: IExecuteFunctions, field: FileField, types: readonly string[], limit: FileWaitLimit): Promise<{ size: number; mimeType: string; fileName: string }> {
	const { itemIndex, parameter, property } = field;
	const tooLarge = (size: number, over = false) => fieldError(ctx, itemIndex, parameter, `field "${property}" holds ${over ? 'over ' : ''}${formatSize(size)}; an edit takes files of at most ${formatSize(MAX_EDIT_FILE_BYTES)}`, 'Make the image smaller first, e.g. with the Edit Image node.');
	const { binary, bytes, size } = await fileToCheck(ctx, field, limit, HEAD_BYTES, MAX_EDIT_FILE_BYTES, tooLarge);
	if (size > MAX_EDIT_FILE_BYTES) throw tooLarge(size);
	const type = sniffFileType(bytes);
	if (!type || !types.includes(type.mimeType)) {
		const what = size === 0 ? 'an empty file' : type ? type.mimeType : 'no image';
		throw fieldError(ctx, itemIndex, parameter, `field "${property}" holds ${what}${describeBinary(binary)}: it must be a ${typeNames(types)} image`, 'The type is read from the file itself, not from its name.');
	}
	return { size, mimeType: type.mimeType, fileName: partFileName(binary.fileName, property, type.extension) };
}

/** Images From Binary Fields: 1 to 16 field names. */
function readImageFields(ctx: IExecuteFunctions, itemIndex: number): string[] {
	const names = readList(ctx, itemIndex, ctx.getNodeParameter('images', itemIndex, 'data'), IMAGES_FIELD, /[,\n]/);
	if (!names) throw fieldError(ctx, itemIndex, IMAGES_FIELD, 'must name at least one binary field', 'For example data, or data, photo2 for several images.');
	if (names.length > MAX_EDIT_IMAGES) throw fieldError(ctx, itemIndex, IMAGES_FIELD, `names ${names.length} binary fields; an edit takes at most ${MAX_EDIT_IMAGES} images`);
	return names;
}

/** Reads and checks one item's edit before any request; its reads of the binary store end within the item's limit, or a Stop. */
async function readEditInput(ctx: IExecuteFunctions, itemIndex: number): Promise<EditInput> {
	const request = readImageRequest(ctx, itemIndex);
	const names = readImageFields(ctx, itemIndex);
	const mask = readText(ctx, itemIndex, 'options.maskBinaryProperty', MASK_FIELD);
	const limit = { scope: fileWaitScope(Date.now() + IMAGE_DEADLINE_MS, ctx.getExecutionCancelSignal?.()), name: EDIT_LIMIT };
	// One image goes as `image`; several as `image[]`, the form OpenAI documents for several images
	// and new-api forwards them in (relay/channel/openai/adaptor.go; it reads `image` and `image[]`).
	const part = names.length === 1 ? 'image' : 'image[]';
	const files: EditFile[] = [];
	for (const property of names) {
		const field = { itemIndex, parameter: IMAGES_FIELD, property };
		files.push({ field, part, ...(await checkFile(ctx, field, IMAGE_TYPES, limit)) });
	}
	if (mask !== '') {
		const field = { itemIndex, parameter: MASK_FIELD, property: mask };
		files.push({ field, part: 'mask', ...(await checkFile(ctx, field, MASK_TYPES, limit)) });
	}
	return { request, files };
}

/** The form: the generation's fields (Extra Body Fields under them) as text parts, then the files, read now. */
async function editForm(ctx: IExecuteFunctions, input: EditInput): Promise<MultipartForm> {
	const fields: IDataObject = buildImageBody(input.request);
	const parts: FormPart[] = Object.entries(fields)
		.filter(([, value]) => value !== undefined && value !== null)
		// Text as it is, numbers and booleans as text, objects as JSON.
		.map(([name, value]) => ({ name, value: typeof value === 'object' ? JSON.stringify(value) : String(value) }));
	for (const file of input.files) {
		const source = await checkedFileToSend(ctx, file.field, file, (bytes) => sniffFileType(bytes)?.mimeType);
		parts.push({ name: file.part, fileName: file.fileName, mimeType: file.mimeType, source });
	}
	return new MultipartForm(parts);
}

export async function editImages(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await runPerItem(this, {
		prepare: async (itemIndex) => await readEditInput(this, itemIndex),
		run: async (input, itemIndex, client) => {
			const limit = itemDeadline(IMAGE_DEADLINE_MS, EDIT_LIMIT);
			const call = { path: '/v1/images/edits', body: await editForm(this, input), what: 'Editing the images' };
			return await deliverImages(this, client, input.request, itemIndex, call, limit);
		},
	});
}
