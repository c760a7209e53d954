/** Submit: sends the task and returns at once, for flows that wait on their own (a Wait node). */
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { runPerItem } from '../shared/items/itemRunner';
import { readSubmitInput, submitBody } from './request';
import { taskFields } from './task';
import { submitTask } from './taskApi';

export async function submit(ctx: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await runPerItem(ctx, {
		prepare: (itemIndex) => readSubmitInput(ctx, itemIndex),
		run: async (input, itemIndex, client) => {
			const { model, ...record } = await submitTask(ctx, client, await submitBody(ctx, itemIndex, input), itemIndex);
			return { json: { ...taskFields(record), model: model ?? input.fields.model } };
		},
	});
}
