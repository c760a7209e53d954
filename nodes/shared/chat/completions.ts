/**
 * Chat-completions replies: the output item from a `chat.completion`, and the stream of
 * `chat.completion.chunk` events rebuilt into that same `chat.completion`, so the output is the
 * same with or without Stream.
 */
import type { IDataObject } from 'n8n-workflow';

import { ReplyStream, StreamFault } from './chatCall';
import type { ChatWire } from './chatCall';
import type { ServerSentEvent } from '../wire/sse';

export interface ChatCompletion extends IDataObject {
	id?: string;
	object?: string;
	created?: number;
	model?: string;
	choices?: IDataObject[];
	usage?: IDataObject;
	error?: IDataObject;
}

/** A message's text: a string, or (some relays) content parts `[{type: 'text', text}]` joined. */
export function contentText(content: unknown): string {
	if (typeof content === 'string') return content;
	if (Array.isArray(content)) return content.map((part) => (typeof (part as IDataObject)?.text === 'string' ? ((part as IDataObject).text as string) : '')).join('');
	return '';
}

/** The node's output `json` (without rawResponse). */
export function chatOutput(completion: ChatCompletion): IDataObject {
	const choice = completion.choices?.[0] ?? {};
	const message = (choice.message ?? {}) as IDataObject;
	const json: IDataObject = {
		text: contentText(message.content),
		model: completion.model ?? null,
		finishReason: (choice.finish_reason as string | undefined) ?? null,
		usage: completion.usage ?? null,
	};
	// Relays name it `reasoning_content` (most) or `reasoning`.
	const reasoning = contentText(message.reasoning_content ?? message.reasoning);
	if (reasoning !== '') json.reasoning = reasoning;
	if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) json.toolCalls = message.tool_calls;
	return json;
}

export function chatAnswerText(completion: ChatCompletion): string {
	return chatOutput(completion).text as string;
}

/** What a whole answer lacks to be a reply: at least one choice with a message. */
export function chatReplyProblem(completion: ChatCompletion): string | undefined {
	if (!Array.isArray(completion.choices) || completion.choices.length === 0) return 'choices';
	const message = completion.choices[0]?.message;
	if (typeof message !== 'object' || message === null) return 'message in its first choice';
	return undefined;
}

interface ToolCallParts {
	/** The `index` the gateway gave (0 when none), then the order of arrival: the calls' order. */
	index: number;
	order: number;
	id?: string;
	type?: string;
	name?: string;
	arguments: string[];
}

interface ChoiceParts {
	content: string[];
	reasoning: string[];
	toolCalls: ToolCallParts[];
	/** The call that pieces at each index continue: the last one started there. */
	openCalls: Map<number, ToolCallParts>;
	finishReason: string | null;
}

/** `data:` chunks, a usage chunk with empty `choices`, then `data: [DONE]`. */
export class ChatCompletionStream extends ReplyStream<ChatCompletion> {
	readonly endMark = 'data: [DONE]';
	private head: IDataObject = {};
	private usage: IDataObject | undefined;
	private readonly choices = new Map<number, ChoiceParts>();

	protected takePayload(chunk: IDataObject, event: ServerSentEvent): string | undefined {
		if (event.event === 'error' || (chunk.error !== undefined && chunk.error !== null)) throw StreamFault.reported(chunk);
		// Named one by one rather than looped over by key: this runs once per event of the stream.
		if (chunk.id !== undefined && chunk.id !== null) this.head.id = chunk.id;
		if (chunk.created !== undefined && chunk.created !== null) this.head.created = chunk.created;
		if (chunk.model !== undefined && chunk.model !== null) this.head.model = chunk.model;
		if (chunk.system_fingerprint !== undefined && chunk.system_fingerprint !== null) this.head.system_fingerprint = chunk.system_fingerprint;
		if (chunk.usage && typeof chunk.usage === 'object') this.usage = chunk.usage as IDataObject;
		let text: string | undefined;
		for (const choice of (Array.isArray(chunk.choices) ? chunk.choices : []) as IDataObject[]) {
			const index = Number(choice.index ?? 0);
			const parts = this.choiceParts(index);
			const delta = (choice.delta ?? {}) as IDataObject;
			if (typeof delta.content === 'string' && delta.content !== '') {
				parts.content.push(delta.content);
				if (index === 0) text = text === undefined ? delta.content : text + delta.content;
			}
			const reasoning = delta.reasoning_content ?? delta.reasoning;
			if (typeof reasoning === 'string' && reasoning !== '') parts.reasoning.push(reasoning);
			if (Array.isArray(delta.tool_calls)) this.takeToolCalls(parts, delta.tool_calls as IDataObject[]);
			if (typeof choice.finish_reason === 'string') parts.finishReason = choice.finish_reason;
		}
		return text;
	}

	reply(): ChatCompletion {
		const choices = [...this.choices.entries()]
			.sort(([a], [b]) => a - b)
			.map(([index, parts]) => {
				const message: IDataObject = { role: 'assistant', content: parts.content.join('') };
				if (parts.reasoning.length > 0) message.reasoning_content = parts.reasoning.join('');
				if (parts.toolCalls.length > 0) {
					message.tool_calls = [...parts.toolCalls]
						.sort((a, b) => a.index - b.index || a.order - b.order)
						.map((call) => ({ id: call.id, type: call.type ?? 'function', function: { name: call.name, arguments: call.arguments.join('') } }));
				}
				return { index, message, finish_reason: parts.finishReason };
			});
		const completion: ChatCompletion = { ...this.head, object: 'chat.completion', choices };
		if (this.usage) completion.usage = this.usage;
		return completion;
	}

	private choiceParts(index: number): ChoiceParts {
		let parts = this.choices.get(index);
		if (!parts) {
			parts = { content: [], reasoning: [], toolCalls: [], openCalls: new Map(), finishReason: null };
			this.choices.set(index, parts);
		}
		return parts;
	}

	/**
	 * A piece continues the call open at its index, unless it names another id: then it starts a
	 * call of its own (Gemini's endpoint sends no index, and relays have sent index 0 for every
	 * call, each whole under its own id; joined, they would be one garbled call).
	 */
	private takeToolCalls(parts: ChoiceParts, deltas: IDataObject[]): void {
		for (const delta of deltas) {
			const index = Number(delta.index ?? 0);
			const id = typeof delta.id === 'string' && delta.id !== '' ? delta.id : undefined;
			let call = parts.openCalls.get(index);
			if (!call || (id !== undefined && call.id !== undefined && call.id !== id)) {
				call = { index, order: parts.toolCalls.length, arguments: [] };
				parts.toolCalls.push(call);
				this.toolCallsBegun++;
				parts.openCalls.set(index, call);
			}
			if (id !== undefined) call.id = id;
			if (typeof delta.type === 'string') call.type = delta.type;
			const fn = (delta.function ?? {}) as IDataObject;
			if (typeof fn.name === 'string') call.name = (call.name ?? '') + fn.name;
			if (typeof fn.arguments === 'string') call.arguments.push(fn.arguments);
		}
	}
}

/** The chat-completions format as callChat speaks it (Gateway Chat; the Chat Model takes its path and reply check). */
export const CHAT_COMPLETIONS: ChatWire<ChatCompletion> = { path: '/v1/chat/completions', replyStream: ChatCompletionStream, answerText: chatAnswerText, replyProblem: chatReplyProblem };
