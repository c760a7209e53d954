/**
 * The panel of Gateway Messages. Each field says which native-messages field it becomes; the
 * mapping itself is `messagesRequestBody` in request.ts, one line per field.
 */
import type { INodeProperties } from 'n8n-workflow';

import {
	binaryAttachmentsOption,
	effortOption,
	chatTimeoutOption,
	streamIdleTimeoutOption,
	includeRawResponseOption,
	jsonSchemaOption,
	maxTokensField,
	messagesField,
	responseFormatOption,
	stopSequencesOption,
	streamField,
	temperatureOption,
	urlAttachmentsOption,
} from '../shared/chat/chatDescriptions';
import { extraBodyOption, modelField, optionsCollection, outputLimitNotices } from '../shared/panel/descriptions';
import { alphabetical } from '../shared/panel/optionOrder';

export const MESSAGES_ROLES = ['user', 'assistant'] as const;

export const MIN_THINKING_BUDGET = 1024;

export const messagesProperties: INodeProperties[] = [
	modelField('chat-sonnet-5', 'searchChatModels'),
	...outputLimitNotices(),
	messagesField(
		MESSAGES_ROLES,
		'The conversation so far, sent as `messages`. Instructions go in the System Prompt option.',
		'e.g. Plan the next step of this task: ...',
	),
	maxTokensField('The longest answer the model may write, thinking included, in tokens (`max_tokens`, required by this format)'),
	streamField,
	alphabetical(optionsCollection([
		binaryAttachmentsOption(
			'images as `image` blocks and PDFs as `document` blocks, both with a Base64 `source`',
			'Images up to 5 MB (counted on their Base64 text) and 8000 px per side, PDFs up to 32 MB, at most 100 images and 32 MB per request.',
		),
		effortOption('output_config.effort'),
		extraBodyOption('{"metadata": {"user_id": "42"}, "top_k": 40}'),
		urlAttachmentsOption('`image` blocks with a `url` source'),
		includeRawResponseOption,
		jsonSchemaOption,
		responseFormatOption('a forced call of a `respond` tool whose `input_schema` is the schema: `tools` and `tool_choice`; the tool input is the answer'),
		stopSequencesOption('stopSequences', 'Texts at which the model stops writing (`stop_sequences`)'),
		{
			displayName: 'System Prompt',
			name: 'system',
			type: 'string',
			typeOptions: { rows: 4 },
			default: '',
			placeholder: 'e.g. You are a careful assistant. Answer in English.',
			description: 'Instructions that steer the whole conversation (`system`)',
		},
		temperatureOption(1, 'Randomness of the answer, 0 to 1 (`temperature`). With thinking on, only 1 is allowed.'),
		{
			displayName: 'Thinking',
			name: 'thinking',
			type: 'options',
			options: [
				{ name: 'Off', value: 'off', description: 'No thinking block is asked for' },
				{ name: 'Adaptive', value: 'adaptive', description: 'The model decides how much to think' },
				{ name: 'Enabled With Budget', value: 'enabled', description: 'Think with at most Thinking Budget tokens' },
			],
			default: 'off',
			description: 'Whether the model thinks before it answers (`thinking`). Its thoughts are in the `thinking` output field.',
			hint: 'chat-fable-5 always thinks (adaptive), whatever is set here',
		},
		{
			displayName: 'Thinking Budget',
			name: 'thinkingBudget',
			type: 'number',
			typeOptions: { minValue: MIN_THINKING_BUDGET, numberPrecision: 0 },
			default: 2048,
			description: `Tokens the model may spend thinking when Thinking is Enabled With Budget (\`thinking.budget_tokens\`): at least ${MIN_THINKING_BUDGET}, and below Max Tokens`,
		},
		chatTimeoutOption,
		streamIdleTimeoutOption,
	])),
];
