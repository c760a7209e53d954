/**
 * Issue 26, "an answer is an answer", as reported: four items of about 11 MB each, Concurrency 4,
 * sent one POST each, and all four task ids lost. The gateway is Node's own http server answering
 * 200 + task id after 3 MB of a body; its handler then reads on, pauses, ends its side, or stops
 * listening. Node's server then closes a `Connection: close` request's socket with the rest of the
 * body unread (a reset), and Node's client, still writing the streamed body, fails with EPIPE
 * before it reads the answer already on its socket. Every task the gateway created must be in the
 * output. The frame in the item (one write of the whole body) is the guard of the other path.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { IDataObject } from 'n8n-workflow';

import { GatewayVideoGenerate } from '../../nodes/GatewayVideoGenerate/GatewayVideoGenerate.node';
import { frameOnDisk } from '../helpers/files';
import { earlyAnswerGateway } from '../helpers/earlyAnswerGateway';
import type { EarlyAnswerGateway } from '../helpers/earlyAnswerGateway';
import { createExecuteContext } from '../helpers/executeContext';
import { streamedFrameSubmit } from '../helpers/streamedFrame';

jest.setTimeout(120_000);

const KEY = 'sk-review-early-0123456789abcdef';
// About 11 MB of body each (Base64), under the 10 MB file limit.
const SIZE = 8 * 1024 * 1024;
const frame = frameOnDisk(SIZE);

type Mode = 'keepReading' | 'stopReading' | 'endAfterAnswer' | 'dumpByNode';

type Gateway = EarlyAnswerGateway;

const gatewayOf = (mode: Mode): Promise<Gateway> => earlyAnswerGateway(mode, { afterBytes: 3 * 1024 * 1024, idPrefix: 'task_review_' });

/** The same submits with the frame in the item (n8n's default binary mode): the body is bytes in memory. */
function inMemorySubmit(baseUrl: string, items: number, concurrency: number) {
	const data = { data: fs.readFileSync(frame).toString('base64'), mimeType: 'image/png', fileName: 'frame.png' };
	const test = createExecuteContext({
		parameters: {
			operation: 'submit',
			model: { __rl: true, mode: 'id', value: 'video-2-0-fast-260128' },
			prompt: 'a paper boat',
			seconds: 5,
			size: '1280x720',
			options: { imageBinaryProperty: 'data', concurrency },
		} as IDataObject,
		items: Array.from({ length: items }, () => ({ json: {}, binary: { data } })),
		credentials: { apiKey: KEY, baseUrl },
		continueOnFail: true,
		nodeType: 'n8n-nodes-model-gateway.gatewayVideoGenerate',
	});
	test.requests.push = () => 0;
	Object.assign(test.ctx.helpers, {
		assertBinaryData: () => data,
		getBinaryDataBuffer: async () => Buffer.from(data.data, 'base64'),
	});
	return test;
}

async function submit(baseUrl: string, items: number, concurrency: number, inMemory: boolean): Promise<IDataObject[]> {
	const test = inMemory ? inMemorySubmit(baseUrl, items, concurrency) : streamedFrameSubmit({
		baseUrl,
		apiKey: KEY,
		size: SIZE,
		items,
		continueOnFail: true,
		options: { concurrency },
		stream: async (chunkSize) => fs.createReadStream(frame, chunkSize ? { highWaterMark: chunkSize } : {}),
	});
	const [output] = await new GatewayVideoGenerate().execute.call(test.ctx);
	return output.map((item) => item.json);
}

describe('four items of about 11 MB answered 200 + task id before their bodies were read whole', () => {
	let gateway: Gateway | undefined;
	afterEach(async () => await gateway?.close());

	const modes = ['keepReading', 'stopReading', 'endAfterAnswer', 'dumpByNode'] as const;
	for (const [mode, inMemory] of modes.flatMap((mode) => [[mode, false], [mode, true]] as const)) {
		it(`${mode}, ${inMemory ? 'frame in the item' : 'frame streamed from the store'}: one POST per item, every created task id in the output`, async () => {
			gateway = await gatewayOf(mode);
			const out = await submit(gateway.baseUrl, 4, 4, inMemory);
			// Was: "the connection ... was dropped before the answer was complete" (EPIPE), all four ids lost.
			expect(gateway.posts).toBe(4);
			expect(out.map((json) => json.task_id).sort()).toEqual([...gateway.ids].sort());
		});
	}
});
