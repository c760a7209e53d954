/** Which operation runs; all items of one execution share the node's operation. */
import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { VideoOperation } from './description';
import { download } from './download';
import { defaultRuntime, generate } from './generate';
import type { VideoRuntime } from './generate';
import { getStatus } from './getStatus';
import { submit } from './submit';

export async function executeVideo(ctx: IExecuteFunctions, runtime: VideoRuntime = defaultRuntime): Promise<INodeExecutionData[][]> {
	const operation = ctx.getNodeParameter('operation', 0, 'generate') as VideoOperation;
	switch (operation) {
		case 'generate':
			return await generate(ctx, runtime);
		case 'submit':
			return await submit(ctx);
		case 'getStatus':
			return await getStatus(ctx);
		case 'download':
			return await download(ctx);
		default:
			throw new NodeOperationError(ctx.getNode(), `The operation "${String(operation)}" is not known to this node`);
	}
}
