/**
 * The parameters Gateway Chat and Gateway Messages read alike, once per item, before any request:
 * `readChatParameters` reads every one of them into a plain typed object, in the order the panel
 * shows them, and each node adds what only it has. Every error names the field and the item.
 * The Chat Model sub-node reads its options with the same checks.
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { CHAT_LIMIT_RANGE, DEFAULT_IDLE_TIMEOUT_SECONDS, DEFAULT_MAX_TOKENS, DEFAULT_CHAT_TIMEOUT_SECONDS, EFFORT_LEVELS } from './chatDescriptions';
import { CHAT_IDLE_LIMIT, CHAT_LIMIT } from './chatCall';
import { readJsonRequest } from './jsonReply';
import type { JsonRequest } from './jsonReply';
import { BINARY_ATTACHMENTS_FIELD, URL_ATTACHMENTS_FIELD, lastUserIndex } from '../files/attachments';
import type { AttachmentPlan } from '../files/attachments';
import { isHttpUrl } from '../credential/url';
import { findModel } from '../panel/models';
import { checkedExtraBody, fieldError, readInteger, readList, readModelId } from '../items/validate';

/** One row of the conversation; a plain object type, so that it goes into a request body as it is. */
export type ChatMessage = { role: string; content: string };

/** What the two formats read differently: the roles, the Temperature range, the stop option. */
export interface ChatFormatFields {
	roles: readonly string[];
	temperature: { min: number; max: number };
	/** The option that holds the stop sequences (`stop`, `stopSequences`). */
	stopOption: string;
	/** How many stop sequences the format takes, when it limits them. */
	maxStopSequences?: number;
}

/** Every parameter both chat nodes read, checked. */
export interface ChatParameters {
	model: string;
	messages: ChatMessage[];
	maxTokens: number;
	stream: boolean;
	effort?: string;
	temperature?: number;
	stopSequences?: string[];
	/** Binary Attachments: the binary field names, as given (their files are planned by planAttachments). */
	binaryAttachments?: string[];
	/** Image URLs, as given. */
	imageUrls?: string[];
	/** Response Format JSON Object or JSON Schema. */
	json?: JsonRequest;
	extraBody: IDataObject;
	includeRawResponse: boolean;
	deadlineMs: number;
	/** Idle Timeout of a streamed answer, in ms. */
	idleMs: number;
}

/** What a chat item sends: its request, the body built from it (without files) and its attachments' plan. */
export interface ChatItem<R extends ChatParameters> {
	request: R;
	body: IDataObject;
	attachments?: AttachmentPlan;
}

/**
 * Reads and checks one item's chat parameters; `options` is the Options collection, for what
 * only one node reads from it.
 */
export function readChatParameters(ctx: IExecuteFunctions, itemIndex: number, fields: ChatFormatFields): { parameters: ChatParameters; options: IDataObject } {
	const model = readModelId(ctx, itemIndex);
	const options = ctx.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const messages = readMessages(ctx, itemIndex, fields.roles);
	const binaryAttachments = readAttachmentNames(ctx, itemIndex, options.binaryAttachments);
	const imageUrls = readImageUrls(ctx, itemIndex, options.urlAttachments);
	// Attachments need a User message to go into.
	if ((binaryAttachments || imageUrls) && lastUserIndex(messages) === -1) {
		const field = binaryAttachments ? BINARY_ATTACHMENTS_FIELD : URL_ATTACHMENTS_FIELD;
		throw fieldError(ctx, itemIndex, field, 'needs a message with the role "User" to attach to', 'Add a User message: the files go into the last one.');
	}
	const parameters: ChatParameters = {
		model,
		messages,
		maxTokens: checkedMaxTokens(ctx, itemIndex, model, ctx.getNodeParameter('maxTokens', itemIndex, DEFAULT_MAX_TOKENS)),
		stream: ctx.getNodeParameter('stream', itemIndex, false) === true,
		effort: readEffort(ctx, itemIndex, options.effort),
		temperature: readOptionalNumber(ctx, itemIndex, options.temperature, 'Temperature', fields.temperature),
		stopSequences: readStopSequences(ctx, itemIndex, options[fields.stopOption], 'Stop Sequences', fields.maxStopSequences),
		binaryAttachments,
		imageUrls,
		json: readJsonRequest(ctx, itemIndex, options),
		extraBody: checkedExtraBody(ctx, itemIndex, options.extraBody),
		includeRawResponse: options.includeRawResponse === true,
		...readChatLimits(ctx, itemIndex, options),
	};
	return { parameters, options };
}

/** `options.binaryAttachments`: binary field names, comma-separated (or a list from an expression). */
export function readAttachmentNames(ctx: IExecuteFunctions, itemIndex: number, value: unknown): string[] | undefined {
	return readList(ctx, itemIndex, value, BINARY_ATTACHMENTS_FIELD, /[,\n]/);
}

/**
 * `options.urlAttachments`: image links, one per line or comma-separated. A comma splits only
 * where the next link begins, so links with commas in them (image CDNs use them) stay whole.
 */
export function readImageUrls(ctx: IExecuteFunctions, itemIndex: number, value: unknown): string[] | undefined {
	const list = readList(ctx, itemIndex, value, URL_ATTACHMENTS_FIELD, /\r?\n|,\s*(?=[a-z][a-z0-9+.-]*:)/i);
	list?.forEach((link, position) => {
		if (!isHttpUrl(link) || /\s/.test(link)) {
			throw fieldError(
				ctx,
				itemIndex,
				URL_ATTACHMENTS_FIELD,
				`entry ${position + 1} ("${link.slice(0, 80)}") is not an http(s) link`,
				'Enter image links such as https://example.com/photo.jpg, one per line or separated by commas. For a file of the input item, use Binary Attachments.',
			);
		}
	});
	return list;
}

/** The rows of the `messages` fixedCollection, checked: known roles, no empty content. */
export function readMessages(ctx: IExecuteFunctions, itemIndex: number, roles: readonly string[]): ChatMessage[] {
	const rows = ctx.getNodeParameter('messages.values', itemIndex, []) as unknown;
	const list = Array.isArray(rows) ? (rows as IDataObject[]) : [];
	if (list.length === 0) {
		throw fieldError(ctx, itemIndex, 'Messages', 'must contain at least one message', 'Add a message with the role "User".');
	}
	return list.map((row, position) => {
		const role = String(row?.role ?? 'user');
		if (!roles.includes(role)) {
			throw fieldError(ctx, itemIndex, 'Messages', `row ${position + 1} has the role "${role}"; use one of: ${roles.join(', ')}`);
		}
		const raw = row?.content;
		const content = raw === undefined || raw === null ? '' : typeof raw === 'string' ? raw : JSON.stringify(raw);
		if (content.trim() === '') {
			throw fieldError(ctx, itemIndex, 'Messages', `row ${position + 1} (${role}) has no content`, 'Write the message text, or remove the row.');
		}
		return { role, content };
	});
}

/**
 * Max Tokens as given (`value`), checked against the model's output limit; when not given, the
 * default of 4096, or the model's limit if that is lower. Always a number: relays that translate
 * into the native format need `max_tokens`.
 */
export function checkedMaxTokens(ctx: IExecuteFunctions, itemIndex: number, modelId: string, value: unknown): number {
	const limit = findModel(modelId)?.maxOutputTokens;
	if (value === undefined || value === null || value === '') return Math.min(DEFAULT_MAX_TOKENS, limit ?? DEFAULT_MAX_TOKENS);
	const tokens = readInteger(ctx, itemIndex, value, 'Max Tokens', { min: 1 });
	if (limit !== undefined && tokens > limit) {
		throw fieldError(ctx, itemIndex, 'Max Tokens', `must be at most ${limit} for ${modelId}, not ${tokens}`, `${modelId} writes at most ${limit} tokens per answer.`);
	}
	return tokens;
}

/** An optional number option within [min, max]; undefined when the option was not added. */
export function readOptionalNumber(
	ctx: IExecuteFunctions,
	itemIndex: number,
	value: unknown,
	field: string,
	range: { min: number; max: number },
): number | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	const number = typeof value === 'number' ? value : Number(String(value).trim());
	if (!Number.isFinite(number) || number < range.min || number > range.max) {
		throw fieldError(ctx, itemIndex, field, `must be a number from ${range.min} to ${range.max}, not ${JSON.stringify(value)}`);
	}
	return number;
}

/** Stop sequences given as a list or one text; empty entries dropped. */
export function readStopSequences(ctx: IExecuteFunctions, itemIndex: number, value: unknown, field: string, max?: number): string[] | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	const list = (Array.isArray(value) ? value : [value]).map((entry) => (typeof entry === 'string' ? entry : String(entry ?? ''))).filter((entry) => entry !== '');
	if (list.length === 0) return undefined;
	if (max !== undefined && list.length > max) throw fieldError(ctx, itemIndex, field, `may hold at most ${max} sequences, not ${list.length}`);
	return list;
}

export function readEffort(ctx: IExecuteFunctions, itemIndex: number, value: unknown): string | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	const effort = String(value);
	if (!EFFORT_LEVELS.some((level) => level.value === effort)) {
		throw fieldError(ctx, itemIndex, 'Effort', `must be one of ${EFFORT_LEVELS.map((level) => level.value).join(', ')}, not "${effort}"`);
	}
	return effort;
}

/**
 * `options.timeoutSeconds` (the hard limit for one answer, streamed or not) and
 * `options.idleTimeoutSeconds` (a streamed answer's idle limit), in milliseconds. An idle limit at
 * or above Timeout is taken as it is and changes nothing: the transport arms no idle limit that
 * the deadline would not beat (transport.ts, GatewayCall.idle), so it is never refused.
 */
export function readChatLimits(ctx: IExecuteFunctions, itemIndex: number, options: IDataObject): { deadlineMs: number; idleMs: number } {
	const milliseconds = (seconds: unknown, field: string) => readInteger(ctx, itemIndex, seconds, field, CHAT_LIMIT_RANGE) * 1000;
	return {
		deadlineMs: milliseconds(options.timeoutSeconds ?? DEFAULT_CHAT_TIMEOUT_SECONDS, CHAT_LIMIT),
		idleMs: milliseconds(options.idleTimeoutSeconds ?? DEFAULT_IDLE_TIMEOUT_SECONDS, CHAT_IDLE_LIMIT),
	};
}
