/**
 * Gateway Chat's input: the item's parameters, checked, and the chat-completions body built
 * from them (pure, so unit tests cover every field).
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { requestBody } from '../shared/body';
import { readChatDeadline, readEffort, readMaxTokens, readMessages, readOptionalNumber, readStopSequences } from '../shared/chatInput';
import type { ChatMessage } from '../shared/chatInput';
import { readExtraBody, readModelId } from '../shared/validate';
import { CHAT_ROLES } from './description';

/** The chat-completions format takes at most four stop sequences. */
const MAX_STOP_SEQUENCES = 4;

export interface ChatInput {
	model: string;
	messages: ChatMessage[];
	maxTokens: number;
	stream: boolean;
	effort?: string;
	temperature?: number;
	topP?: number;
	stop?: string[];
	extraBody: IDataObject;
	includeRawResponse: boolean;
	deadlineMs: number;
}

export function readChatInput(ctx: IExecuteFunctions, itemIndex: number): ChatInput {
	const model = readModelId(ctx, itemIndex);
	const options = ctx.getNodeParameter('options', itemIndex, {}) as IDataObject;
	return {
		model,
		messages: readMessages(ctx, itemIndex, CHAT_ROLES),
		maxTokens: readMaxTokens(ctx, itemIndex, model),
		stream: ctx.getNodeParameter('stream', itemIndex, false) === true,
		effort: readEffort(ctx, itemIndex, options.effort),
		temperature: readOptionalNumber(ctx, itemIndex, options.temperature, 'Temperature', { min: 0, max: 2 }),
		topP: readOptionalNumber(ctx, itemIndex, options.topP, 'Top P', { min: 0, max: 1 }),
		stop: readStopSequences(ctx, itemIndex, options.stop, 'Stop Sequences', MAX_STOP_SEQUENCES),
		extraBody: readExtraBody(ctx, itemIndex),
		includeRawResponse: options.includeRawResponse === true,
		deadlineMs: readChatDeadline(ctx, itemIndex, options),
	};
}

/** The `POST /v1/chat/completions` body: Extra Body Fields first, the node's fields on top. */
export function chatRequestBody(input: ChatInput): IDataObject {
	return requestBody(input.extraBody, {
		model: input.model,
		messages: input.messages.map(({ role, content }) => ({ role, content })),
		max_tokens: input.maxTokens,
		stream: input.stream,
		// Without this, chat-completions streams carry no usage.
		stream_options: input.stream ? { include_usage: true } : undefined,
		reasoning_effort: input.effort,
		temperature: input.temperature,
		top_p: input.topP,
		stop: input.stop,
	}, ['stream_options']);
}
