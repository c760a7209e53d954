/**
 * Fields that several nodes show the same way: the model picker, and the options every gateway
 * node has. One definition each, so the panels stay consistent.
 */
import type { INodeProperties } from 'n8n-workflow';

import { DEFAULT_CONCURRENCY, MAX_CONCURRENCY } from '../items/itemRunner';

type SearchMethod = 'searchImageModels' | 'searchVideoModels' | 'searchChatModels';

export function modelField(defaultModel: string, searchListMethod: SearchMethod, extra: Partial<INodeProperties> = {}): INodeProperties {
	return {
		displayName: 'Model',
		name: 'model',
		type: 'resourceLocator',
		default: { mode: 'list', value: defaultModel },
		required: true,
		description: 'The model to use: pick one the gateway offers, or enter any model ID',
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				typeOptions: { searchListMethod, searchable: true },
			},
			{
				displayName: 'ID',
				name: 'id',
				type: 'string',
				placeholder: defaultModel,
			},
		],
		...extra,
	};
}

export const concurrencyOption: INodeProperties = {
	displayName: 'Concurrency',
	name: 'concurrency',
	type: 'number',
	typeOptions: { minValue: 1, maxValue: MAX_CONCURRENCY, numberPrecision: 0 },
	default: DEFAULT_CONCURRENCY,
	description: `How many items are sent to the gateway at the same time (1 to ${MAX_CONCURRENCY}). Output order always follows the input. Lower it if the gateway rate-limits you.`,
};

/** The Options collection every gateway node has: Concurrency first, then the node's own. */
export function optionsCollection(options: INodeProperties[]): INodeProperties {
	return {
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [concurrencyOption, ...options],
	};
}

export function extraBodyOption(example: string): INodeProperties {
	return {
		displayName: 'Extra Body Fields',
		name: 'extraBody',
		type: 'json',
		default: '{}',
		description: `A JSON object merged into the request, for gateway fields this node does not show, e.g. ${example}. The node's own fields take precedence.`,
	};
}

export function binaryPropertyOption(what: string): INodeProperties {
	return {
		displayName: 'Put Output File in Field',
		name: 'binaryPropertyName',
		type: 'string',
		default: 'data',
		hint: `The name of the binary field that receives the ${what}`,
		description: `The name of the output binary field to put the ${what} in`,
	};
}
