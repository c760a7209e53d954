import { NodeConnectionTypes } from 'n8n-workflow';
import type { INodeType, INodeTypeDescription, ISupplyDataFunctions, SupplyData } from 'n8n-workflow';

import { credentialTest } from '../shared/panel/credentialTest';
import { DOCS_URL } from '../shared/panel/links';
import { modelSearch } from '../shared/panel/modelSearch';
import { operationSubtitle } from '../shared/panel/subtitle';
import { chatModelProperties } from './description';
import { supplyGatewayChatModel } from './supply';

export class GatewayChatModel implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Gateway Chat Model',
		name: 'gatewayChatModel',
		icon: { light: 'file:chatModel.svg', dark: 'file:chatModel.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: operationSubtitle('"Model"', 'model'),
		description: "Your model gateway's chat models as the brain of n8n's AI Agent, chains and other AI nodes",
		documentationUrl: DOCS_URL.gatewayChatModel,
		defaults: { name: 'Gateway Chat Model' },
		inputs: [],
		outputs: [NodeConnectionTypes.AiLanguageModel],
		outputNames: ['Model'],
		credentials: [{ name: 'gatewayApi', required: true, testedBy: 'gatewayApiTest' }],
		properties: chatModelProperties,
	};

	methods = { listSearch: { searchChatModels: modelSearch.searchChatModels }, credentialTest };

	async supplyData(this: ISupplyDataFunctions, itemIndex: number): Promise<SupplyData> {
		return await supplyGatewayChatModel(this, itemIndex);
	}
}
