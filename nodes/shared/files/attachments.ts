/**
 * Files and image links in the last User message of Gateway Chat and Gateway Messages:
 * `options.binaryAttachments` (binary fields of the input item: PNG, JPEG, GIF and WebP images and
 * PDF documents) and `options.urlAttachments` (image links, sent as given).
 *
 * Planned once, sent from the plan, so that a run over many items never holds every file at once:
 * - before any request (`planAttachments`, in the item's check), one pass over the item's files:
 *   each is read through n8n's binary helpers (every binary data mode: default, filesystem,
 *   database, S3; only its first bytes where n8n keeps it outside the item), typed from its bytes
 *   (never from its name or declared MIME type), measured (size, and pixels where the format
 *   limits them) and checked against the format's limits; then the image count and the size of the
 *   whole request, measured on the item's body with the parts the plan gives. Only these facts are kept;
 * - when the item's request is sent (`attachedBody`): the planned files are read again (and
 *   checked to be the files planned), put into the body as the plan's parts, and released with the
 *   request, so a run holds the files of at most Concurrency items at once.
 *
 * Every file of the input item that a request carries (these attachments, Image Edit's images) is
 * read one way, below: checked before any request, read again when the request is sent:
 * - a missing field is refused naming the field, the item and the fields the item has;
 * - the check reads only the file's first bytes where n8n keeps it outside the item and knows
 *   its size (so checking a thousand items does not read a thousand files), within the item's
 *   limit; where n8n knows no size, the file is read by to count it, its head kept, never whole;
 *   where n8n keeps it in the item, the whole file (it is in memory anyway);
 * - what is sent is the file checked: streamed from n8n's store where it is kept there (checked
 *   again as it is read: its size and its type), else read and compared before the request.
 */
import { fileWaitScope } from '../wire/fileWait';
import type { FileWaitLimit } from '../wire/fileWait';
import type { IBinaryData, IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { binaryFileSource, readBinaryAtMost, recordedSize, scanBinary, sniffFileType, streamableId } from './binary';
import type { FileField } from './binary';
import { imageDimensions } from './imageSize';
import { fieldError } from '../items/validate';
import { Base64Text } from '../wire/jsonBody';
import type { FileStreamSource } from '../wire/streamedBody';
import { formatSize } from '../failures/errors';

export type ChatFormat = 'chat' | 'messages';

export const BINARY_ATTACHMENTS_FIELD = 'Binary Attachments';
export const URL_ATTACHMENTS_FIELD = 'Image URLs';

const MB = 1024 * 1024;

export interface FormatLimits {
	/** The format, as messages name it. */
	label: string;
	/** Images per request, files and links together. */
	maxImages: number;
	/** Per image; counted on the file's bytes or on its Base64 text, as the format counts it. */
	maxImageBytes: number;
	imageBytesCounted: 'file' | 'base64';
	/** Pixels per side. */
	maxImageSide?: number;
	/** With more than `count` images in one request, each side at most `maxSide`. */
	manyImages?: { count: number; maxSide: number };
	maxPdfBytes: number;
}

/**
 * The limits the formats publish. Native messages: 5 MB per image, counted on its Base64 text
 * (the service reports "image exceeds 5 MB maximum: 5272940 bytes > 5242880 bytes" for a
 * 3.9 MB file), 8000 px per side (2000 px once a request carries more than 20 images), 100
 * images and 32 MB per request (which bounds PDFs too). Chat-completions: 20 MB per image file;
 * the image count of the native format, since the same model family answers both endpoints.
 */
export const ATTACHMENT_LIMITS: Record<ChatFormat, FormatLimits> = {
	messages: {
		label: 'the native messages format',
		maxImages: 100,
		maxImageBytes: 5 * MB,
		imageBytesCounted: 'base64',
		maxImageSide: 8000,
		manyImages: { count: 20, maxSide: 2000 },
		maxPdfBytes: 32 * MB,
	},
	chat: {
		label: 'the chat-completions format',
		maxImages: 100,
		maxImageBytes: 20 * MB,
		imageBytesCounted: 'file',
		maxPdfBytes: 32 * MB,
	},
};

/** The whole request body, attachments included: what relays and the native format accept. */
export const MAX_REQUEST_BYTES = 32 * MB;

/** A checked file of the input item: what is known about it before anything is sent. */
export interface FileAttachment {
	/** The binary field it is in. */
	property: string;
	kind: 'image' | 'pdf';
	/** From the bytes. */
	mimeType: string;
	fileName: string;
	/** Bytes of the file. */
	size: number;
	width?: number;
	height?: number;
}

/**
 * A file ready to send: its bytes, or the file to stream them from (where n8n keeps it outside the
 * item), written into the request as Base64 only when it is sent (no bytes in the placeholder used
 * to measure a request).
 */
export interface LoadedFile extends FileAttachment {
	data: Buffer | FileStreamSource;
}

export const base64Length = (bytes: number) => 4 * Math.ceil(bytes / 3);

const ATTACHABLE_IMAGES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

/** The type of a file from its first bytes: one of the images both formats take, a PDF, or undefined. */
export function attachmentType(bytes: Buffer): { kind: 'image' | 'pdf'; mimeType: string; extension: string } | undefined {
	const sniffed = sniffFileType(bytes);
	if (sniffed?.mimeType === 'application/pdf') return { kind: 'pdf', ...sniffed };
	return sniffed && ATTACHABLE_IMAGES.includes(sniffed.mimeType) ? { kind: 'image', ...sniffed } : undefined;
}

/** The position of the last User message, or -1. */
export function lastUserIndex(messages: ReadonlyArray<{ role: string }>): number {
	return messages.map((message) => message.role).lastIndexOf('user');
}

const ACCEPTED = 'only PNG, JPEG, GIF and WebP images and PDF documents can be attached';

/** Enough of a file for its type and its size in pixels: the headers that tell them sit at its start. */
const HEAD_BYTES = 64 * 1024;

/** Reads, types and measures one file, and checks it against the format's per-file limits. */
async function planFile(ctx: IExecuteFunctions, itemIndex: number, property: string, limits: FormatLimits, limit: FileWaitLimit): Promise<FileAttachment> {
	const field = BINARY_ATTACHMENTS_FIELD;
	const largest = Math.max(limits.maxPdfBytes, limits.maxImageBytes);
	const tooLarge = (recorded: number, over = false) => fieldError(ctx, itemIndex, field, `field "${property}" holds ${over ? 'over ' : ''}${formatSize(recorded)}; the largest file ${limits.label} takes is ${formatSize(largest)}`);
	const { binary, bytes, size } = await fileToCheck(ctx, { itemIndex, parameter: field, property }, limit, HEAD_BYTES, largest, tooLarge);
	const type = attachmentType(bytes);
	if (!type) {
		const sniffed = sniffFileType(bytes);
		const what = sniffed ? `${sniffed.mimeType}` : bytes.length === 0 ? 'an empty file' : 'a file of no image or PDF type';
		throw fieldError(ctx, itemIndex, field, `field "${property}" holds ${what}${describeBinary(binary)}: ${ACCEPTED}`, 'The type is read from the file itself, not from its name.');
	}
	const fileName = typeof binary.fileName === 'string' && binary.fileName.trim() !== '' ? binary.fileName.trim() : `${property}.${type.extension}`;
	const file: FileAttachment = { property, kind: type.kind, mimeType: type.mimeType, fileName, size };
	if (type.kind === 'pdf') {
		if (file.size > limits.maxPdfBytes) {
			throw fieldError(ctx, itemIndex, field, `field "${property}" is a PDF of ${formatSize(file.size)}; ${limits.label} takes PDFs of at most ${formatSize(limits.maxPdfBytes)}`);
		}
		return file;
	}
	const counted = limits.imageBytesCounted === 'base64' ? base64Length(file.size) : file.size;
	if (counted > limits.maxImageBytes) {
		const how = limits.imageBytesCounted === 'base64' ? `${formatSize(counted)} once Base64-encoded (${formatSize(file.size)} as a file)` : formatSize(counted);
		throw fieldError(
			ctx,
			itemIndex,
			field,
			`field "${property}" is an image of ${how}; ${limits.label} takes images of at most ${formatSize(limits.maxImageBytes)}${limits.imageBytesCounted === 'base64' ? ' counted on their Base64 text' : ''}`,
			'Make the image smaller first (e.g. with the Edit Image node), or send it as a link in Image URLs.',
		);
	}
	// A header beyond the first bytes (a JPEG's after large metadata): then the whole file is read.
	const dimensions = imageDimensions(bytes, type.mimeType) ?? (bytes.length < size ? imageDimensions(await ctx.helpers.getBinaryDataBuffer(itemIndex, property), type.mimeType) : undefined);
	if (dimensions) {
		file.width = dimensions.width;
		file.height = dimensions.height;
		if (limits.maxImageSide !== undefined && Math.max(dimensions.width, dimensions.height) > limits.maxImageSide) {
			throw fieldError(
				ctx,
				itemIndex,
				field,
				`field "${property}" is an image of ${dimensions.width}×${dimensions.height} px; ${limits.label} takes at most ${limits.maxImageSide} px per side`,
				'Resize the image first, e.g. with the Edit Image node.',
			);
		}
	}
	return file;
}

/**
 * Reads and checks the files named in Binary Attachments, before any request: types, per-file
 * limits, and the image count of the request (with `linkCount` image links beside them).
 */
export async function planFiles(
	ctx: IExecuteFunctions,
	itemIndex: number,
	names: readonly string[] | undefined,
	linkCount: number,
	format: ChatFormat,
	limit: FileWaitLimit,
): Promise<FileAttachment[]> {
	const limits = ATTACHMENT_LIMITS[format];
	const files: FileAttachment[] = [];
	for (const property of names ?? []) files.push(await planFile(ctx, itemIndex, property, limits, limit));
	const images = files.filter((file) => file.kind === 'image');
	const imageCount = images.length + linkCount;
	if (imageCount > limits.maxImages) {
		throw fieldError(ctx, itemIndex, linkCount > 0 ? `${BINARY_ATTACHMENTS_FIELD}" and "${URL_ATTACHMENTS_FIELD}` : BINARY_ATTACHMENTS_FIELD, `add ${imageCount} images; ${limits.label} takes at most ${limits.maxImages} per request`);
	}
	const many = limits.manyImages;
	if (many && imageCount > many.count) {
		const big = images.find((file) => Math.max(file.width ?? 0, file.height ?? 0) > many.maxSide);
		if (big) {
			throw fieldError(
				ctx,
				itemIndex,
				BINARY_ATTACHMENTS_FIELD,
				`field "${big.property}" is an image of ${big.width}×${big.height} px; with more than ${many.count} images in one request ${limits.label} takes at most ${many.maxSide} px per side`,
				`Send at most ${many.count} images per request, or resize them first.`,
			);
		}
	}
	return files;
}

/** What a chat item asks to attach, and its time limit (the reads of the binary store end within it). */
export interface AttachmentRequest {
	binaryAttachments?: readonly string[];
	imageUrls?: readonly string[];
	deadlineMs: number;
}

/** An item's attachments, checked: what its request carries besides the body built from its parameters. */
export interface AttachmentPlan {
	format: ChatFormat;
	files: FileAttachment[];
	links: readonly string[];
}

/**
 * The whole check of one item's attachments, before any request: its files planned and checked,
 * the image count, then the size of the request: `body` (the item's body, without attachments)
 * with the plan's parts, measured with placeholders, not sent. Undefined when nothing is attached.
 * The reads of the binary store end within the item's own Timeout (`limitName`) from now, or a Stop.
 */
export async function planAttachments(
	ctx: IExecuteFunctions,
	itemIndex: number,
	request: AttachmentRequest,
	body: IDataObject,
	format: ChatFormat,
	limitName: string,
): Promise<AttachmentPlan | undefined> {
	if (!request.binaryAttachments && !request.imageUrls) return undefined;
	const links = request.imageUrls ?? [];
	const limit = { scope: fileWaitScope(Date.now() + request.deadlineMs, ctx.getExecutionCancelSignal?.()), name: limitName };
	const plan = { format, files: await planFiles(ctx, itemIndex, request.binaryAttachments, links.length, format, limit), links };
	checkRequestSize(ctx, itemIndex, body, plan);
	return plan;
}

/** The body to send: `body` with the plan's files, read now (and checked to be the files planned), and links. */
export async function attachedBody(ctx: IExecuteFunctions, itemIndex: number, body: IDataObject, plan: AttachmentPlan | undefined): Promise<IDataObject> {
	if (!plan) return body;
	return bodyWithParts(body, attachmentParts(plan.format, await loadAttachments(ctx, itemIndex, plan.files), plan.links));
}

/**
 * `body` with `parts` in the last User message of its `messages` (both formats keep the
 * conversation there): its content becomes the parts, then its text (files before the question,
 * the order the native format's guidance recommends); every other `{role, content}` as it is.
 */
export function bodyWithParts(body: IDataObject, parts: readonly IDataObject[]): IDataObject {
	const messages = body.messages as unknown as ReadonlyArray<{ role: string; content: string }>;
	const last = parts.length > 0 ? lastUserIndex(messages) : -1;
	return { ...body, messages: messages.map(({ role, content }, position) => (position === last ? { role, content: [...parts, { type: 'text', text: content }] } : { role, content })) };
}

/** Checks the size of `body` with the plan's parts: measured on placeholders without data (not sent), plus each file's Base64 text. */
export function checkRequestSize(ctx: IExecuteFunctions, itemIndex: number, body: IDataObject, plan: AttachmentPlan): void {
	if (plan.files.length === 0) return;
	const withoutData = bodyWithParts(body, attachmentParts(plan.format, plan.files.map((file) => ({ ...file, data: Buffer.alloc(0) })), plan.links));
	const size = Buffer.byteLength(JSON.stringify(withoutData)) + plan.files.reduce((sum, file) => sum + base64Length(file.size), 0);
	if (size > MAX_REQUEST_BYTES) {
		throw fieldError(
			ctx,
			itemIndex,
			BINARY_ATTACHMENTS_FIELD,
			`make a request of ${formatSize(size)} (files are sent as Base64, a third larger than the files); a request may be at most ${formatSize(MAX_REQUEST_BYTES)}`,
			'Attach fewer or smaller files per item, or send images as links in Image URLs.',
		);
	}
}

/** The planned files, now to send them (checkedFileToSend). */
export async function loadAttachments(ctx: IExecuteFunctions, itemIndex: number, files: readonly FileAttachment[] | undefined): Promise<LoadedFile[]> {
	const loaded: LoadedFile[] = [];
	for (const file of files ?? []) {
		const field = { itemIndex, parameter: BINARY_ATTACHMENTS_FIELD, property: file.property };
		loaded.push({ ...file, data: await checkedFileToSend(ctx, field, file, (bytes) => attachmentType(bytes)?.mimeType) });
	}
	return loaded;
}

/** The content parts of the files and links, in the wire form of each format. */
export function attachmentParts(format: ChatFormat, files: readonly LoadedFile[], links: readonly string[] = []): IDataObject[] {
	if (format === 'chat') {
		return [
			...files.map((file): IDataObject =>
				file.kind === 'pdf'
					? { type: 'file', file: { filename: file.fileName, file_data: Base64Text.dataUrl(file.data, file.mimeType) } }
					: { type: 'image_url', image_url: { url: Base64Text.dataUrl(file.data, file.mimeType) } },
			),
			...links.map((url): IDataObject => ({ type: 'image_url', image_url: { url } })),
		];
	}
	return [
		...files.map((file): IDataObject => ({
			type: file.kind === 'pdf' ? 'document' : 'image',
			source: { type: 'base64', media_type: file.mimeType, data: new Base64Text(file.data) },
		})),
		...links.map((url): IDataObject => ({ type: 'image', source: { type: 'url', url } })),
	];
}

// ---------- a file of the input item that a request carries ----------

/** The binary field of the input item, or an error that names what the item has instead. */
export function inputBinary(ctx: IExecuteFunctions, field: FileField): IBinaryData {
	const binary = ctx.getInputData()[field.itemIndex]?.binary ?? {};
	if (binary[field.property]) return binary[field.property];
	const has = Object.keys(binary);
	throw fieldError(
		ctx,
		field.itemIndex,
		field.parameter,
		`names the binary field "${field.property}", which this item does not have (${has.length ? `it has: ${has.join(', ')}` : 'it has no binary data at all'})`,
		'Use the names shown in the Binary tab of the input panel, e.g. data. Run by an AI Agent as a tool, the item carries no files unless the workflow puts them there.',
	);
}

/** What n8n lists for a file (its declared type and name), for messages: " (n8n lists it as …)". */
export function describeBinary(binary: IBinaryData): string {
	const parts = [binary.mimeType, binary.fileName].filter((part) => typeof part === 'string' && part !== '');
	return parts.length ? ` (n8n lists it as ${parts.join(', ')})` : '';
}

/**
 * What the check before any request reads of a file of the input item, as the header says (its
 * first `headBytes` where n8n keeps it outside the item); `size` is the file's. A file whose
 * recorded size is above `maxBytes` is refused (`tooLarge`) without reading it; one of no recorded
 * size is counted no further than past `maxBytes`, and then refused as over it.
 */
export async function fileToCheck(
	ctx: IExecuteFunctions,
	field: FileField,
	limit: FileWaitLimit,
	headBytes: number,
	maxBytes: number,
	tooLarge: (size: number, over?: boolean) => Error,
): Promise<{ binary: IBinaryData; bytes: Buffer; size: number }> {
	const binary = inputBinary(ctx, field);
	const recorded = await recordedSize(ctx, binary, { limit, field });
	if (recorded !== undefined && recorded > maxBytes) throw tooLarge(recorded);
	ctx.helpers.assertBinaryData(field.itemIndex, field.property);
	const id = streamableId(ctx, binary);
	if (id === undefined) {
		const bytes = await ctx.helpers.getBinaryDataBuffer(field.itemIndex, field.property);
		return { binary, bytes, size: bytes.length };
	}
	if (recorded === 0) return { binary, bytes: Buffer.alloc(0), size: 0 };
	const { head, size } = await scanBinary(ctx, id, headBytes, recorded === undefined ? maxBytes : undefined, limit, field);
	if (recorded === undefined && size > maxBytes) throw tooLarge(maxBytes, true);
	return { binary, bytes: head, size: recorded ?? size };
}

/** A file as checked before the request: its size, and the type its bytes had. */
export interface CheckedFile {
	size: number;
	mimeType: string;
}

/** The checked file, now to send it, as the header says; `typeOf` types its first bytes. One in the item is read no further than one byte past its checked size. */
export async function checkedFileToSend(
	ctx: IExecuteFunctions,
	field: FileField,
	file: CheckedFile,
	typeOf: (bytes: Buffer) => string | undefined,
): Promise<Buffer | FileStreamSource> {
	const changed = (problem?: string) => fieldError(ctx, field.itemIndex, field.parameter, `field "${field.property}" changed after it was checked${problem ? `: it ${problem}` : ''}`, 'Run the workflow again; the file must not change while the node runs.');
	const id = streamableId(ctx, ctx.getInputData()[field.itemIndex]?.binary?.[field.property]);
	if (id !== undefined) {
		const checkHead = (head: Buffer) => (typeOf(head) === file.mimeType ? undefined : `no longer starts as ${file.mimeType}`);
		return binaryFileSource(ctx, id, file.size, field, changed, checkHead);
	}
	const bytes = await readBinaryAtMost(ctx, field.itemIndex, field.property, file.size);
	if (bytes.length !== file.size || typeOf(bytes) !== file.mimeType) throw changed();
	return bytes;
}
