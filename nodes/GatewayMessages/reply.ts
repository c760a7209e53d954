/**
 * Native messages replies: the output item from a `message`, and the event stream
 * (`message_start`, `content_block_start/delta/stop`, `ping`, `message_delta`, `message_stop`,
 * `error`) rebuilt into that same `message`, so the output is the same with or without Stream.
 */
import type { IDataObject } from 'n8n-workflow';

import { ReplyStream, StreamFault } from '../shared/chat/chatCall';
import type { ServerSentEvent } from '../shared/wire/sse';

export interface NativeMessage extends IDataObject {
	id?: string;
	type?: string;
	role?: string;
	model?: string;
	content?: IDataObject[];
	stop_reason?: string | null;
	stop_sequence?: string | null;
	usage?: IDataObject;
}

function blocksOfType(message: NativeMessage, type: string, field: string): string[] {
	const content = Array.isArray(message.content) ? message.content : [];
	return content.filter((block) => block?.type === type && typeof block[field] === 'string').map((block) => block[field] as string);
}

/** The node's output `json` (without rawResponse). */
export function messagesOutput(message: NativeMessage): IDataObject {
	const json: IDataObject = { text: messagesAnswerText(message) };
	const thinking = blocksOfType(message, 'thinking', 'thinking');
	if (thinking.length > 0) json.thinking = thinking.join('\n\n');
	json.content = Array.isArray(message.content) ? message.content : [];
	json.model = message.model ?? null;
	json.stopReason = message.stop_reason ?? null;
	json.usage = message.usage ?? null;
	return json;
}

/** Text blocks joined as they are: the format splits one answer into several blocks (e.g. around citations). */
export function messagesAnswerText(message: NativeMessage): string {
	return blocksOfType(message, 'text', 'text').join('');
}

/** The input of the first call of tool `name` in the answer; undefined when there is none. */
export function toolInput(message: NativeMessage, name: string): unknown {
	const content = Array.isArray(message.content) ? message.content : [];
	const call = content.find((block) => block?.type === 'tool_use' && block.name === name && block.input !== undefined);
	return call?.input;
}

/** What a whole answer lacks to be a message: its content blocks. */
export function messagesReplyProblem(message: NativeMessage): string | undefined {
	return Array.isArray(message.content) ? undefined : 'content';
}

interface BlockParts {
	block: IDataObject;
	text: string[];
	thinking: string[];
	signature: string[];
	json: string[];
	citations: IDataObject[];
}

export class MessageEventStream extends ReplyStream<NativeMessage> {
	readonly endMark = 'message_stop event';
	private started = false;
	private message: NativeMessage = {};
	private readonly blocks: BlockParts[] = [];

	protected takePayload(payload: IDataObject, event: ServerSentEvent): string | undefined {
		const type = typeof payload.type === 'string' ? payload.type : event.event;
		// Nearly every event is a delta: it is looked for first.
		if (type === 'content_block_delta') return this.takeDelta(Number(payload.index ?? 0), (payload.delta ?? {}) as IDataObject);
		switch (type) {
			case 'message_start':
				this.started = true;
				this.message = { ...((payload.message ?? {}) as NativeMessage) };
				if (this.message.usage) this.message.usage = { ...this.message.usage };
				return undefined;
			case 'content_block_start': {
				const block = { ...((payload.content_block ?? {}) as IDataObject) };
				this.blocks[Number(payload.index ?? this.blocks.length)] = { block, text: [], thinking: [], signature: [], json: [], citations: [] };
				if (block.type === 'tool_use') this.toolCallsBegun++;
				return undefined;
			}
			case 'message_delta':
				this.takeMessageDelta(payload);
				return undefined;
			case 'message_stop':
				this.finished = true;
				return undefined;
			case 'error':
				throw StreamFault.reported(payload);
			default:
				// `ping`, `content_block_stop` (blocks are finished once, in reply()) and event types added later
				return undefined;
		}
	}

	/** A stream without a message (no message_start, no block) rebuilds into a message without content: the same error as that answer unstreamed. */
	reply(): NativeMessage {
		const content = this.blocks.filter((parts) => parts !== undefined).map(finishBlock);
		if (!this.started && content.length === 0) return { ...this.message };
		return { ...this.message, content };
	}

	private takeDelta(index: number, delta: IDataObject): string | undefined {
		const parts = this.blocks[index];
		if (!parts) throw StreamFault.broken(`the gateway sent a content_block_delta for block ${index}, which was never started`);
		switch (delta.type) {
			case 'text_delta': {
				const text = typeof delta.text === 'string' ? delta.text : String(delta.text ?? '');
				parts.text.push(text);
				return text;
			}
			case 'thinking_delta':
				parts.thinking.push(String(delta.thinking ?? ''));
				return undefined;
			case 'signature_delta':
				parts.signature.push(String(delta.signature ?? ''));
				return undefined;
			case 'input_json_delta':
				parts.json.push(String(delta.partial_json ?? ''));
				return undefined;
			case 'citations_delta':
				if (delta.citation && typeof delta.citation === 'object') parts.citations.push(delta.citation as IDataObject);
				return undefined;
			default:
				return undefined;
		}
	}

	private takeMessageDelta(payload: IDataObject): void {
		const delta = (payload.delta ?? {}) as IDataObject;
		for (const [key, value] of Object.entries(delta)) this.message[key] = value;
		const usage = payload.usage as IDataObject | undefined;
		if (usage && typeof usage === 'object') {
			// message_delta carries the final counts; null means "not counted here", not zero.
			const merged: IDataObject = { ...(this.message.usage ?? {}) };
			for (const [key, value] of Object.entries(usage)) if (value !== null && value !== undefined) merged[key] = value;
			this.message.usage = merged;
		}
	}
}

function finishBlock(parts: BlockParts): IDataObject {
	const block = { ...parts.block };
	for (const key of ['text', 'thinking', 'signature'] as const) if (parts[key].length > 0) block[key] = `${typeof block[key] === 'string' ? block[key] : ''}${parts[key].join('')}`;
	if (parts.citations.length > 0) block.citations = [...(Array.isArray(block.citations) ? block.citations : []), ...parts.citations];
	if (parts.json.length > 0) {
		const text = parts.json.join('');
		const input = text.trim() === '' ? {} : parseObject(text);
		if (input === undefined) throw StreamFault.broken('the gateway streamed tool input that is not JSON', text);
		block.input = input;
	}
	return block;
}

function parseObject(text: string): IDataObject | undefined {
	try {
		return JSON.parse(text) as IDataObject;
	} catch {
		return undefined;
	}
}
