'use strict';
// The "model's" JSON answer, when a request asks for JSON (chat `response_format`, or a native
// tool the request forces or asks for). Deterministic, and built from what the request carried so
// that tests can see it arrived:
//  - without a schema: {"echo": "Echo from <model>: <last user text>", "model", "attachments": [...]};
//  - with a schema: a value that follows it. Properties named `echo`, `model` and `attachments`
//    take those facts; inside an attachment (and at the top level, from the first attachment),
//    properties named like a description field (`kind`, `mimeType`, `bytes`, `sha256`,
//    `filename`, `url`) take its value. Otherwise: the first `enum`/`const` value, strings
//    "<property>: <last user text>" (dates for `format: date`/`date-time`), numbers and integers the
//    attachment count, booleans true, arrays one element, objects every property. Strings are cut
//    after a word to at most 60 characters, ending in "…".
// `[not-json]` in the last user text makes the model answer in words instead (see README.md).

const DESCRIPTION_FIELDS = ['kind', 'mimeType', 'bytes', 'sha256', 'filename', 'url'];
const MAX_STRING = 60;

/** "<property>: <last user text>", cut after a word to at most MAX_STRING characters (then "…"). */
function stringFor(name, text) {
	const whole = `${name}: ${text}`;
	if (whole.length <= MAX_STRING) return whole;
	const cut = whole.slice(0, MAX_STRING);
	return `${cut.slice(0, cut.lastIndexOf(' ') > name.length + 1 ? cut.lastIndexOf(' ') : MAX_STRING)}…`;
}
const MAX_DEPTH = 8;

function typeOf(schema) {
	if (Array.isArray(schema.type)) return schema.type.find((t) => t !== 'null') ?? 'null';
	if (typeof schema.type === 'string') return schema.type;
	if (schema.properties) return 'object';
	if (schema.items) return 'array';
	return undefined;
}

function valueFor(schema, facts, name, source, depth) {
	if (!schema || typeof schema !== 'object' || depth > MAX_DEPTH) return null;
	if (schema.const !== undefined) return schema.const;
	if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
	const alternative = schema.anyOf ?? schema.oneOf;
	if (Array.isArray(alternative) && alternative.length && !schema.type) return valueFor(alternative[0], facts, name, source, depth + 1);
	const type = typeOf(schema);
	if (source && name in source && DESCRIPTION_FIELDS.includes(name)) return source[name];
	if (name === 'echo' && type === 'string') return facts.echo;
	if (name === 'model' && type === 'string') return facts.model;
	switch (type) {
		case 'object': {
			const result = {};
			for (const [key, sub] of Object.entries(schema.properties ?? {})) result[key] = valueFor(sub, facts, key, source, depth + 1);
			return result;
		}
		case 'array':
			if (name === 'attachments') return facts.attachments.map((a) => valueFor(schema.items ?? {}, facts, 'attachment', a, depth + 1));
			return [valueFor(schema.items ?? {}, facts, name, source, depth + 1)];
		case 'string':
			if (schema.format === 'date') return '2026-01-31';
			if (schema.format === 'date-time') return '2026-01-31T12:00:00Z';
			return stringFor(name, facts.text);
		case 'integer':
		case 'number':
			return facts.attachments.length;
		case 'boolean':
			return true;
		case 'null':
			return null;
		default:
			// No type: a description of the attachment when there is one to describe.
			return source ?? stringFor(name, facts.text);
	}
}

/** The JSON answer for `facts` ({ model, text, attachments }), following `schema` when there is one. */
function jsonAnswer(schema, facts) {
	const echo = `Echo from ${facts.model}: ${facts.text}`;
	if (!schema) return { echo, model: facts.model, attachments: facts.attachments };
	return valueFor(schema, { ...facts, echo }, 'answer', facts.attachments[0], 0);
}

/** What the model says when `[not-json]` makes it ignore the request for JSON. */
const NOT_JSON_ANSWER = 'Sure! Here is what I found: the product looks great.';

module.exports = { jsonAnswer, NOT_JSON_ANSWER };
