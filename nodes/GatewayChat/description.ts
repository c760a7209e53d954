/**
 * The panel of Gateway Chat. Each field says which chat-completions field it becomes; the
 * mapping itself is `chatRequestBody` in request.ts, one line per field.
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

export const CHAT_ROLES = ['system', 'user', 'assistant'] as const;

export const chatProperties: INodeProperties[] = [
	modelField('chat-sonnet-5', 'searchChatModels'),
	...outputLimitNotices(),
	messagesField(
		CHAT_ROLES,
		'The conversation so far, sent as `messages`. The model answers the last message.',
		'e.g. Summarise this text in three bullet points: ...',
	),
	maxTokensField('The longest answer the model may write, in tokens (`max_tokens`)'),
	streamField,
	alphabetical(
		optionsCollection([
			binaryAttachmentsOption(
				'images as `image_url` parts with a Base64 data URL, PDFs as `file` parts with `file_data` and `filename`',
				'Images up to 20 MB, PDFs up to 32 MB, at most 100 images and 32 MB per request.',
			),
			effortOption('reasoning_effort'),
			extraBodyOption('{"n": 1, "seed": 7}'),
			urlAttachmentsOption('`image_url` parts'),
			includeRawResponseOption,
			jsonSchemaOption,
			responseFormatOption('`response_format`: `{"type": "json_object"}`, or `json_schema` with the Response JSON Schema option, strict'),
			stopSequencesOption('stop', 'Up to 4 texts at which the model stops writing (`stop`)'),
			temperatureOption(2, 'Randomness of the answer, 0 to 2 (`temperature`). Lower is more focused.'),
			chatTimeoutOption,
			streamIdleTimeoutOption,
			{
				displayName: 'Top P',
				name: 'topP',
				type: 'number',
				typeOptions: { minValue: 0, maxValue: 1, numberPrecision: 2 },
				default: 1,
				description: 'Nucleus sampling, 0 to 1 (`top_p`). Change this or Temperature, not both.',
			},
		]),
	),
];
