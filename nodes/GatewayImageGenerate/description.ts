/**
 * The panel of Gateway Image Generate, and which field of the request body (interface document (docs/gateway-interface.md)
 * 2.1) each node parameter becomes: adding a gateway field is one property here and one entry in
 * IMAGE_BODY_FIELDS.
 */
import type { INodeProperties } from 'n8n-workflow';

import { binaryPropertyOption, extraBodyOption, modelField, optionsCollection } from '../shared/descriptions';

export const DEFAULT_IMAGE_MODEL = 'img-image-2';
export const MAX_IMAGES_PER_REQUEST = 10;

/** Node parameter -> request body field. */
export const IMAGE_BODY_FIELDS = {
	model: 'model',
	prompt: 'prompt',
	n: 'n',
	responseFormat: 'response_format',
} as const;

export const imageGenerateProperties: INodeProperties[] = [
	modelField(DEFAULT_IMAGE_MODEL, 'searchImageModels'),
	{
		displayName: 'Prompt',
		name: 'prompt',
		type: 'string',
		required: true,
		default: '',
		typeOptions: { rows: 4 },
		placeholder: 'A watercolour fox in a misty birch forest at dawn, soft light, poster style',
		description: 'Description of the image to generate',
		hint: 'Describe the subject, composition, light, material, style and purpose',
	},
	{
		displayName: 'Number of Images',
		name: 'n',
		type: 'number',
		default: 1,
		typeOptions: { minValue: 1, maxValue: MAX_IMAGES_PER_REQUEST, numberPrecision: 0 },
		description: `How many images to generate for each input item (1 to ${MAX_IMAGES_PER_REQUEST}). Each image becomes its own output item.`,
		hint: 'Each image is billed separately (about 0.04 USD times your group multiplier)',
	},
	{
		displayName: 'Response Format',
		name: 'responseFormat',
		type: 'options',
		default: 'url',
		options: [
			{
				name: 'URL (Recommended)',
				value: 'url',
				description: 'The gateway returns a temporary link; the node downloads it at once unless Download Image is off',
			},
			{
				name: 'Base64',
				value: 'b64_json',
				description: 'The gateway returns the image inline as Base64; the node decodes it into a file',
			},
		],
		description: 'How the gateway hands over each image. Either way the output has a real image file.',
		hint: 'Image links are temporary: keep Download Image on to keep the files',
	},
	optionsCollection([
		{
			displayName: 'Download Image',
			name: 'downloadImage',
			type: 'boolean',
			default: true,
			displayOptions: { show: { '/responseFormat': ['url'] } },
			description:
				'Whether to download each image into binary data right away (the links are temporary). Off: the output has the links only.',
		},
		extraBodyOption('{"size": "1024x1024", "quality": "high", "output_format": "webp"}'),
		binaryPropertyOption('image'),
	]),
];
