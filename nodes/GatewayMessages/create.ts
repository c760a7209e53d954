/** POST /v1/messages for every item, streamed or not, with the same output either way. */
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { callChat } from '../shared/chatCall';
import { runPerItem } from '../shared/itemRunner';
import { MessageEventStream, messagesAnswerText, messagesOutput, messagesReplyProblem } from './reply';
import type { NativeMessage } from './reply';
import { MESSAGES_HEADERS, messagesRequestBody, readMessagesInput } from './request';

export async function createMessage(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await runPerItem(this, {
		prepare: (itemIndex) => readMessagesInput(this, itemIndex),
		run: async (input, itemIndex, client) => {
			const message = await callChat<NativeMessage>(this, client, {
				path: '/v1/messages',
				body: messagesRequestBody(input),
				stream: input.stream,
				itemIndex,
				what: 'The messages request',
				deadlineMs: input.deadlineMs,
				headers: MESSAGES_HEADERS,
				newReplyStream: () => new MessageEventStream(),
				answerText: messagesAnswerText,
				replyProblem: messagesReplyProblem,
			});
			const json = messagesOutput(message);
			if (input.includeRawResponse) json.rawResponse = message;
			return { json };
		},
	});
}
