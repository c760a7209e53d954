/**
 * Download: the video of a finished task, by its id. The link is read from a fresh status
 * request (links are temporary, so one saved earlier may have expired).
 */
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { runPerItem } from '../shared/items/itemRunner';
import { readOutputInput, readTaskId } from './request';
import { phaseOf } from './task';
import { downloadVideo, fetchStatus, notFinishedError, taskFailedError, videoItem } from './taskApi';

export async function download(ctx: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await runPerItem(ctx, {
		prepare: (itemIndex) => ({ taskId: readTaskId(ctx, itemIndex), ...readOutputInput(ctx, itemIndex) }),
		run: async ({ taskId, binaryPropertyName }, itemIndex, client) => {
			const record = await fetchStatus(client, taskId, itemIndex);
			const phase = phaseOf(record.status);
			if (phase === 'failure') throw taskFailedError(record, itemIndex);
			if (phase === 'running') throw notFinishedError(record, itemIndex);
			return videoItem(record, {}, binaryPropertyName, binaryPropertyName ? await downloadVideo(ctx, client, record, itemIndex) : undefined);
		},
	});
}
