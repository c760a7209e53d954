/** Submit: sends the task and returns at once, for flows that wait on their own (a Wait node). */
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { runPerItem } from '../shared/items/itemRunner';
import { itemDeadline } from '../shared/wire/transport';
import { readSubmitInput, submitBody } from './request';
import { refusedTaskText, taskFields } from './task';
import { mayHaveCreatedTask, refusedTaskIdOf, SUBMIT_DEADLINE_MS, SUBMIT_LIMIT_NAME, submitTask, unconfirmedSubmitWords } from './taskApi';

export async function submit(ctx: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await runPerItem(ctx, {
		prepare: (itemIndex) => readSubmitInput(ctx, itemIndex),
		run: async (input, itemIndex, client) => {
			// The frame's reads of the binary store end within the submit's own limit (or a Stop).
			const body = await submitBody(ctx, client, itemIndex, input, itemDeadline(SUBMIT_DEADLINE_MS, SUBMIT_LIMIT_NAME));
			const { model, ...record } = await submitTask(ctx, client, body, itemIndex);
			return { json: { ...taskFields(record), model: model ?? input.fields.model } };
		},
		paidRecord: (items) => {
			const taskId = items[0]?.json.task_id;
			return typeof taskId === 'string' ? `task ${taskId}` : undefined;
		},
		paidRecordOfFailure: (error) => {
			if (!mayHaveCreatedTask(error)) return undefined;
			const refused = refusedTaskIdOf(error);
			return refused !== undefined ? refusedTaskText(refused) : `the submit ${unconfirmedSubmitWords(error)}, and the gateway may have created a task`;
		},
	});
}
