/**
 * JSON answers for Gateway Chat and Gateway Messages: `options.responseFormat` (`text`,
 * `jsonObject`, `jsonSchema`) and `options.jsonSchema`, read and checked before any request, and
 * the answer parsed into `json.data` afterwards (the same for a streamed answer, which is rebuilt
 * into the whole answer first). Each node puts the request into its own wire form.
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { GatewayError, gatewayQuote } from '../failures/errors';
import { fieldError } from '../items/validate';

export const RESPONSE_FORMATS = ['text', 'jsonObject', 'jsonSchema'] as const;
export type ResponseFormat = (typeof RESPONSE_FORMATS)[number];

/** A JSON answer asked for: any JSON object, or one that follows `schema`. */
export interface JsonRequest {
	format: 'jsonObject' | 'jsonSchema';
	schema?: IDataObject;
}

/** The option as the panel shows it (`options.jsonSchema`). */
export const SCHEMA_FIELD = 'Response JSON Schema';

const SCHEMA_HINT = 'Enter a JSON Schema object, e.g. {"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]}.';

const isPlainObject = (value: unknown): value is IDataObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `options.jsonSchema`: a JSON object, given as an object or as JSON text. */
export function readJsonSchema(ctx: IExecuteFunctions, itemIndex: number, raw: unknown): IDataObject {
	let value = raw;
	if (typeof raw === 'string') {
		if (raw.trim() === '') throw fieldError(ctx, itemIndex, SCHEMA_FIELD, 'must be set when Response Format is JSON Schema', SCHEMA_HINT);
		try {
			value = JSON.parse(raw);
		} catch (error) {
			throw fieldError(ctx, itemIndex, SCHEMA_FIELD, `is not valid JSON (${(error as Error).message})`, SCHEMA_HINT);
		}
	}
	if (value === undefined || value === null) throw fieldError(ctx, itemIndex, SCHEMA_FIELD, 'must be set when Response Format is JSON Schema', SCHEMA_HINT);
	if (!isPlainObject(value)) {
		const what = Array.isArray(value) ? 'a list' : `a JSON ${typeof value}`;
		throw fieldError(ctx, itemIndex, SCHEMA_FIELD, `must be a JSON object, not ${what}`, SCHEMA_HINT);
	}
	return value;
}

/** `options.responseFormat` (and the schema it needs); undefined for a text answer. */
export function readJsonRequest(ctx: IExecuteFunctions, itemIndex: number, options: IDataObject): JsonRequest | undefined {
	const format = options.responseFormat === undefined || options.responseFormat === '' ? 'text' : String(options.responseFormat);
	if (!(RESPONSE_FORMATS as readonly string[]).includes(format)) {
		throw fieldError(ctx, itemIndex, 'Response Format', `must be one of ${RESPONSE_FORMATS.join(', ')}, not "${format.slice(0, 40)}"`);
	}
	if (format === 'text') return undefined;
	if (format === 'jsonObject') return { format };
	return { format: 'jsonSchema', schema: readJsonSchema(ctx, itemIndex, options.jsonSchema) };
}

/** A whole answer in one ```json fence (models add one now and then): the text inside it. */
function unfenced(text: string): string {
	const fence = /^```[a-zA-Z]*[ \t]*\r?\n([\s\S]*?)\r?\n?```$/.exec(text);
	return fence ? fence[1].trim() : text;
}

/** The answer text as JSON, or undefined when it is not JSON (one surrounding code fence is allowed). */
export function parseJsonText(text: string): { value: unknown } | undefined {
	const trimmed = unfenced(text.trim());
	if (trimmed === '') return undefined;
	try {
		return { value: JSON.parse(trimmed) as unknown };
	} catch {
		return undefined;
	}
}

export interface JsonReply {
	/** "The chat request": what was asked, for the message. */
	what: string;
	text: string;
	itemIndex: number;
	/** The answer was cut off at Max Tokens. */
	cutOff: boolean;
	/** Kept on the error (and on a Continue On Fail item), so the paid answer is not lost. */
	fields: Record<string, unknown>;
}

/** The answer parsed as JSON; an answer that is not JSON is an error quoting its start. */
export function jsonReplyData(reply: JsonReply): unknown {
	const parsed = parseJsonText(reply.text);
	if (parsed) return parsed.value;
	const empty = reply.text.trim() === '';
	throw new GatewayError({
		kind: 'protocol',
		headline: `${reply.what} failed: the model's answer is ${empty ? 'empty, not JSON' : 'not JSON'}`,
		hint: reply.cutOff
			? 'The answer was cut off at Max Tokens before the JSON was complete: raise Max Tokens.'
			: 'The model answered in words instead of JSON. Say in the message that the answer must be JSON, or use Response Format JSON Schema. The whole answer is in the error data (text).',
		gatewayMessage: empty ? undefined : gatewayQuote(reply.text),
		mayHaveActed: true,
		fields: reply.fields,
		itemIndex: reply.itemIndex,
	});
}
