import { NodeConnectionTypes } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { modelSearch } from '../shared/modelSearch';
import { videoGenerateProperties } from './description';
import { executeVideo } from './router';

export class GatewayVideoGenerate implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Gateway Video Generate',
		name: 'gatewayVideoGenerate',
		icon: { light: 'file:video.svg', dark: 'file:video.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle:
			'={{ {generate: "Generate", submit: "Submit", getStatus: "Get Status", download: "Download"}[$parameter["operation"]] + (["generate", "submit"].includes($parameter["operation"]) ? ": " + ($parameter["model"].value || "video") : "") }}',
		description: 'Generate videos with the Model Gateway: submit a task, wait for it and download the MP4',
		defaults: { name: 'Gateway Video Generate' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'gatewayApi', required: true }],
		properties: videoGenerateProperties,
	};

	methods = { listSearch: modelSearch };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await executeVideo(this);
	}
}
