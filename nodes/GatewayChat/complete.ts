/** POST /v1/chat/completions for every item, streamed or not, with the same output either way. */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { attachedBody } from '../shared/files/attachments';
import { callChat } from '../shared/chat/chatCall';
import { runPerItem } from '../shared/items/itemRunner';
import { jsonReplyData } from '../shared/chat/jsonReply';
import { ChatCompletionStream, chatAnswerText, chatOutput, chatReplyProblem } from '../shared/chat/completions';
import type { ChatCompletion } from '../shared/chat/completions';
import { prepareChatItem } from './request';

const WHAT = 'The chat request';

export async function complete(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await runPerItem(this, {
		prepare: async (itemIndex) => await prepareChatItem(this, itemIndex),
		run: async ({ request, body, attachments }, itemIndex, client) => {
			const completion = await callChat<ChatCompletion>(this, client, {
				path: '/v1/chat/completions',
				body: await attachedBody(this, itemIndex, body, attachments),
				stream: request.stream,
				itemIndex,
				what: WHAT,
				deadlineMs: request.deadlineMs,
				idleMs: request.idleMs,
				replyStream: ChatCompletionStream,
				answerText: chatAnswerText,
				replyProblem: chatReplyProblem,
			});
			let json = chatOutput(completion);
			if (request.json) {
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
				json = { data: data as IDataObject, ...json };
			}
			if (request.includeRawResponse) json.rawResponse = completion;
			return { json };
		},
	});
}
