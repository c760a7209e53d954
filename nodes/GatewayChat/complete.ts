/** POST /v1/chat/completions for every item, streamed or not, with the same output either way. */
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { callChat } from '../shared/chatCall';
import { runPerItem } from '../shared/itemRunner';
import { ChatCompletionStream, chatAnswerText, chatOutput, chatReplyProblem } from './reply';
import type { ChatCompletion } from './reply';
import { chatRequestBody, readChatInput } from './request';

export async function complete(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await runPerItem(this, {
		prepare: (itemIndex) => readChatInput(this, itemIndex),
		run: async (input, itemIndex, client) => {
			const completion = await callChat<ChatCompletion>(this, client, {
				path: '/v1/chat/completions',
				body: chatRequestBody(input),
				stream: input.stream,
				itemIndex,
				what: 'The chat request',
				deadlineMs: input.deadlineMs,
				newReplyStream: () => new ChatCompletionStream(),
				answerText: chatAnswerText,
				replyProblem: chatReplyProblem,
			});
			const json = chatOutput(completion);
			if (input.includeRawResponse) json.rawResponse = completion;
			return { json };
		},
	});
}
