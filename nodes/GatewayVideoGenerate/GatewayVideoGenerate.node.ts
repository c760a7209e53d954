import { NodeConnectionTypes } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { withMaskedExits } from '../shared/failures/exits';
import { credentialTest } from '../shared/panel/credentialTest';
import { modelSearch } from '../shared/panel/modelSearch';
import { DOCS_URL } from '../shared/panel/links';
import { operationName, operationSubtitle } from '../shared/panel/subtitle';
import { videoGenerateProperties } from './description';
import { executeVideo } from './router';

export class GatewayVideoGenerate implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Gateway Video Generate',
		name: 'gatewayVideoGenerate',
		icon: { light: 'file:video.svg', dark: 'file:video.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: operationSubtitle(
			operationName(videoGenerateProperties),
			'model',
			'["generate", "submit"].includes($rawParameter["operation"])', // the operations that send a model
		),
		description: 'Generate videos with your model gateway: one node submits, waits and downloads the MP4',
		documentationUrl: DOCS_URL.gatewayVideoGenerate,
		defaults: { name: 'Gateway Video Generate' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'gatewayApi', required: true, testedBy: 'gatewayApiTest' }],
		properties: videoGenerateProperties,
	};

	methods = { listSearch: modelSearch, credentialTest };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await withMaskedExits(this, async (ctx) => await executeVideo(ctx));
	}
}
