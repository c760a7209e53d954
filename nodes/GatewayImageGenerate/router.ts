/** Which operation runs; all items of one execution share the node's operation (none saved: Generate). */
import { NodeOperationError } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ImageOperation } from './description';
import { editImages } from './edit';
import { generateImages } from './generate';

export async function executeImage(ctx: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const operation = ctx.getNodeParameter('operation', 0, 'generate') as ImageOperation;
	switch (operation) {
		case 'generate':
			return await generateImages.call(ctx);
		case 'edit':
			return await editImages.call(ctx);
		default:
			throw new NodeOperationError(ctx.getNode(), `The operation "${String(operation)}" is not known to this node`);
	}
}
