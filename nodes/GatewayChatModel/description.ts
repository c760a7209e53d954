/**
 * The panel of the Gateway Chat Model: the model, and the options an AI node's model needs. Each
 * option says which chat-completions field it becomes; nothing is sent that was not set.
 */
import type { INodeProperties } from 'n8n-workflow';

import { chatTimeoutOption, effortOption, idleTimeoutOption } from '../shared/chat/chatDescriptions';
import { MAX_TOKENS_HINT } from '../shared/panel/models';
import { modelField, outputLimitNotices } from '../shared/panel/descriptions';

export const DEFAULT_MODEL = 'chat-sonnet-5';

export const chatModelProperties: INodeProperties[] = [
	modelField(DEFAULT_MODEL, 'searchChatModels', {
		description: 'The chat model that answers the AI node: pick one the gateway offers (chat models only), or enter any model ID',
	}),
	...outputLimitNotices(),
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			effortOption('reasoning_effort'),
			idleTimeoutOption,
			{
				displayName: 'Max Tokens',
				name: 'maxTokens',
				type: 'number',
				typeOptions: { minValue: 1, numberPrecision: 0 },
				default: 4096,
				description: 'The longest answer the model may write per turn, in tokens (`max_tokens`). Unset: 4096.',
				hint: MAX_TOKENS_HINT,
			},
			{
				displayName: 'Temperature',
				name: 'temperature',
				type: 'number',
				typeOptions: { minValue: 0, maxValue: 2, numberPrecision: 2 },
				default: 1,
				description: 'Randomness of the answers, 0 to 2 (`temperature`). Lower is more focused.',
			},
			chatTimeoutOption,
		],
	},
];
