import { NodeConnectionTypes } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { withMaskedExits } from '../shared/failures/exits';
import { credentialTest } from '../shared/panel/credentialTest';
import { modelSearch } from '../shared/panel/modelSearch';
import { DOCS_URL } from '../shared/panel/links';
import { operationSubtitle } from '../shared/panel/subtitle';
import { complete } from './complete';
import { chatProperties } from './description';

export class GatewayChat implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Gateway Chat',
		name: 'gatewayChat',
		icon: { light: 'file:chat.svg', dark: 'file:chat.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: operationSubtitle('"Chat"', 'model'),
		description: 'Chat with the language models of your model gateway (OpenAI-compatible chat), streamed or not',
		documentationUrl: DOCS_URL.gatewayChat,
		defaults: { name: 'Gateway Chat' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'gatewayApi', required: true, testedBy: 'gatewayApiTest' }],
		properties: chatProperties,
	};

	methods = { listSearch: { searchChatModels: modelSearch.searchChatModels }, credentialTest };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await withMaskedExits(this, async (ctx) => await complete.call(ctx));
	}
}
