import { NodeConnectionTypes } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { modelSearch } from '../shared/modelSearch';
import { operationSubtitle } from '../shared/subtitle';
import { createMessage } from './create';
import { messagesProperties } from './description';

export class GatewayMessages implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Gateway Messages',
		name: 'gatewayMessages',
		icon: { light: 'file:messages.svg', dark: 'file:messages.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: operationSubtitle('"Message"', 'model'),
		description: 'Chat with a language model of the Model Gateway in the native messages format, with thinking and effort (POST /v1/messages)',
		defaults: { name: 'Gateway Messages' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'gatewayApi', required: true }],
		properties: messagesProperties,
	};

	methods = { listSearch: { searchChatModels: modelSearch.searchChatModels } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await createMessage.call(this);
	}
}
