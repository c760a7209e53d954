/**
 * Gateway Messages' input: the item's parameters, checked (thinking budget included), and the
 * native messages body built from them (pure, so unit tests cover every field).
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { requestBody } from '../shared/body';
import { readChatDeadline, readEffort, readMaxTokens, readMessages, readOptionalNumber, readStopSequences } from '../shared/chatInput';
import type { ChatMessage } from '../shared/chatInput';
import { fieldError, readExtraBody, readInteger, readModelId } from '../shared/validate';
import { MESSAGES_ROLES, MIN_THINKING_BUDGET } from './description';

/** The version of the native format these bodies follow; a custom header of the same name wins. */
export const MESSAGES_HEADERS: Record<string, string> = { 'anthropic-version': '2023-06-01' };

export type ThinkingMode = 'off' | 'adaptive' | 'enabled';

export interface MessagesInput {
	model: string;
	messages: ChatMessage[];
	maxTokens: number;
	stream: boolean;
	system?: string;
	effort?: string;
	thinking: ThinkingMode;
	thinkingBudget?: number;
	temperature?: number;
	stopSequences?: string[];
	extraBody: IDataObject;
	includeRawResponse: boolean;
	deadlineMs: number;
}

function readThinking(ctx: IExecuteFunctions, itemIndex: number, options: IDataObject, maxTokens: number): Pick<MessagesInput, 'thinking' | 'thinkingBudget'> {
	const mode = String(options.thinking ?? 'off') as ThinkingMode;
	if (!['off', 'adaptive', 'enabled'].includes(mode)) {
		throw fieldError(ctx, itemIndex, 'Thinking', `must be off, adaptive or enabled, not "${mode}"`);
	}
	if (mode !== 'enabled') return { thinking: mode };
	const budget = readInteger(ctx, itemIndex, options.thinkingBudget ?? 2048, 'Thinking Budget', { min: MIN_THINKING_BUDGET });
	if (budget >= maxTokens) {
		throw fieldError(ctx, itemIndex, 'Thinking Budget', `must be below "Max Tokens" (${maxTokens}), not ${budget}`, 'Thinking counts towards Max Tokens: raise Max Tokens or lower the budget.');
	}
	return { thinking: mode, thinkingBudget: budget };
}

export function readMessagesInput(ctx: IExecuteFunctions, itemIndex: number): MessagesInput {
	const model = readModelId(ctx, itemIndex);
	const options = ctx.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const maxTokens = readMaxTokens(ctx, itemIndex, model);
	const system = typeof options.system === 'string' && options.system.trim() !== '' ? options.system : undefined;
	return {
		model,
		messages: readMessages(ctx, itemIndex, MESSAGES_ROLES),
		maxTokens,
		stream: ctx.getNodeParameter('stream', itemIndex, false) === true,
		system,
		effort: readEffort(ctx, itemIndex, options.effort),
		...readThinking(ctx, itemIndex, options, maxTokens),
		temperature: readOptionalNumber(ctx, itemIndex, options.temperature, 'Temperature', { min: 0, max: 1 }),
		stopSequences: readStopSequences(ctx, itemIndex, options.stopSequences, 'Stop Sequences'),
		extraBody: readExtraBody(ctx, itemIndex),
		includeRawResponse: options.includeRawResponse === true,
		deadlineMs: readChatDeadline(ctx, itemIndex, options),
	};
}

function thinkingField(input: MessagesInput): IDataObject | undefined {
	if (input.thinking === 'adaptive') return { type: 'adaptive' };
	if (input.thinking === 'enabled') return { type: 'enabled', budget_tokens: input.thinkingBudget };
	return undefined;
}

/** The `POST /v1/messages` body: Extra Body Fields first, the node's fields on top. */
export function messagesRequestBody(input: MessagesInput): IDataObject {
	return requestBody(input.extraBody, {
		model: input.model,
		max_tokens: input.maxTokens,
		messages: input.messages.map(({ role, content }) => ({ role, content })),
		stream: input.stream,
		system: input.system,
		thinking: thinkingField(input),
		output_config: input.effort !== undefined ? { effort: input.effort } : undefined,
		temperature: input.temperature,
		stop_sequences: input.stopSequences,
	}, ['output_config']);
}
