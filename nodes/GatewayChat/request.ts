/**
 * Gateway Chat's request: the item's parameters read once into a typed `ChatRequest`, the
 * chat-completions body built from it (pure, so unit tests cover every field), and the item's
 * attachments planned against that body, all before any request.
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { CHAT_LIMIT } from '../shared/chat/chatCall';
import { readChatParameters, readOptionalNumber } from '../shared/chat/chatInput';
import type { ChatFormatFields, ChatItem, ChatParameters } from '../shared/chat/chatInput';
import type { JsonRequest } from '../shared/chat/jsonReply';
import { planAttachments } from '../shared/files/attachments';
import { requestBody } from '../shared/items/body';
import { CHAT_ROLES } from './description';

/** The chat-completions format: its roles, Temperature from 0 to 2, at most four stop sequences. */
const CHAT_FIELDS: ChatFormatFields = { roles: CHAT_ROLES, temperature: { min: 0, max: 2 }, stopOption: 'stop', maxStopSequences: 4 };

export interface ChatRequest extends ChatParameters {
	topP?: number;
}

/** Reads and checks the parameters of one item. */
export function readChatRequest(ctx: IExecuteFunctions, itemIndex: number): ChatRequest {
	const { parameters, options } = readChatParameters(ctx, itemIndex, CHAT_FIELDS);
	return { ...parameters, topP: readOptionalNumber(ctx, itemIndex, options.topP, 'Top P', { min: 0, max: 1 }) };
}

/** The whole check of one item, before any request: its parameters, then its files and the request size. */
export async function prepareChatItem(ctx: IExecuteFunctions, itemIndex: number): Promise<ChatItem<ChatRequest>> {
	const request = readChatRequest(ctx, itemIndex);
	const body = chatRequestBody(request);
	return { request, body, attachments: await planAttachments(ctx, itemIndex, request, body, 'chat', CHAT_LIMIT) };
}

/** `response_format`: left out for text. */
function responseFormat(json: JsonRequest | undefined): IDataObject | undefined {
	if (!json) return undefined;
	if (json.format === 'jsonObject') return { type: 'json_object' };
	return { type: 'json_schema', json_schema: { name: 'response', schema: json.schema, strict: true } };
}

/**
 * The `POST /v1/chat/completions` body: Extra Body Fields first, the node's fields on top. The
 * attachments go into its last User message as content parts when it is sent (attachedBody).
 */
export function chatRequestBody(request: ChatRequest): IDataObject {
	return requestBody(request.extraBody, {
		model: request.model,
		messages: request.messages,
		max_tokens: request.maxTokens,
		stream: request.stream,
		// Without this, chat-completions streams carry no usage.
		stream_options: request.stream ? { include_usage: true } : undefined,
		reasoning_effort: request.effort,
		temperature: request.temperature,
		top_p: request.topP,
		stop: request.stopSequences,
		response_format: responseFormat(request.json),
	}, ['stream_options']);
}
