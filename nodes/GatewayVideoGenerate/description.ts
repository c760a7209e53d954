/**
 * The panel of Gateway Video Generate. The submit body's fields (interface document 2.3) are
 * model, prompt, seconds and size, built in request.ts, and `image` (a first frame, from Image
 * URL or Image From Binary Field); everything else the gateway takes goes through Extra Body Fields.
 */
import type { INodeProperties } from 'n8n-workflow';

import { binaryPropertyOption, extraBodyOption, modelField, optionsCollection } from '../shared/panel/descriptions';
import {
	DEFAULT_MAX_WAIT_SECONDS,
	DEFAULT_STATUS_CHECKS_PER_SECOND,
	DEFAULT_VIDEO_MODEL,
	MAX_STATUS_CHECKS_PER_SECOND,
	MAX_POLL_INTERVAL_SECONDS,
	MAX_WAIT_LIMIT_SECONDS,
	MIN_POLL_INTERVAL_SECONDS,
} from './request';

export type VideoOperation = 'generate' | 'submit' | 'getStatus' | 'download';

const SUBMITTING: VideoOperation[] = ['generate', 'submit'];
const DOWNLOADING: VideoOperation[] = ['generate', 'download'];

const showFor = (operations: VideoOperation[]) => ({ show: { operation: operations } });
/** Inside the Options collection the operation is addressed from the root. */
const showOptionFor = (operations: VideoOperation[]) => ({ show: { '/operation': operations } });

/** Task ID of Get Status and of Download: one field, with a hint of each operation's own. */
const TASK_ID: INodeProperties = {
	displayName: 'Task ID',
	name: 'taskId',
	type: 'string',
	required: true,
	default: '',
	placeholder: 'e.g. {{ $json.task_id }}',
	description: 'The task ID that the Submit or Generate operation returned (task_id)',
};

export const videoGenerateProperties: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		default: 'generate',
		// The main action first, then the steps of a wait you build yourself, in the order they run
		// (four options: n8n's lint asks for alphabetical order only from five on).
		options: [
			{
				name: 'Generate',
				value: 'generate',
				action: 'Generate a video and wait for it',
				description: 'Submit a task, wait until it is done and download the video',
			},
			{
				name: 'Submit',
				value: 'submit',
				action: 'Submit a video task',
				description: 'Submit a task and return its task ID at once, without waiting',
			},
			{
				name: 'Get Status',
				value: 'getStatus',
				action: 'Get the status of a task',
				description: 'Check a task once: status, progress, and the video link when it is done',
			},
			{
				name: 'Download',
				value: 'download',
				action: 'Download the video of a task',
				description: 'Download the video of a finished task by its task ID',
			},
		],
	},
	modelField(DEFAULT_VIDEO_MODEL, 'searchVideoModels', { displayOptions: showFor(SUBMITTING) }),
	{
		displayName: 'Prompt',
		name: 'prompt',
		type: 'string',
		required: true,
		default: '',
		typeOptions: { rows: 4 },
		placeholder: 'A paper boat drifting down a rainy street at dusk, slow dolly shot, cinematic light',
		description: 'Description of the video to generate',
		displayOptions: showFor(SUBMITTING),
	},
	{
		displayName: 'Seconds',
		name: 'seconds',
		type: 'number',
		required: true,
		default: 5,
		typeOptions: { minValue: 1, numberPrecision: 0 },
		description: 'Duration of the video in whole seconds (sent to the gateway as a string, e.g. "5")',
		hint: 'Which durations a model accepts is up to the gateway',
		displayOptions: showFor(SUBMITTING),
	},
	{
		displayName: 'Size',
		name: 'size',
		type: 'string',
		required: true,
		default: '1280x720',
		placeholder: '1280x720',
		description: 'Resolution as width x height, written like 1280x720 (landscape) or 720x1280 (portrait)',
		hint: 'Sent as the gateway expects it: digits, an x, digits. Which sizes a model accepts is up to the gateway.',
		displayOptions: showFor(SUBMITTING),
	},
	{
		...TASK_ID,
		hint: 'Checks the task once. To wait until it is done, put a Wait node before this one and loop back while the status is not SUCCESS or FAILURE.',
		displayOptions: showFor(['getStatus']),
	},
	{
		...TASK_ID,
		hint: 'Links to finished videos are temporary: Download asks the gateway for the current one',
		displayOptions: showFor(['download']),
	},
	optionsCollection([
		{
			displayName: 'Download Video',
			name: 'downloadVideo',
			type: 'boolean',
			default: true,
			description:
				'Whether to put the MP4 into binary data (the result link is temporary). Off: the output has the link (result_url) only.',
			displayOptions: showOptionFor(DOWNLOADING),
		},
		{
			...extraBodyOption('{"seed": 42}'),
			hint: 'Model-specific fields go here too, e.g. a last frame or reference images, under the names the model takes',
			displayOptions: showOptionFor(SUBMITTING),
		},
		{
			displayName: 'Image From Binary Field',
			name: 'imageBinaryProperty',
			type: 'string',
			default: '',
			placeholder: 'e.g. data',
			description:
				'The binary field of the input item that holds a first frame for image-to-video (PNG, JPEG, GIF or WebP, up to 10 MB), sent as a Base64 data URL in `image` (data:image/png;base64,…)',
			hint: 'The MIME type is read from the image itself. Set this or Image URL, not both.',
			displayOptions: showOptionFor(SUBMITTING),
		},
		{
			displayName: 'Image URL',
			name: 'imageUrl',
			type: 'string',
			default: '',
			placeholder: 'e.g. https://example.com/first-frame.png',
			description: 'A link to a first frame for image-to-video, sent as given in `image`; the gateway fetches it',
			displayOptions: showOptionFor(SUBMITTING),
		},
		{
			displayName: 'Max Wait (Seconds)',
			name: 'maxWaitSeconds',
			type: 'number',
			default: DEFAULT_MAX_WAIT_SECONDS,
			typeOptions: { minValue: MIN_POLL_INTERVAL_SECONDS, maxValue: MAX_WAIT_LIMIT_SECONDS },
			description:
				'How long to wait for the task before giving up with an error that quotes the task ID (the task is not lost: fetch it later with Get Status or Download)',
			hint: "Counts for each video from its own submit (waits for the gateway's rate limit included); the last status check comes at Max Wait",
			displayOptions: showOptionFor(['generate']),
		},
		{
			displayName: 'Poll Interval (Seconds)',
			name: 'pollIntervalSeconds',
			type: 'number',
			default: MIN_POLL_INTERVAL_SECONDS,
			typeOptions: { minValue: MIN_POLL_INTERVAL_SECONDS, maxValue: MAX_POLL_INTERVAL_SECONDS },
			description: `Seconds between status checks, at least ${MIN_POLL_INTERVAL_SECONDS}. All items are checked together in one loop.`,
			hint: 'The gateway asks clients to poll every 5 to 10 seconds; a lower value is refused',
			displayOptions: showOptionFor(['generate']),
		},
		{ ...binaryPropertyOption('video'), displayOptions: showOptionFor(DOWNLOADING) },
		{
			displayName: 'Resume Task ID',
			name: 'resumeTaskId',
			type: 'string',
			default: '',
			placeholder: 'e.g. {{ $json.task_id }}',
			description:
				'A task an earlier run already submitted for this item: it is waited for and downloaded instead of submitted again, so a retried run pays nothing twice. Leave empty to submit.',
			hint: 'Feed in the output (or error items) of the failed run and map its task_id here',
			displayOptions: showOptionFor(['generate']),
		},
		{
			displayName: 'Status Checks per Second',
			name: 'statusChecksPerSecond',
			type: 'number',
			default: DEFAULT_STATUS_CHECKS_PER_SECOND,
			typeOptions: { minValue: 0.1, maxValue: MAX_STATUS_CHECKS_PER_SECOND, numberPrecision: 1 },
			description:
				"The most status checks the run sends per second, for all its videos together: many videos are checked one after another, spread out, so a big run stays under the gateway's rate limit",
			displayOptions: showOptionFor(['generate']),
		},
	]),
];
