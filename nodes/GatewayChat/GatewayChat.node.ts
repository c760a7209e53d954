import { NodeConnectionTypes } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { modelSearch } from '../shared/modelSearch';
import { operationSubtitle } from '../shared/subtitle';
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
		description: 'Chat with a language model of the Model Gateway in the chat-completions format (POST /v1/chat/completions)',
		defaults: { name: 'Gateway Chat' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'gatewayApi', required: true }],
		properties: chatProperties,
	};

	methods = { listSearch: { searchChatModels: modelSearch.searchChatModels } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await complete.call(this);
	}
}
