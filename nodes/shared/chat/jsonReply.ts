/**
 * JSON answers for Gateway Chat and Gateway Messages: `options.responseFormat` (`text`,
 * `jsonObject`, `jsonSchema`) and `options.jsonSchema`, read and checked before any request, and
 * the answer parsed into `json.data` afterwards (the same for a streamed answer, which is rebuilt
 * into the whole answer first). Each node puts the request into its own wire form.
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { GatewayError } from '../failures/errors';
import { gatewayQuote } from '../failures/errorBody';
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
	/** What was asked for: its top-level type is the one the answer must have. */
	json: JsonRequest;
	/** The answer was cut off at Max Tokens. */
	cutOff: boolean;
	/** Kept on the error (and on a Continue On Fail item), so the paid answer is not lost. */
	fields: Record<string, unknown>;
}

/** The JSON Schema type names of the values JSON.parse gives. */
type JsonType = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'null';

function jsonTypeOf(value: unknown): JsonType {
	if (value === null) return 'null';
	if (Array.isArray(value)) return 'array';
	return typeof value as 'object' | 'string' | 'number' | 'boolean';
}

const TYPE_WORDS: Record<JsonType, string> = {
	object: 'a JSON object',
	array: 'a list',
	string: 'a JSON string',
	number: 'a JSON number',
	integer: 'a whole number',
	boolean: 'true or false',
	null: 'null',
};

/**
 * The top-level types the answer may have: an object for JSON Object and for a schema that names
 * no type (a schema of properties); with a schema, the type or types it names.
 */
function expectedTypes(json: JsonRequest): JsonType[] {
	const type = json.schema?.type;
	const named = (Array.isArray(type) ? type : [type]).filter((entry): entry is JsonType => typeof entry === 'string' && entry in TYPE_WORDS);
	return named.length > 0 ? named : ['object'];
}

function hasExpectedType(value: unknown, expected: readonly JsonType[]): boolean {
	const actual = jsonTypeOf(value);
	if (expected.includes(actual)) return true;
	return actual === 'number' && expected.includes('integer') && Number.isInteger(value);
}

/**
 * The value of a JSON answer, when its top-level type is the one asked for; anything else (`null`,
 * a string, a list where an object was asked for) is an error quoting what arrived.
 */
export function checkedJsonValue(reply: Omit<JsonReply, 'text' | 'cutOff'>, value: unknown): unknown {
	const expected = expectedTypes(reply.json);
	if (hasExpectedType(value, expected)) return value;
	throw new GatewayError({
		kind: 'protocol',
		headline: `${reply.what} failed: the model's answer is ${TYPE_WORDS[jsonTypeOf(value)]}, not ${expected.map((type) => TYPE_WORDS[type]).join(' or ')}`,
		hint:
			reply.json.format === 'jsonSchema'
				? 'The answer does not have the top-level type the Response JSON Schema asks for. Say in the message what the answer must be, or check the schema.'
				: 'JSON Object asks for one JSON object ({...}). Say in the message that the answer must be a JSON object, or use Response Format JSON Schema.',
		gatewayMessage: gatewayQuote(JSON.stringify(value) ?? String(value)),
		mayHaveActed: true,
		fields: reply.fields,
		itemIndex: reply.itemIndex,
	});
}

/** The answer parsed as JSON of the asked-for type; an answer that is not JSON is an error quoting its start. */
export function jsonReplyData(reply: JsonReply): unknown {
	const parsed = parseJsonText(reply.text);
	if (parsed) return checkedJsonValue(reply, parsed.value);
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
