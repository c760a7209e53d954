/** Submit: sends the task and returns at once, for flows that wait on their own (a Wait node). */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { runPerItem } from '../shared/items/itemRunner';
import type { FailedRun } from '../shared/items/itemRunner';
import type { RunAddendum } from '../shared/failures/edge';
import { itemDeadline } from '../shared/wire/transport';
import { PaidWork } from './paidWork';
import { readSubmitInput, submitBody } from './request';
import { taskFields } from './task';
import { SUBMIT_DEADLINE_MS, SUBMIT_LIMIT_NAME, submitTask } from './taskApi';

export async function submit(ctx: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await runPerItem(ctx, {
		prepare: (itemIndex) => readSubmitInput(ctx, itemIndex),
		run: async (input, itemIndex, client) => {
			// The frame's reads of the binary store end within the submit's own limit (or a Stop).
			const body = await submitBody(ctx, client, itemIndex, input, itemDeadline(SUBMIT_DEADLINE_MS, SUBMIT_LIMIT_NAME));
			const { model, ...record } = await submitTask(ctx, client, body, itemIndex);
			return { json: { ...taskFields(record), model: model ?? input.fields.model } };
		},
		paidWork: paidWorkOfSubmits,
	});
}

/** The run's paid work as Generate lists it: the tasks the finished items created, and the submits that may have created one. */
function paidWorkOfSubmits({ failedItem, outputs, failures, notStarted }: FailedRun): RunAddendum {
	const paid = new PaidWork();
	for (const [item, [output]] of outputs) {
		const json: IDataObject = output?.json ?? {};
		if (typeof json.task_id === 'string') paid.setTask(item, { task_id: json.task_id, status: String(json.status), progress: typeof json.progress === 'string' ? json.progress : undefined });
	}
	for (const [item, error] of failures) paid.submitFailed(item, error);
	for (const item of notStarted) paid.skip(item);
	return paid.addendum(failedItem);
}
