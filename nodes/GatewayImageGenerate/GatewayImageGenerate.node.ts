import { NodeConnectionTypes } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { modelSearch } from '../shared/modelSearch';
import { operationSubtitle } from '../shared/subtitle';
import { imageGenerateProperties } from './description';
import { generateImages } from './generate';

export class GatewayImageGenerate implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Gateway Image Generate',
		name: 'gatewayImageGenerate',
		icon: { light: 'file:image.svg', dark: 'file:image.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: operationSubtitle('"Generate"', 'model'),
		description: 'Generate images with the Model Gateway and get them as files, one item per image',
		defaults: { name: 'Gateway Image Generate' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'gatewayApi', required: true }],
		properties: imageGenerateProperties,
	};

	methods = { listSearch: modelSearch };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await generateImages.call(this);
	}
}
