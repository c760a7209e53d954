/**
 * Fields that several nodes show the same way: the model picker, and the options every gateway
 * node has. One definition each, so the panels stay consistent.
 */
import type { INodeProperties } from 'n8n-workflow';

import { DEFAULT_CONCURRENCY, MAX_CONCURRENCY } from '../items/itemRunner';
import { GENERAL_OUTPUT_LIMIT_HINT, limitedChatModels, outputLimitHint } from './models';

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

/**
 * A Max Tokens field whose hint names the picked model's output limit, as copies of the field with
 * one name: n8n keeps one parameter value and shows the copy whose displayOptions match (its
 * NodeHelpers.displayParameter, which reads a model picker's value inside `{ __rl, value }`, in
 * n8n 1.x and 2.x alike). One copy per catalogue chat model with a limit, hidden unless Model is
 * exactly that model; one with the general hint, hidden while Model is one of them. An expression
 * is none of them (the editor leaves it unresolved inside a model picker), so it gets the general
 * hint. `modelPath` is `model` at the top level, `/model` from inside a collection.
 */
export function followingModelLimit(field: INodeProperties, modelPath: 'model' | '/model'): INodeProperties[] {
	const limited = limitedChatModels();
	const hiding = (hide: NonNullable<INodeProperties['displayOptions']>['hide']): INodeProperties['displayOptions'] => ({
		...field.displayOptions,
		hide: { ...field.displayOptions?.hide, ...hide },
	});
	return [
		{ ...field, hint: GENERAL_OUTPUT_LIMIT_HINT, displayOptions: hiding({ [modelPath]: limited.map((model) => model.id) }) },
		...limited.map((model) => ({ ...field, hint: outputLimitHint(model), displayOptions: hiding({ [modelPath]: [{ _cnd: { not: model.id } }] }) })),
	];
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
