/** POST /v1/messages for every item, streamed or not, with the same output either way. */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { attachedBody } from '../shared/files/attachments';
import { callChat } from '../shared/chat/chatCall';
import { runPerItem } from '../shared/items/itemRunner';
import type { ChatWire } from '../shared/chat/chatCall';
import { checkedJsonValue, jsonReplyData } from '../shared/chat/jsonReply';
import type { JsonRequest } from '../shared/chat/jsonReply';
import { MessageEventStream, messagesAnswerText, messagesOutput, messagesReplyProblem, toolInput } from './reply';
import type { NativeMessage } from './reply';
import { MESSAGES_HEADERS, RESPOND_TOOL, prepareMessagesItem } from './request';

const WHAT = 'The messages request';

export const MESSAGES_WIRE: ChatWire<NativeMessage> = { path: '/v1/messages', headers: MESSAGES_HEADERS, replyStream: MessageEventStream, answerText: messagesAnswerText, replyProblem: messagesReplyProblem };

/**
 * `json.data` of a JSON answer: the input of the `respond` tool call (see request.ts for why the
 * answer comes as a tool call), or, when the model answered in text instead, that text parsed.
 */
function answerData(json: IDataObject, message: NativeMessage, request: JsonRequest, itemIndex: number): unknown {
	const called = toolInput(message, RESPOND_TOOL);
	// The answer has no text of its own: `text` carries the JSON, as in Gateway Chat.
	if (called !== undefined && json.text === '') json.text = JSON.stringify(called);
	const text = String(json.text ?? '');
	const reply = { what: WHAT, text, itemIndex, json: request, cutOff: message.stop_reason === 'max_tokens', fields: { text, model: json.model, stopReason: json.stopReason, usage: json.usage } };
	return called !== undefined ? checkedJsonValue(reply, called) : jsonReplyData(reply);
}

export async function createMessage(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await runPerItem(this, {
		prepare: async (itemIndex) => await prepareMessagesItem(this, itemIndex),
		run: async ({ request, body, attachments }, itemIndex, client) => {
			const message = await callChat(this, client, MESSAGES_WIRE, { ...request, body: await attachedBody(this, itemIndex, body, attachments), itemIndex, what: WHAT });
			let json = messagesOutput(message);
			// First, so that the output panel shows what the next node maps.
			if (request.json) json = { data: answerData(json, message, request.json, itemIndex) as IDataObject, ...json };
			if (request.includeRawResponse) json.rawResponse = message;
			return { json };
		},
	});
}
