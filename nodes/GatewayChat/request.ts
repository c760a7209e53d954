/**
 * Gateway Chat's input: the item's parameters, checked, and the chat-completions body built
 * from them (pure, so unit tests cover every field).
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { CHAT_LIMIT } from '../shared/chat/chatCall';

import {
	BINARY_ATTACHMENTS_FIELD,
	URL_ATTACHMENTS_FIELD,
	attachmentParts,
	readAttachmentNames,
	readImageUrls,
	requireUserMessage,
	withAttachments,
	withPlannedAttachments,
} from '../shared/files/attachments';
import type { FileAttachment, LoadedFile } from '../shared/files/attachments';
import { requestBody } from '../shared/items/body';
import { readChatDeadline, readEffort, readMaxTokens, readMessages, readOptionalNumber, readStopSequences } from '../shared/chat/chatInput';
import type { ChatMessage } from '../shared/chat/chatInput';
import { readJsonRequest } from '../shared/chat/jsonReply';
import type { JsonRequest } from '../shared/chat/jsonReply';
import { readExtraBody, readModelId } from '../shared/items/validate';
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
	/** Binary Attachments: the field names; `files` once they are read and checked. */
	binaryAttachments?: string[];
	files?: FileAttachment[];
	/** Image URLs, as given. */
	imageUrls?: string[];
	/** Response Format JSON Object or JSON Schema. */
	json?: JsonRequest;
	extraBody: IDataObject;
	includeRawResponse: boolean;
	deadlineMs: number;
}

/** Reads and checks the parameters of one item (the files are read by `prepareChatInput`). */
export function readChatInput(ctx: IExecuteFunctions, itemIndex: number): ChatInput {
	const model = readModelId(ctx, itemIndex);
	const options = ctx.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const messages = readMessages(ctx, itemIndex, CHAT_ROLES);
	const binaryAttachments = readAttachmentNames(ctx, itemIndex, options.binaryAttachments);
	const imageUrls = readImageUrls(ctx, itemIndex, options.urlAttachments);
	if (binaryAttachments || imageUrls) requireUserMessage(ctx, itemIndex, messages, binaryAttachments ? BINARY_ATTACHMENTS_FIELD : URL_ATTACHMENTS_FIELD);
	return {
		model,
		messages,
		maxTokens: readMaxTokens(ctx, itemIndex, model),
		stream: ctx.getNodeParameter('stream', itemIndex, false) === true,
		effort: readEffort(ctx, itemIndex, options.effort),
		temperature: readOptionalNumber(ctx, itemIndex, options.temperature, 'Temperature', { min: 0, max: 2 }),
		topP: readOptionalNumber(ctx, itemIndex, options.topP, 'Top P', { min: 0, max: 1 }),
		stop: readStopSequences(ctx, itemIndex, options.stop, 'Stop Sequences', MAX_STOP_SEQUENCES),
		binaryAttachments,
		imageUrls,
		json: readJsonRequest(ctx, itemIndex, options),
		extraBody: readExtraBody(ctx, itemIndex),
		includeRawResponse: options.includeRawResponse === true,
		deadlineMs: readChatDeadline(ctx, itemIndex, options),
	};
}

/** The whole check of one item, before any request: parameters, then its files and the request size. */
export async function prepareChatInput(ctx: IExecuteFunctions, itemIndex: number): Promise<ChatInput> {
	return await withPlannedAttachments(ctx, itemIndex, readChatInput(ctx, itemIndex), 'chat', chatRequestBody, CHAT_LIMIT);
}

/** `response_format`: left out for text. */
function responseFormat(json: JsonRequest | undefined): IDataObject | undefined {
	if (!json) return undefined;
	if (json.format === 'jsonObject') return { type: 'json_object' };
	return { type: 'json_schema', json_schema: { name: 'response', schema: json.schema, strict: true } };
}

/**
 * The `POST /v1/chat/completions` body: Extra Body Fields first, the node's fields on top. `files`
 * are the item's attachments with their data (loadAttachments); with the Image URLs they go into
 * the last User message as content parts.
 */
export function chatRequestBody(input: ChatInput, files: readonly LoadedFile[] = []): IDataObject {
	return requestBody(input.extraBody, {
		model: input.model,
		messages: withAttachments(input.messages, attachmentParts('chat', files, input.imageUrls)),
		max_tokens: input.maxTokens,
		stream: input.stream,
		// Without this, chat-completions streams carry no usage.
		stream_options: input.stream ? { include_usage: true } : undefined,
		reasoning_effort: input.effort,
		temperature: input.temperature,
		top_p: input.topP,
		stop: input.stop,
		response_format: responseFormat(input.json),
	}, ['stream_options']);
}
