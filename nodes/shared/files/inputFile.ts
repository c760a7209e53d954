/**
 * A file of the input item that a request carries (a chat attachment, an image to edit): checked
 * before any request, read again when the request is sent. The promises kept here:
 * - a missing field is refused naming the field, the item and the fields the item has;
 * - the check reads only the file's first bytes where n8n keeps it outside the item and knows
 *   its size (so checking a thousand items does not read a thousand files), within the item's
 *   limit; where n8n knows no size, the file is read by to count it, its head kept, never whole;
 *   where n8n keeps it in the item, the whole file (it is in memory anyway);
 * - what is sent is the file checked: streamed from n8n's store where it is kept there (checked
 *   again as it is read: its size and its type), else read and compared before the request.
 */
import type { IBinaryData, IExecuteFunctions } from 'n8n-workflow';

import { fieldError } from '../items/validate';
import type { FileWaitLimit } from '../wire/fileWait';
import type { FileStreamSource } from '../wire/streamedBody';
import { binaryFileSource, measureBinary, readBinaryAtMost, readBinaryHead, streamableId } from './binary';
import type { FileField } from './binary';

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
 * What the check before any request reads of a file: its first `headBytes` where n8n keeps the
 * file outside the item (the whole file read by, counted, where n8n recorded no size), the whole
 * file where n8n keeps it in the item. `size` is the file's.
 */
export async function bytesToCheck(
	ctx: IExecuteFunctions,
	field: FileField,
	binary: IBinaryData,
	recorded: number | undefined,
	limit: FileWaitLimit,
	headBytes: number,
): Promise<{ bytes: Buffer; size: number }> {
	const id = streamableId(ctx, binary);
	if (id !== undefined && recorded !== undefined) return { bytes: recorded === 0 ? Buffer.alloc(0) : await readBinaryHead(ctx, id, headBytes, limit, field), size: recorded };
	if (id !== undefined) {
		const { head, size } = await measureBinary(ctx, id, headBytes, limit, field);
		return { bytes: head, size };
	}
	const bytes = await ctx.helpers.getBinaryDataBuffer(field.itemIndex, field.property);
	return { bytes, size: bytes.length };
}

/** A file as checked before the request: its size, and the type its bytes had. */
export interface CheckedFile {
	size: number;
	mimeType: string;
}

/**
 * The checked file, now to send it: a file n8n keeps outside the item as a source streamed into
 * the request (its size and its type, `typeOf` its first bytes, checked again as it is read);
 * one in the item read, no further than one byte past its checked size, and compared.
 */
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
