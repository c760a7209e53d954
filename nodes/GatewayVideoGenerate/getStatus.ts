/**
 * Get Status: one status request. A task that ended without a video (FAILURE, CANCELLED, …) is
 * reported as data (status and fail_reason), not as an error, so that a flow can branch on it
 * with an If node.
 */
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { runPerItem } from '../shared/items/itemRunner';
import { readTaskId } from './request';
import { taskFields } from './task';
import { fetchStatus } from './taskApi';

export async function getStatus(ctx: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await runPerItem(ctx, {
		prepare: (itemIndex) => readTaskId(ctx, itemIndex),
		run: async (taskId, itemIndex, client) => ({ json: taskFields(await fetchStatus(client, taskId, itemIndex)) }),
	});
}
