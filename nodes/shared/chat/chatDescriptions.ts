/**
 * The fields Gateway Chat and Gateway Messages show the same way: the conversation rows, Max
 * Tokens, Stream, Effort, Stop Sequences and Include Raw Response. Each node passes what differs
 * (its roles, the gateway field a value becomes).
 */
import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import { MAX_TOKENS_HINT } from '../panel/models';

export const DEFAULT_MAX_TOKENS = 4096;
/** Long enough for a long answer; a relay that only sends keep-alives is given up on after it. */
export const DEFAULT_CHAT_TIMEOUT_SECONDS = 600;

/** The chat limits (Timeout, Idle Timeout): whole seconds from 1 to a day, the range chatInput.ts checks. */
export const CHAT_LIMIT_RANGE = { min: 1, max: 86_400 };

function secondsOption(displayName: string, name: string, seconds: number, description: string): INodeProperties {
	return { displayName, name, type: 'number', typeOptions: { minValue: CHAT_LIMIT_RANGE.min, maxValue: CHAT_LIMIT_RANGE.max, numberPrecision: 0 }, default: seconds, description };
}

export const chatTimeoutOption = secondsOption(
	'Timeout (Seconds)',
	'timeoutSeconds',
	DEFAULT_CHAT_TIMEOUT_SECONDS,
	'The longest the whole answer may take, streamed or not, from sending the request to its last word. Keep-alive messages do not extend it.',
);

/** n8n's OpenAI node gives up on a stream after a minute without a byte; so does this one by default. */
export const DEFAULT_IDLE_TIMEOUT_SECONDS = 60;

/** `options.idleTimeoutSeconds` of Chat, Messages and the Chat Model (chatInput.ts reads it). */
export const idleTimeoutOption = secondsOption(
	'Idle Timeout (Seconds)',
	'idleTimeoutSeconds',
	DEFAULT_IDLE_TIMEOUT_SECONDS,
	'For a streamed answer: the longest the gateway may send nothing at all (keep-alive comments count as a sign of life) before the item fails, saying what had arrived. Timeout still bounds the whole answer: a value above it changes nothing.',
);

/** Chat's and Messages' Idle Timeout: shown with Stream on only, the only time it applies (the Chat Model streams when its AI node does). */
export const streamIdleTimeoutOption: INodeProperties = { ...idleTimeoutOption, displayOptions: { show: { '/stream': [true] } } };

const ROLE_OPTIONS: Record<string, INodePropertyOptions> = {
	system: { name: 'System', value: 'system', description: 'Instructions that steer the whole conversation' },
	user: { name: 'User', value: 'user', description: 'What the person asks' },
	assistant: { name: 'Assistant', value: 'assistant', description: 'An earlier answer of the model' },
};

/** One list for both formats: `reasoning_effort` (Chat) and `output_config.effort` (Messages). */
export const EFFORT_LEVELS: INodePropertyOptions[] = [
	{ name: 'Low', value: 'low', description: 'Fastest and cheapest' },
	{ name: 'Medium', value: 'medium' },
	{ name: 'High', value: 'high' },
	{ name: 'Extra High (Xhigh)', value: 'xhigh', description: 'Suggested for coding and high-autonomy work on chat-opus-4-8' },
	{ name: 'Max', value: 'max', description: 'Most capable, slowest and most expensive' },
];

/** The `messages` fixedCollection: rows of `{role, content}` in `messages.values`. */
export function messagesField(roles: readonly string[], description: string, placeholder: string): INodeProperties {
	const roleOptions = roles.map((role) => ROLE_OPTIONS[role]);
	return {
		displayName: 'Messages',
		name: 'messages',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true, sortable: true },
		placeholder: 'Add Message',
		default: { values: [{ role: 'user', content: '' }] },
		description,
		options: [
			{
				displayName: 'Message',
				name: 'values',
				values: [
					{ displayName: 'Role', name: 'role', type: 'options', options: roleOptions, default: 'user' },
					{ displayName: 'Content', name: 'content', type: 'string', typeOptions: { rows: 4 }, default: '', placeholder },
				],
			},
		],
	};
}

/** Max Tokens: one field, whatever the model; the picked model's limit is a notice under Model (outputLimitNotices). */
export function maxTokensField(description: string): INodeProperties {
	return {
		displayName: 'Max Tokens',
		name: 'maxTokens',
		type: 'number',
		typeOptions: { minValue: 1, numberPrecision: 0 },
		default: DEFAULT_MAX_TOKENS,
		description,
		hint: MAX_TOKENS_HINT,
	};
}

export const streamField: INodeProperties = {
	displayName: 'Stream',
	name: 'stream',
	type: 'boolean',
	default: false,
	description: 'Whether to receive the answer as a stream of events (`stream`). The output is the same either way.',
	hint: 'When the workflow streams (a Chat Trigger or Webhook set to stream), people see the answer being written',
};

export function effortOption(gatewayField: string): INodeProperties {
	return {
		displayName: 'Effort',
		name: 'effort',
		type: 'options',
		options: EFFORT_LEVELS,
		default: 'high',
		description: `How much effort the model spends on the answer (\`${gatewayField}\`)`,
		hint: 'Trades capability against speed and cost on chat-opus-4-8 and later models. The gateway document suggests Extra High (xhigh) for coding and high-autonomy work on chat-opus-4-8.',
	};
}

export function stopSequencesOption(name: string, description: string): INodeProperties {
	return {
		displayName: 'Stop Sequences',
		name,
		type: 'string',
		typeOptions: { multipleValues: true },
		default: [],
		description,
	};
}

/** `options.temperature`: from 0 to `max`, the format's range (chatInput.ts checks it). */
export function temperatureOption(max: number, description: string): INodeProperties {
	return { displayName: 'Temperature', name: 'temperature', type: 'number', typeOptions: { minValue: 0, maxValue: max, numberPrecision: 2 }, default: 1, description };
}

export const includeRawResponseOption: INodeProperties = {
	displayName: 'Include Raw Response',
	name: 'includeRawResponse',
	type: 'boolean',
	default: false,
	description: 'Whether to add the whole gateway answer as `rawResponse` (for a stream: the answer rebuilt from its events)',
};

// Files in, JSON out: the options Gateway Chat and Gateway Messages share. Each node passes its
// wire form, so every description names the gateway field the value becomes.

/** `options.binaryAttachments`: binary fields of the input item, into the last User message. */
export function binaryAttachmentsOption(wireForm: string, limits: string): INodeProperties {
	return {
		displayName: 'Binary Attachments',
		name: 'binaryAttachments',
		type: 'string',
		default: '',
		placeholder: 'e.g. data, invoice',
		description: `Binary fields of the input item to send with the last User message, comma-separated: PNG, JPEG, GIF and WebP images and PDF documents (${wireForm}). The type is read from each file's bytes.`,
		hint: `${limits} Anything else is refused before sending.`,
	};
}

/** `options.urlAttachments`: image links, sent as given; the gateway fetches them. */
export function urlAttachmentsOption(wireForm: string): INodeProperties {
	return {
		displayName: 'Image URLs',
		name: 'urlAttachments',
		type: 'string',
		typeOptions: { rows: 2 },
		default: '',
		placeholder: 'e.g. https://example.com/photo.jpg',
		description: `Links to images to send with the last User message, one per line or comma-separated (${wireForm}). They are sent as given: the gateway fetches them.`,
	};
}

/** `options.responseFormat`: text, or a JSON answer parsed into `json.data`. */
export function responseFormatOption(wireForm: string): INodeProperties {
	return {
		displayName: 'Response Format',
		name: 'responseFormat',
		type: 'options',
		options: [
			{ name: 'JSON Object', value: 'jsonObject', description: 'Any JSON object, parsed into the `data` output field' },
			{ name: 'JSON Schema', value: 'jsonSchema', description: 'A JSON object that follows the Response JSON Schema option, parsed into `data`' },
			{ name: 'Text', value: 'text', description: 'The answer as it is written' },
		],
		default: 'text',
		description: `Whether to ask for the answer as JSON (${wireForm}). The parsed JSON is in the \`data\` output field, streamed or not.`,
		hint: 'An answer that is not JSON is an error that quotes its start',
	};
}

export const jsonSchemaOption: INodeProperties = {
	displayName: 'Response JSON Schema',
	name: 'jsonSchema',
	type: 'json',
	default: '{\n  "type": "object",\n  "properties": {\n    "summary": { "type": "string" }\n  },\n  "required": ["summary"],\n  "additionalProperties": false\n}',
	displayOptions: { show: { responseFormat: ['jsonSchema'] } },
	description: 'The JSON Schema the answer must follow, as a JSON object',
};

