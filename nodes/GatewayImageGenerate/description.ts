/**
 * The panel of Gateway Image Generate, and which field of the request body (interface document (docs/gateway-interface.md)
 * 2.1) each node parameter becomes: adding a gateway field is one property here and one entry in
 * IMAGE_BODY_FIELDS.
 */
import type { INodeProperties } from 'n8n-workflow';

import { binaryPropertyOption, extraBodyOption, modelField, optionsCollection } from '../shared/panel/descriptions';
import { alphabetical } from '../shared/panel/optionOrder';

export const DEFAULT_IMAGE_MODEL = 'img-image-2';
export const MAX_IMAGES_PER_REQUEST = 10;
/** Images one edit takes (OpenAI's images/edits for its GPT image models). */
export const MAX_EDIT_IMAGES = 16;

export type ImageOperation = 'generate' | 'edit';
export const IMAGES_FIELD = 'Images From Binary Fields';
export const MASK_FIELD = 'Mask From Binary Field';

const editOnly = { show: { operation: ['edit'] } };

/** Node parameter -> request body field (the options are left out when they are not set). */
export const IMAGE_BODY_FIELDS = {
	model: 'model',
	prompt: 'prompt',
	n: 'n',
	responseFormat: 'response_format',
	size: 'size',
	quality: 'quality',
	background: 'background',
	outputFormat: 'output_format',
} as const;

/** The values image models commonly take (the contract's lists). */
export const IMAGE_QUALITIES = ['auto', 'low', 'medium', 'high'] as const;
export const IMAGE_BACKGROUNDS = ['auto', 'transparent', 'opaque'] as const;
export const IMAGE_OUTPUT_FORMATS = ['png', 'jpeg', 'webp'] as const;

export const imageGenerateProperties: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		// A workflow saved before Edit existed has no operation: it keeps generating.
		default: 'generate',
		options: [
			{
				name: 'Generate',
				value: 'generate',
				action: 'Generate images from a prompt',
				description: 'Create new images from a text prompt',
			},
			{
				name: 'Edit',
				value: 'edit',
				action: 'Edit images with a prompt',
				description: "Change or combine the input item's images as the prompt says, optionally within a mask",
			},
		],
	},
	modelField(DEFAULT_IMAGE_MODEL, 'searchImageModels'),
	{
		displayName: IMAGES_FIELD,
		name: 'images',
		type: 'string',
		default: 'data',
		required: true,
		placeholder: 'data, photo2',
		displayOptions: editOnly,
		description: `The input item's binary fields holding the images to edit, comma-separated (1 to ${MAX_EDIT_IMAGES}): PNG, JPEG or WebP`,
		hint: 'The names shown in the Binary tab of the input panel. Several images are combined as the prompt says.',
	},
	{
		displayName: 'Prompt',
		name: 'prompt',
		type: 'string',
		required: true,
		default: '',
		typeOptions: { rows: 4 },
		placeholder: 'A watercolour fox in a misty birch forest at dawn, soft light, poster style',
		description: 'Description of the image to generate, or of the change to make (Edit)',
		hint: 'Describe the subject, composition, light, material, style and purpose; for an edit, what to change and what to keep',
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
	alphabetical(
		optionsCollection([
			{
				displayName: 'Background',
				name: 'background',
				type: 'options',
				options: [
					{ name: 'Auto', value: 'auto', description: 'The model decides' },
					{ name: 'Opaque', value: 'opaque' },
					{ name: 'Transparent', value: 'transparent', description: 'Needs Output Format PNG or WebP' },
				],
				default: 'auto',
				description: 'Background of the image (`background`). Not sent unless added here.',
			},
			{
				displayName: 'Download Image',
				name: 'downloadImage',
				type: 'boolean',
				default: true,
				displayOptions: { show: { '/responseFormat': ['url'] } },
				description:
					'Whether to download each image into binary data right away (the links are temporary). Off: the output has the links only.',
			},
			extraBodyOption('{"moderation": "low", "output_compression": 80}'),
			{
				displayName: 'Output Format',
				name: 'outputFormat',
				type: 'options',
				options: [
					{ name: 'JPEG', value: 'jpeg' },
					{ name: 'PNG', value: 'png' },
					{ name: 'WebP', value: 'webp' },
				],
				default: 'png',
				description: 'File format of the images (`output_format`). The file name and MIME type always follow the bytes received.',
			},
			{
				displayName: MASK_FIELD,
				name: 'maskBinaryProperty',
				type: 'string',
				default: '',
				placeholder: 'mask',
				displayOptions: { show: { '/operation': ['edit'] } },
				description: "The input item's binary field holding a mask: a PNG with transparency, the size of the first image, whose fully transparent areas mark where to edit",
			},
			binaryPropertyOption('image'),
			{
				displayName: 'Quality',
				name: 'quality',
				type: 'options',
				options: [
					{ name: 'Auto', value: 'auto', description: 'The model decides' },
					{ name: 'High', value: 'high' },
					{ name: 'Low', value: 'low', description: 'Fastest' },
					{ name: 'Medium', value: 'medium' },
				],
				default: 'auto',
				description: 'Rendering quality (`quality`). Not sent unless added here.',
			},
			{
				displayName: 'Size',
				name: 'size',
				type: 'options',
				// Sizes outside the list (other models take others) stay valid: typed as an expression.
				allowArbitraryValues: true,
				options: [
					{ name: '1024x1024 (Square)', value: '1024x1024' },
					{ name: '1024x1536 (Portrait)', value: '1024x1536' },
					{ name: '1536x1024 (Landscape)', value: '1536x1024' },
					{ name: 'Auto', value: 'auto', description: 'The model decides' },
				],
				default: '1024x1024',
				description: 'Width x height of the images, or auto (`size`). Not sent unless added here.',
				hint: 'Another size, e.g. 1792x1024: switch this field to Expression and type it. Which sizes a model takes is up to the gateway.',
			},
		]),
	),
];
