import { NodeConnectionTypes } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { withMaskedExits } from '../shared/failures/exits';
import { credentialTest } from '../shared/panel/credentialTest';
import { modelSearch } from '../shared/panel/modelSearch';
import { DOCS_URL } from '../shared/panel/links';
import { operationSubtitle } from '../shared/panel/subtitle';
import { imageGenerateProperties } from './description';
import { executeImage } from './router';

export class GatewayImageGenerate implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Gateway Image Generate',
		name: 'gatewayImageGenerate',
		icon: { light: 'file:image.svg', dark: 'file:image.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: operationSubtitle('{generate: "Generate", edit: "Edit"}[$rawParameter["operation"] ?? "generate"]', 'model'),
		description: 'Generate or edit images with your model gateway and get them as files, one item per image',
		documentationUrl: DOCS_URL.gatewayImageGenerate,
		defaults: { name: 'Gateway Image Generate' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'gatewayApi', required: true, testedBy: 'gatewayApiTest' }],
		properties: imageGenerateProperties,
	};

	methods = { listSearch: modelSearch, credentialTest };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await withMaskedExits(this, async (ctx) => await executeImage(ctx));
	}
}
