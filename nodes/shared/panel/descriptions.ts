/**
 * Fields that several nodes show the same way: the model picker, and the options every gateway
 * node has. One definition each, so the panels stay consistent.
 */
import type { INodeProperties } from 'n8n-workflow';

import { DEFAULT_CONCURRENCY, MAX_CONCURRENCY } from '../items/itemRunner';
import { limitedChatModels, outputLimitHint } from './models';
import type { LimitedChatModel } from './models';

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

/** The name of the notice that shows this model's output limit (notices hold no value). */
export function outputLimitNoticeName(model: LimitedChatModel): string {
	return `outputLimit${model.id.replace(/(^|[^a-zA-Z0-9]+)([a-zA-Z0-9])/g, (_all, _sep: string, first: string) => first.toUpperCase())}`;
}

/**
 * The output limit of the picked model, as one notice per catalogue chat model with a limit, each
 * shown only while Model is exactly that model (a picked or typed ID): its text is the sentence the
 * run's check says. Written as `hide` unless equal (`_cnd: { not }`, n8n-workflow 1.120.x and
 * 2.x), not as `show`: n8n shows a field whose `show` rule reads an expression, and an expression
 * is none of the models (the editor leaves it unresolved inside a model picker), so it gets no
 * notice. Not a `regex` rule: n8n runs each one every time it reads the node's parameters, several
 * times per execution (an ID typed with spaces gets no notice; the run trims it and checks its
 * limit all the same). Max Tokens itself stays one field with no display rules (what n8n 2.x's AI
 * builders read, from the first field of each name). For the top level of a node, after Model: a
 * notice inside a collection would become an option to add.
 */
export function outputLimitNotices(): INodeProperties[] {
	return limitedChatModels().map((model) => ({
		displayName: outputLimitHint(model),
		name: outputLimitNoticeName(model),
		type: 'notice',
		default: '',
		displayOptions: { hide: { model: [{ _cnd: { not: model.id } }] } },
	}));
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
