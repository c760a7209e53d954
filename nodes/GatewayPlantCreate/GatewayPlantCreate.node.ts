import { NodeConnectionTypes } from 'n8n-workflow';
import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';

import { withMaskedExits } from '../shared/failures/exits';
import { credentialTest } from '../shared/panel/credentialTest';
import { optionsCollection } from '../shared/panel/descriptions';
import { DOCS_URL } from '../shared/panel/links';
import { operationSubtitle } from '../shared/panel/subtitle';
import { createPlant } from './createPlant';

export class GatewayPlantCreate implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Gateway Plant Create',
		name: 'gatewayPlantCreate',
		icon: { light: 'file:plant.svg', dark: 'file:plant.dark.svg' },
		group: ['output'],
		version: 1,
		subtitle: operationSubtitle('"Create plant"', 'name'),
		description: 'Create a plant in the sample plant store of your model gateway',
		documentationUrl: DOCS_URL.gatewayPlantCreate,
		defaults: { name: 'Gateway Plant Create' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [{ name: 'gatewayApi', required: true, testedBy: 'gatewayApiTest' }],
		properties: [
			{
				displayName: 'ID',
				name: 'id',
				type: 'string',
				required: true,
				default: '',
				placeholder: 'e.g. 10001',
				description:
					'Identification number of the plant: a whole number (int64). Numbers beyond 9007199254740991 are sent exactly when given as text.',
			},
			{
				displayName: 'Name',
				name: 'name',
				type: 'string',
				required: true,
				default: '',
				placeholder: 'e.g. Monstera',
				description: 'Name of the plant',
			},
			{
				displayName: 'Tag',
				name: 'tag',
				type: 'string',
				default: '',
				placeholder: 'e.g. indoor',
				description: 'Tag that specifies the type of plant. Left out when empty.',
			},
			optionsCollection([]),
		],
	};

	methods = { credentialTest };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await withMaskedExits(this, async (ctx) => await createPlant.call(ctx));
	}
}
