/**
 * Input checks that run before any request. Every message names the field (as the user sees it
 * in the panel) and the item, and says what to do.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

/**
 * The error of a bad input. What it quotes of the input is in its message and hint only, where
 * the exit masks it: built from a string, n8n's error would keep a second copy in its `cause`
 * (stored with the execution) and in its stack, which no masking of the message reaches.
 */
export function fieldError(
	ctx: Pick<IExecuteFunctions, 'getNode'>,
	itemIndex: number,
	field: string,
	problem: string,
	hint?: string,
): NodeOperationError {
	return new NodeOperationError(ctx.getNode(), {}, { message: `"${field}" ${problem} (item ${itemIndex})`, itemIndex, description: hint });
}

/** What an expression gave, for a message about a value of the wrong type ("a list", "an object", "a number"). */
const describeValue = (value: unknown): string =>
	value === null || value === undefined ? String(value) : Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;

/**
 * A text parameter, trimmed ('' when empty). Numbers and booleans are taken as text; an object or
 * a list (an expression such as {{ $json }}) is refused: sent as is it would read "[object Object]".
 */
export function readText(ctx: IExecuteFunctions, itemIndex: number, name: string, field: string): string {
	const value = ctx.getNodeParameter(name, itemIndex, '') as unknown;
	if (value === undefined || value === null) return '';
	if (typeof value === 'object') {
		throw fieldError(ctx, itemIndex, field, `must be text, but the expression gave ${describeValue(value)}`, 'Map a text field, e.g. {{ $json.text }}, or turn the value into text with JSON.stringify().');
	}
	return String(value).trim();
}

/** A required text parameter, trimmed. */
export function requireText(ctx: IExecuteFunctions, itemIndex: number, name: string, field: string, hint?: string): string {
	const text = readText(ctx, itemIndex, name, field);
	if (text === '') throw fieldError(ctx, itemIndex, field, 'must not be empty', hint);
	return text;
}

/** A whole number within [min, max]; accepts a number or a string of digits. */
export function readInteger(
	ctx: IExecuteFunctions,
	itemIndex: number,
	value: unknown,
	field: string,
	range: { min: number; max?: number },
): number {
	if (typeof value === 'object' && value !== null) throw fieldError(ctx, itemIndex, field, `must be a whole number, but the expression gave ${describeValue(value)}`);
	const text = typeof value === 'number' ? String(value) : String(value ?? '').trim();
	if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
		throw fieldError(ctx, itemIndex, field, `must be a whole number, not "${text.slice(0, 40)}"`);
	}
	const number = Number(text);
	if (number < range.min || (range.max !== undefined && number > range.max)) {
		const bounds = range.max === undefined ? `at least ${range.min}` : `from ${range.min} to ${range.max}`;
		throw fieldError(ctx, itemIndex, field, `must be ${bounds}, not ${number}`);
	}
	return number;
}

/** `options.extraBody`: a JSON object (given as an object or as JSON text), or nothing. */
export function readExtraBody(ctx: IExecuteFunctions, itemIndex: number): IDataObject {
	return checkedExtraBody(ctx, itemIndex, ctx.getNodeParameter('options.extraBody', itemIndex, '') as unknown);
}

/** Extra Body Fields as given (from an Options collection already read), checked. */
export function checkedExtraBody(ctx: IExecuteFunctions, itemIndex: number, raw: unknown): IDataObject {
	// Checked here, not with the credential's jsonObjectOf: a chat item's parameters are read without leaving this layer.
	if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) return {};
	let value = raw;
	if (typeof raw === 'string') {
		try {
			value = JSON.parse(raw);
		} catch (error) {
			throw fieldError(ctx, itemIndex, 'Extra Body Fields', `is not valid JSON (${(error as Error).message})`, 'Enter a JSON object, e.g. {"size": "1024x1024"}.');
		}
	}
	if (typeof value !== 'object' || value === null || Array.isArray(value)) {
		throw fieldError(ctx, itemIndex, 'Extra Body Fields', 'must be a JSON object', 'Enter a JSON object, e.g. {"size": "1024x1024"}.');
	}
	return value as IDataObject;
}

/** The model id of a resource-locator parameter (list or id mode). */
export function readModelId(ctx: IExecuteFunctions, itemIndex: number): string {
	const value = ctx.getNodeParameter('model', itemIndex, '', { extractValue: true }) as unknown;
	const id = String(value ?? '').trim();
	if (id === '') throw fieldError(ctx, itemIndex, 'Model', 'must not be empty', 'Pick a model from the list or enter its id.');
	return id;
}

/** The name of a binary property: letters, digits, `_`, `-`, `.`. */
export function readBinaryPropertyName(ctx: IExecuteFunctions, itemIndex: number): string {
	const value = String(ctx.getNodeParameter('options.binaryPropertyName', itemIndex, 'data') ?? '').trim();
	if (!/^[A-Za-z0-9_.-]+$/.test(value)) {
		throw fieldError(ctx, itemIndex, 'Put Output File in Field', 'must be a field name such as "data" (letters, digits, _ - .)');
	}
	return value;
}

/** A list of texts: split from text by `split`, or a list from an expression; trimmed, without blanks or repeats; undefined when empty. */
export function readList(ctx: IExecuteFunctions, itemIndex: number, value: unknown, field: string, split: RegExp): string[] | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	let entries: unknown[];
	if (Array.isArray(value)) entries = value;
	else if (typeof value === 'string') entries = value.split(split);
	else throw fieldError(ctx, itemIndex, field, `must be text, but the expression gave ${describeValue(value)}`);
	const list: string[] = [];
	for (const entry of entries) {
		if (typeof entry !== 'string') throw fieldError(ctx, itemIndex, field, `must be a list of texts, but it holds ${describeValue(entry)}`);
		const text = entry.trim();
		if (text !== '' && !list.includes(text)) list.push(text);
	}
	return list.length > 0 ? list : undefined;
}
