import { NodeConnectionTypes } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { withMaskedExits } from '../shared/failures/exits';
import { credentialTest } from '../shared/panel/credentialTest';
import { modelSearch } from '../shared/panel/modelSearch';
import { DOCS_URL } from '../shared/panel/links';
import { operationSubtitle } from '../shared/panel/subtitle';
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
		description: 'Chat with your model gateway in the native messages format (Claude style), with thinking and effort',
		documentationUrl: DOCS_URL.gatewayMessages,
		defaults: { name: 'Gateway Messages' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'gatewayApi', required: true, testedBy: 'gatewayApiTest' }],
		properties: messagesProperties,
	};

	methods = { listSearch: { searchChatModels: modelSearch.searchChatModels }, credentialTest };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await withMaskedExits(this, async (ctx) => await createMessage.call(ctx));
	}
}
