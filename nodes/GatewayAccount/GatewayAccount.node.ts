import { NodeConnectionTypes } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeProperties, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { withMaskedExits } from '../shared/failures/exits';
import { credentialTest } from '../shared/panel/credentialTest';
import { DOCS_URL } from '../shared/panel/links';
import { operationName, operationSubtitle } from '../shared/panel/subtitle';
import { getBalance } from './getBalance';

const ACCOUNT_PROPERTIES: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		default: 'getBalance',
		options: [
			{
				name: 'Get Balance',
				value: 'getBalance',
				action: 'Get the balance of the API key',
				description:
					"The key's available, used and granted amount (USD when the gateway says how its quota converts, else its raw quota units), whether it is unlimited, and when it expires",
			},
		],
	},
];

export class GatewayAccount implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Gateway Account',
		name: 'gatewayAccount',
		icon: { light: 'file:account.svg', dark: 'file:account.dark.svg' },
		group: ['input'],
		version: 1,
		subtitle: operationSubtitle(operationName(ACCOUNT_PROPERTIES)),
		description: 'Read what the API key of your model gateway may still spend',
		documentationUrl: DOCS_URL.gatewayAccount,
		defaults: { name: 'Gateway Account' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'gatewayApi', required: true, testedBy: 'gatewayApiTest' }],
		properties: ACCOUNT_PROPERTIES,
	};

	methods = { credentialTest };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await withMaskedExits(this, async (ctx) => await getBalance(ctx));
	}
}
