/**
 * A Gateway Video Generate submit whose first frame n8n keeps outside the item (filesystem binary
 * mode: the binary has an `id`, `getBinaryStream` reads it), so the frame is streamed into the body.
 */
import type { IBinaryData, IDataObject } from 'n8n-workflow';

import { createExecuteContext } from './executeContext';
import type { TestContext } from './executeContext';

export interface StreamedFrameOptions {
	baseUrl: string;
	apiKey: string;
	/** Bytes n8n recorded for the frame. */
	size: number;
	/** The store's read: `chunkSize` for the first bytes (the type check), none for the body. */
	stream: (chunkSize?: number) => Promise<unknown>;
	items?: number;
	continueOnFail?: boolean;
	/** Options of the node besides the frame's field. */
	options?: IDataObject;
	/** `submit` unless given. */
	operation?: 'submit' | 'generate';
	abortSignal?: AbortSignal;
}

export function streamedFrameSubmit(options: StreamedFrameOptions): TestContext {
	const binary: IBinaryData = { id: 'filesystem-v2:frame.png', data: 'filesystem-v2', mimeType: 'image/png', fileName: 'frame.png', fileSize: `${options.size} B` };
	const test = createExecuteContext({
		parameters: {
			operation: options.operation ?? 'submit',
			model: { __rl: true, mode: 'id', value: 'video-2-0-fast-260128' },
			prompt: 'a paper boat',
			seconds: 5,
			size: '1280x720',
			options: { imageBinaryProperty: 'data', ...(options.options ?? {}) },
		} as IDataObject,
		items: Array.from({ length: options.items ?? 1 }, () => ({ json: {}, binary: { data: binary } })),
		credentials: { apiKey: options.apiKey, baseUrl: options.baseUrl },
		continueOnFail: options.continueOnFail,
		abortSignal: options.abortSignal,
		nodeType: 'n8n-nodes-model-gateway.gatewayVideoGenerate',
	});
	// Each request holds its body of megabytes: not kept.
	test.requests.push = () => 0;
	Object.assign(test.ctx.helpers, {
		assertBinaryData: () => binary,
		getBinaryMetadata: async () => ({ fileSize: options.size, mimeType: 'image/png' }),
		getBinaryStream: async (_id: string, chunkSize?: number) => await options.stream(chunkSize),
		getBinaryDataBuffer: async () => {
			throw new Error('the file was read whole');
		},
	});
	return test;
}
