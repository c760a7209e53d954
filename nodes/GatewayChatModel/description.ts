/**
 * The panel of the Gateway Chat Model: the model, and the options an AI node's model needs. Each
 * option says which chat-completions field it becomes; nothing is sent that was not set.
 */
import type { INodeProperties } from 'n8n-workflow';

import { chatTimeoutOption, effortOption, idleTimeoutOption, maxTokensField, temperatureOption } from '../shared/chat/chatDescriptions';
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
			maxTokensField('The longest answer the model may write per turn, in tokens (`max_tokens`). Unset: 4096.'),
			temperatureOption(2, 'Randomness of the answers, 0 to 2 (`temperature`). Lower is more focused.'),
			chatTimeoutOption,
		],
	},
];
