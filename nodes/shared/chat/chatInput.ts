/**
 * The input Gateway Chat and Gateway Messages read alike: the conversation rows, the output-token
 * limit of the model, sampling numbers, stop sequences, effort and the request's time limit.
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { DEFAULT_MAX_TOKENS, DEFAULT_CHAT_TIMEOUT_SECONDS, EFFORT_LEVELS } from './chatDescriptions';
import { findModel } from '../panel/models';
import { fieldError, readInteger } from '../items/validate';

export interface ChatMessage {
	role: string;
	content: string;
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

/** `maxTokens`: a whole number from 1 to the model's output limit where the catalogue knows it. */
export function readMaxTokens(ctx: IExecuteFunctions, itemIndex: number, modelId: string): number {
	return checkedMaxTokens(ctx, itemIndex, modelId, ctx.getNodeParameter('maxTokens', itemIndex, DEFAULT_MAX_TOKENS));
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

/** `options.timeoutSeconds`: the hard limit for one answer, streamed or not, in milliseconds. */
export function readChatDeadline(ctx: IExecuteFunctions, itemIndex: number, options: IDataObject): number {
	const seconds = readInteger(ctx, itemIndex, options.timeoutSeconds ?? DEFAULT_CHAT_TIMEOUT_SECONDS, 'Timeout (Seconds)', { min: 1, max: 86_400 });
	return seconds * 1000;
}
