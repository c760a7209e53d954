/**
 * The chat-completions wire format for the Gateway Chat Model, as pure functions: n8n's messages
 * and tools (the AI node SDK's shapes) into a `POST /v1/chat/completions` body, and the gateway's
 * answer (whole, or rebuilt from its stream) back into the SDK's result and stream chunks.
 */
import type { IDataObject } from 'n8n-workflow';

import { GatewayError } from '../shared/failures/errors';
import { gatewayQuote } from '../shared/failures/errorBody';
import { contentText } from '../shared/chat/completions';
import { Base64Text } from '../shared/wire/jsonBody';

import type { FinishReason, FunctionTool, GenerateResult, Message, MessageContent, StreamChunk, TokenUsage, Tool } from '@n8n/ai-node-sdk';

/** What the node's panel sets; each is sent only when set. */
export interface ModelSettings {
	model: string;
	maxTokens?: number;
	temperature?: number;
	/** `reasoning_effort`: low, medium, high, xhigh, max. */
	effort?: string;
}

/** A tool as the chat-completions format offers it. */
export interface WireTool {
	type: 'function';
	function: { name: string; description?: string; parameters: IDataObject };
}

export interface WireToolCall {
	id: string;
	type: 'function';
	function: { name: string; arguments: string };
}

export interface WireMessage extends IDataObject {
	role: string;
}

const textOf = (content: MessageContent[]): string =>
	content
		.filter((part): part is Extract<MessageContent, { type: 'text' }> => part.type === 'text')
		.map((part) => part.text)
		.join('');

/**
 * An image part's URL: a link as it is, the image itself attached as a file (Base64Text, written as
 * a Base64 data URL), so that the request knows it carries a file (its upload is no silence).
 */
function imageUrl(part: Extract<MessageContent, { type: 'file' }>): string | Base64Text | undefined {
	const url = part.providerMetadata?.url;
	if (typeof url === 'string' && url !== '') return url;
	const { data } = part;
	// Bytes (the SDK's type allows them), Base64 text, or a data: URL with its own type.
	if (typeof data !== 'string') return data.length === 0 ? undefined : Base64Text.dataUrl(Buffer.from(data.buffer, data.byteOffset, data.byteLength), typeOf(part.mediaType));
	if (data === '') return undefined;
	if (/^https?:\/\//.test(data)) return data;
	const inline = /^data:([^;,]*);base64,/.exec(data);
	if (inline) return Base64Text.dataUrl(Buffer.from(data.slice(inline[0].length), 'base64'), typeOf(inline[1] || part.mediaType));
	return data.startsWith('data:') ? data : Base64Text.dataUrl(Buffer.from(data, 'base64'), typeOf(part.mediaType));
}

const typeOf = (mediaType: string | undefined) => mediaType || 'application/octet-stream';

const isImage = (part: MessageContent): part is Extract<MessageContent, { type: 'file' }> => part.type === 'file' && (part.mediaType ?? '').startsWith('image/');

/** A user message: plain text, or content parts when it carries images (other files are not sent, with images or without). */
function userContent(content: MessageContent[]): string | IDataObject[] {
	if (!content.some(isImage)) return textOf(content);
	const parts: IDataObject[] = [];
	for (const part of content) {
		if (part.type === 'text' && part.text !== '') parts.push({ type: 'text', text: part.text });
		if (isImage(part)) {
			const url = imageUrl(part);
			if (url) parts.push({ type: 'image_url', image_url: { url } });
		}
	}
	return parts;
}

/** A tool's result as the text the model reads. */
function resultText(result: unknown): string {
	if (typeof result === 'string') return result;
	if (Array.isArray(result)) {
		// Content blocks (n8n's own shape for a tool message with parts): their text.
		const texts = result.map((part) => (typeof (part as IDataObject)?.text === 'string' ? ((part as IDataObject).text as string) : undefined));
		if (texts.every((text) => text !== undefined)) return texts.join('');
	}
	return JSON.stringify(result) ?? String(result);
}

/** n8n's conversation as chat-completions messages; a tool message becomes one message per result. */
export function toWireMessages(messages: readonly Message[]): WireMessage[] {
	const wire: WireMessage[] = [];
	for (const message of messages) {
		if (message.role === 'tool') {
			for (const part of message.content) {
				if (part.type === 'tool-result') wire.push({ role: 'tool', tool_call_id: part.toolCallId, content: resultText(part.result) });
			}
			continue;
		}
		if (message.role === 'assistant') {
			const calls = message.content
				.filter((part): part is Extract<MessageContent, { type: 'tool-call' }> => part.type === 'tool-call')
				.map((part): WireToolCall => ({ id: part.toolCallId ?? '', type: 'function', function: { name: part.toolName, arguments: part.input || '{}' } }));
			const text = textOf(message.content);
			const entry: WireMessage = { role: 'assistant', content: calls.length && text === '' ? null : text };
			if (calls.length) entry.tool_calls = calls as unknown as IDataObject[];
			wire.push(entry);
			continue;
		}
		if (message.role === 'user') {
			wire.push({ role: 'user', content: userContent(message.content) });
			continue;
		}
		wire.push({ role: 'system', content: textOf(message.content) });
	}
	return wire;
}

/** The SDK's function tools as chat-completions tools; `schemaOf` gives a tool's JSON schema (zod or JSON). */
export function toWireTools(tools: readonly Tool[], schemaOf: (tool: FunctionTool) => unknown): WireTool[] {
	return tools
		.filter((tool): tool is FunctionTool => tool.type === 'function')
		.map((tool) => {
			const schema = schemaOf(tool);
			const parameters = typeof schema === 'object' && schema !== null ? (schema as IDataObject) : { type: 'object', properties: {} };
			const fn: WireTool['function'] = { name: tool.name, parameters };
			if (tool.description) fn.description = tool.description;
			return { type: 'function', function: fn };
		});
}

/** The request body. `stop` comes from the calling chain (e.g. a ReAct agent), never from the panel. */
export function requestBody(settings: ModelSettings, messages: WireMessage[], tools: WireTool[], options: { stream: boolean; stop?: string[] }): IDataObject {
	const body: IDataObject = { model: settings.model, messages };
	if (settings.maxTokens !== undefined) body.max_tokens = settings.maxTokens;
	if (settings.temperature !== undefined) body.temperature = settings.temperature;
	if (settings.effort !== undefined) body.reasoning_effort = settings.effort;
	if (options.stop?.length) body.stop = options.stop;
	if (tools.length) body.tools = tools as unknown as IDataObject[];
	if (options.stream) {
		body.stream = true;
		// Relays send the token count of a stream only when asked.
		body.stream_options = { include_usage: true };
	}
	return body;
}

export function finishReasonOf(reason: unknown): FinishReason {
	switch (reason) {
		case 'stop':
			return 'stop';
		case 'length':
			return 'length';
		case 'tool_calls':
		case 'function_call':
			return 'tool-calls';
		case 'content_filter':
			return 'content-filter';
		default:
			return 'other';
	}
}

/** A token count: a finite number, else undefined. */
export const count = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

/** Usage from its counts (usage.ts reads LangChain's spelling with it): none without either count; the total is their sum unless given. */
export function tokenUsage(promptTokens: number | undefined, completionTokens: number | undefined, totalTokens: number | undefined): TokenUsage | undefined {
	if (promptTokens === undefined && completionTokens === undefined) return undefined;
	return {
		promptTokens: promptTokens ?? 0,
		completionTokens: completionTokens ?? 0,
		totalTokens: totalTokens ?? (promptTokens ?? 0) + (completionTokens ?? 0),
	};
}

/** The gateway's `usage` in the SDK's words; undefined when the gateway sent none. */
export function usageOf(usage: unknown): TokenUsage | undefined {
	if (typeof usage !== 'object' || usage === null) return undefined;
	const u = usage as IDataObject;
	const result = tokenUsage(count(u.prompt_tokens) ?? count(u.input_tokens), count(u.completion_tokens) ?? count(u.output_tokens), count(u.total_tokens));
	if (!result) return undefined;
	const cached = count((u.prompt_tokens_details as IDataObject | undefined)?.cached_tokens);
	const reasoning = count((u.completion_tokens_details as IDataObject | undefined)?.reasoning_tokens);
	if (cached !== undefined) result.inputTokenDetails = { cacheRead: cached };
	if (reasoning !== undefined) result.outputTokenDetails = { reasoning };
	return result;
}

/**
 * The first choice, its message and its tool calls, with the ids and names the gateway gave (missing
 * ids made up, so calls never merge). No arguments (empty, or only whitespace) are an empty object:
 * a tool without parameters.
 */
function firstChoice(completion: IDataObject): { choice: IDataObject; message: IDataObject; calls: WireToolCall[] } {
	const choice = ((completion.choices as IDataObject[] | undefined)?.[0] ?? {}) as IDataObject;
	const message = (choice.message ?? {}) as IDataObject;
	const wireCalls = Array.isArray(message.tool_calls) ? (message.tool_calls as IDataObject[]) : [];
	const given = (call: IDataObject | undefined) => (typeof call?.id === 'string' && call.id !== '' ? call.id : undefined);
	const taken = new Set(wireCalls.map(given).filter((id) => id !== undefined));
	const calls = wireCalls.map((call, index): WireToolCall => {
		const fn = (call?.function ?? {}) as IDataObject;
		const args = typeof fn.arguments === 'string' ? fn.arguments : fn.arguments === undefined ? '{}' : JSON.stringify(fn.arguments);
		let id = given(call);
		if (id === undefined) {
			id = `call_${index}`;
			while (taken.has(id)) id = `${id}_${index}`;
			taken.add(id);
		}
		return { id, type: 'function', function: { name: String(fn.name ?? ''), arguments: args.trim() === '' ? '{}' : args } };
	});
	return { choice, message, calls };
}

/** Why a call's arguments cannot be handed to its tool (not JSON, or JSON that is not an object); undefined when they can. */
export function argumentsProblem(args: string): string | undefined {
	let value: unknown;
	try {
		value = JSON.parse(args);
	} catch {
		// The parser's own message is left out: it quotes the arguments.
		return 'not JSON (malformed, or cut off)';
	}
	if (typeof value === 'object' && value !== null && !Array.isArray(value)) return undefined;
	return `not a JSON object (${value === null ? 'null' : Array.isArray(value) ? 'a list' : `a JSON ${typeof value}`})`;
}

/** What the Chat Model's failures say failed (model.ts words every error with it). */
export const CHAT_MODEL_WHAT = 'The chat model request';

/**
 * A call whose arguments cannot be run fails the whole model call: never run (a guess such as `{}`
 * or a repaired cut-off text would run the tool with what the model did not ask for), and never
 * dropped (the agent would end as a success with an empty answer). The error names the tool and
 * quotes its arguments' start (masked at the edge).
 */
export function malformedCallError(call: WireToolCall, problem: string): GatewayError {
	return new GatewayError({
		kind: 'protocol',
		headline: `${CHAT_MODEL_WHAT} failed: the model called the tool ${call.function.name || '(no name)'} with arguments that are ${problem}`,
		gatewayMessage: gatewayQuote(call.function.arguments),
		hint: 'The tool was not run. Run the workflow again; if it keeps happening, the model or the gateway garbles tool calls: try another model.',
	});
}

/** A call as the SDK's content; a call with arguments that cannot be run fails (malformedCallError). */
function callContent(call: WireToolCall): MessageContent {
	const problem = argumentsProblem(call.function.arguments);
	if (problem !== undefined) throw malformedCallError(call, problem);
	return { type: 'tool-call', toolCallId: call.id, toolName: call.function.name, input: call.function.arguments };
}

/** A whole `chat.completion` as the SDK's result: the text, the tool calls, the finish reason and the real token usage. */
export function generateResultOf(completion: IDataObject): GenerateResult {
	const { choice, message, calls } = firstChoice(completion);
	const text = contentText(message.content);
	const content: MessageContent[] = text !== '' || calls.length === 0 ? [{ type: 'text', text }] : [];
	for (const call of calls) content.push(callContent(call));
	const providerMetadata: Record<string, unknown> = { finish_reason: choice.finish_reason ?? null };
	const reasoning = contentText(message.reasoning_content ?? message.reasoning);
	if (reasoning !== '') providerMetadata.reasoning_content = reasoning;
	if (typeof completion.model === 'string') providerMetadata.model_name = completion.model;
	const result: GenerateResult = {
		finishReason: finishReasonOf(choice.finish_reason),
		message: { role: 'assistant', content },
		providerMetadata,
	};
	if (typeof completion.id === 'string') {
		result.id = completion.id;
		result.message.id = completion.id;
	}
	const usage = usageOf(completion.usage);
	if (usage) result.usage = usage;
	return result;
}

/**
 * The end of a streamed answer as chunks: each tool call whole, under its own id, then the finish
 * with the usage. Whole calls, because n8n's adapter puts every streamed tool-call piece at
 * index 0: pieces of two calls would be glued into one unless each carries its call's id.
 */
export function closingChunks(completion: IDataObject): StreamChunk[] {
	const { choice, calls } = firstChoice(completion);
	// Every call checked before any is handed over: one malformed call fails the answer as a whole.
	for (const call of calls) callContent(call);
	const chunks: StreamChunk[] = calls.map((call): StreamChunk => ({ type: 'tool-call-delta', id: call.id, name: call.function.name, argumentsDelta: call.function.arguments }));
	const finish: StreamChunk = { type: 'finish', finishReason: finishReasonOf(choice.finish_reason) };
	const usage = usageOf(completion.usage);
	if (usage) finish.usage = usage;
	chunks.push(finish);
	return chunks;
}
