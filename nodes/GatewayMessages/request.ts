/**
 * Gateway Messages' request: the item's parameters read once into a typed `MessagesRequest`
 * (thinking budget included), the native messages body built from it (pure, so unit tests cover
 * every field), and the item's attachments planned against that body, all before any request.
 */
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { CHAT_LIMIT } from '../shared/chat/chatCall';
import { readChatParameters } from '../shared/chat/chatInput';
import type { ChatFormatFields, ChatItem, ChatParameters } from '../shared/chat/chatInput';
import { SCHEMA_FIELD } from '../shared/chat/jsonReply';
import type { JsonRequest } from '../shared/chat/jsonReply';
import { planAttachments } from '../shared/files/attachments';
import { requestBody } from '../shared/items/body';
import { fieldError, readInteger } from '../shared/items/validate';
import { MESSAGES_ROLES, MIN_THINKING_BUDGET } from './description';

/** The version of the native format these bodies follow; a custom header of the same name wins. */
export const MESSAGES_HEADERS: Record<string, string> = { 'anthropic-version': '2023-06-01' };

/** The native messages format: its roles, Temperature from 0 to 1, its stop option. */
const MESSAGES_FIELDS: ChatFormatFields = { roles: MESSAGES_ROLES, temperature: { min: 0, max: 1 }, stopOption: 'stopSequences' };

export type ThinkingMode = 'off' | 'adaptive' | 'enabled';

export interface MessagesRequest extends ChatParameters {
	system?: string;
	thinking: ThinkingMode;
	thinkingBudget?: number;
}

function readThinking(ctx: IExecuteFunctions, itemIndex: number, options: IDataObject, maxTokens: number): Pick<MessagesRequest, 'thinking' | 'thinkingBudget'> {
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

/**
 * The JSON Schema becomes a tool's `input_schema`, which the format requires to be an object
 * schema: one without a `type` is taken as one, another type is refused.
 */
function checkToolSchema(ctx: IExecuteFunctions, itemIndex: number, json: JsonRequest | undefined): void {
	const type = json?.schema?.type;
	if (type !== undefined && type !== 'object') {
		throw fieldError(
			ctx,
			itemIndex,
			SCHEMA_FIELD,
			`must describe an object at its top level ("type": "object"), not ${JSON.stringify(type).slice(0, 40)}`,
			'Gateway Messages receives the answer as the input of a tool, which is always an object: wrap the value in a property, e.g. {"type": "object", "properties": {"items": {"type": "array"}}}.',
		);
	}
}

/** Reads and checks the parameters of one item. */
export function readMessagesRequest(ctx: IExecuteFunctions, itemIndex: number): MessagesRequest {
	const { parameters, options } = readChatParameters(ctx, itemIndex, MESSAGES_FIELDS);
	checkToolSchema(ctx, itemIndex, parameters.json);
	const system = typeof options.system === 'string' && options.system.trim() !== '' ? options.system : undefined;
	return { ...parameters, system, ...readThinking(ctx, itemIndex, options, parameters.maxTokens) };
}

/** The whole check of one item, before any request: its parameters, then its files and the request size. */
export async function prepareMessagesItem(ctx: IExecuteFunctions, itemIndex: number): Promise<ChatItem<MessagesRequest>> {
	const request = readMessagesRequest(ctx, itemIndex);
	const body = messagesRequestBody(request);
	return { request, body, attachments: await planAttachments(ctx, itemIndex, request, body, 'messages', CHAT_LIMIT) };
}

function thinkingField(input: MessagesRequest): IDataObject | undefined {
	if (input.thinking === 'adaptive') return { type: 'adaptive' };
	if (input.thinking === 'enabled') return { type: 'enabled', budget_tokens: input.thinkingBudget };
	return undefined;
}

/**
 * JSON answers: the wire form chosen for the native format. The answer is asked for as a call of
 * one tool, `respond`, whose `input_schema` is the schema (any object for JSON Object), forced
 * with `tool_choice: {"type": "tool", "name": "respond"}`; the tool call's `input` is the answer.
 * Why this form: relays pass `tools` and `tool_choice` through unchanged (tool use has been part of
 * this format from its early versions, and every relay supports it), while a prefill (an assistant
 * turn that starts with "{") is refused by newer models and with thinking, and the newer native
 * structured-output field is dropped or refused by relays built before it.
 * The one exception: with thinking on, the format refuses a forced tool choice (HTTP 400), so then
 * the tool is offered with `tool_choice: {"type": "auto"}` and the system prompt asks for it; an
 * answer that comes as text instead is parsed as JSON.
 */
export const RESPOND_TOOL = 'respond';
export const RESPOND_INSTRUCTION = `Answer by calling the ${RESPOND_TOOL} tool: its input is your whole answer.`;
const RESPOND_DESCRIPTION = 'Give your answer: the input of this tool is the whole answer, as JSON.';

/** Models that think whatever is asked (interface document 2.8: "chat-fable-5 has adaptive thinking that is always on"). */
const ALWAYS_THINKING = new Set(['chat-fable-5']);

/** Whether the request thinks: the Thinking option, a model that always does, or Extra Body Fields. */
export function thinks(input: MessagesRequest): boolean {
	if (input.thinking !== 'off' || ALWAYS_THINKING.has(input.model)) return true;
	const extra = input.extraBody.thinking as IDataObject | undefined;
	return typeof extra === 'object' && extra !== null && extra.type !== undefined && extra.type !== 'disabled';
}

/** The `respond` tool's input schema: the JSON Schema (an object schema), or any object. */
function respondSchema(json: JsonRequest): IDataObject {
	if (!json.schema) return { type: 'object' };
	return json.schema.type === undefined ? { type: 'object', ...json.schema } : json.schema;
}

function jsonFields(input: MessagesRequest): IDataObject {
	const json = input.json;
	if (!json) return { system: input.system };
	const forced = !thinks(input);
	return {
		tools: [{ name: RESPOND_TOOL, description: RESPOND_DESCRIPTION, input_schema: respondSchema(json) }],
		tool_choice: forced ? { type: 'tool', name: RESPOND_TOOL } : { type: 'auto' },
		system: forced ? input.system : [input.system, RESPOND_INSTRUCTION].filter((part) => part !== undefined).join('\n\n'),
	};
}

/**
 * The `POST /v1/messages` body: Extra Body Fields first, the node's fields on top. The attachments
 * go into its last User message as content blocks when it is sent (attachedBody).
 */
export function messagesRequestBody(input: MessagesRequest): IDataObject {
	return requestBody(input.extraBody, {
		model: input.model,
		max_tokens: input.maxTokens,
		messages: input.messages,
		stream: input.stream,
		...jsonFields(input),
		thinking: thinkingField(input),
		output_config: input.effort !== undefined ? { effort: input.effort } : undefined,
		temperature: input.temperature,
		stop_sequences: input.stopSequences,
	}, ['output_config']);
}
