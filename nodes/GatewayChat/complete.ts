/** POST /v1/chat/completions for every item, streamed or not, with the same output either way. */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { attachedBody } from '../shared/files/attachments';
import { callChat } from '../shared/chat/chatCall';
import { runPerItem } from '../shared/items/itemRunner';
import { jsonReplyData } from '../shared/chat/jsonReply';
import { CHAT_COMPLETIONS, chatOutput } from '../shared/chat/completions';
import type { ChatCompletion } from '../shared/chat/completions';
import { prepareChatItem } from './request';
import type { ChatRequest } from './request';

const WHAT = 'The chat request';

function chatItemJson(completion: ChatCompletion, request: ChatRequest, itemIndex: number): IDataObject {
	const json = chatOutput(completion);
	if (!request.json) return json;
	const text = String(json.text ?? '');
	const data = jsonReplyData({
		what: WHAT,
		text,
		itemIndex,
		json: request.json,
		cutOff: json.finishReason === 'length',
		fields: { text, model: json.model, finishReason: json.finishReason, usage: json.usage },
	});
	// First, so that the output panel shows what the next node maps.
	return { data: data as IDataObject, ...json };
}

export async function complete(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await runPerItem(this, {
		prepare: async (itemIndex) => await prepareChatItem(this, itemIndex),
		run: async ({ request, body, attachments }, itemIndex, client) => {
			const completion = await callChat(this, client, CHAT_COMPLETIONS, { ...request, body: await attachedBody(this, itemIndex, body, attachments), itemIndex, what: WHAT });
			const json = chatItemJson(completion, request, itemIndex);
			if (request.includeRawResponse) json.rawResponse = completion;
			return { json };
		},
	});
}
