/**
 * Issue 26: an answer is an answer. A gateway may answer a paid submit (200 with a task id) before
 * it has read the whole streamed body, then keep reading, stop reading, or close the connection.
 * Through the Gateway Video Generate node (a first frame of 8 MB from n8n's filesystem store), over
 * loopback HTTP with n8n's own request function: one POST, never a second; the task id, when the
 * answer reached the node, is the output; when the connection closed as the gateway answered (Node's
 * HTTP client then drops the answer with the connection: EPIPE), the error says the gateway may have
 * created a task and the submit is not sent again. "Not acted on" only when no answer came AND the
 * body was cut by this side (the file, the deadline, a Stop).
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';

import type { IDataObject } from 'n8n-workflow';

import { GatewayVideoGenerate } from '../../nodes/GatewayVideoGenerate/GatewayVideoGenerate.node';
import { frameOnDisk } from '../helpers/files';
import { streamedFrameSubmit } from '../helpers/streamedFrame';
import { earlyAnswerGateway } from '../helpers/earlyAnswerGateway';
import type { EarlyAnswerGateway } from '../helpers/earlyAnswerGateway';

jest.setTimeout(60_000);

const KEY = 'sk-answer-is-answer-0123456789abcdef';
const SIZE = 8 * 1024 * 1024;
const frame = frameOnDisk(SIZE);

type Mode = 'keepReading' | 'stopReading' | 'close';

type Gateway = EarlyAnswerGateway;

const answersEarly = (mode: Mode): Promise<Gateway> => earlyAnswerGateway(mode, { afterBytes: 2 * 1024 * 1024, idPrefix: 'task_early_' });

/**
 * A relay written on the socket: after 4 MB of a request's body it answers 502 (its upstream gave
 * up), then reads the rest to its end and only then closes: the answer reaches the node for certain.
 */
async function rawBadGateway(): Promise<Gateway> {
	const gateway: Gateway = { baseUrl: '', posts: 0, ids: [], close: async () => undefined };
	const sockets = new Set<net.Socket>();
	const server = net.createServer((socket) => {
		sockets.add(socket);
		gateway.posts++;
		let got = 0;
		let answered = false;
		socket.on('error', () => undefined);
		socket.on('data', (part: Buffer) => {
			got += part.length;
			if (!answered && got > 4 * 1024 * 1024) {
				answered = true;
				const body = JSON.stringify({ error: { message: 'upstream closed', type: 'bad_gateway' } });
				socket.write(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`);
			}
		});
		// The node ends its side once the body is sent: then the relay closes too.
		socket.on('end', () => socket.end());
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	gateway.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	gateway.close = async () => {
		for (const socket of sockets) socket.destroy();
		await new Promise((resolve) => server.close(resolve));
	};
	return gateway;
}

async function submitFrame(baseUrl: string, items = 1): Promise<IDataObject[]> {
	const test = streamedFrameSubmit({
		baseUrl,
		apiKey: KEY,
		size: SIZE,
		items,
		continueOnFail: true,
		stream: async (chunkSize) => fs.createReadStream(frame, chunkSize ? { highWaterMark: chunkSize } : {}),
	});
	const [output] = await new GatewayVideoGenerate().execute.call(test.ctx);
	return output.map((item) => item.json);
}

const text = (json: IDataObject) => `${String(json.error ?? '')} ${String(json.errorDescription ?? '')}`;

describe('a 200 with a task id before the body was read whole', () => {
	let gateway: Gateway | undefined;
	afterEach(async () => await gateway?.close());

	for (const mode of ['keepReading', 'stopReading', 'close'] as const) {
		it(`${mode}: one POST per item, and every task the gateway created is in the output or named as possibly created`, async () => {
			gateway = await answersEarly(mode);
			// Three tries each: the race between the answer and the gateway's close is won either way.
			for (let round = 0; round < 3; round++) {
				const before = gateway.posts;
				const [json] = await submitFrame(gateway.baseUrl);
				// Today: 5 POSTs ("the gateway did not get the whole request, so it did not act on it"), 5 paid ids lost.
				expect(gateway.posts - before).toBe(1);
				if (json.task_id !== undefined) expect(json.task_id).toBe(gateway.ids[gateway.ids.length - 1]);
				else {
					expect(json.mayHaveActed).toBe(true);
					expect(text(json)).toMatch(/may have created the task/i);
					expect(text(json)).not.toMatch(/did not act on it/i);
				}
			}
		});
	}
});

describe('words: an error status that came before the body was read whole', () => {
	let gateway: Gateway | undefined;
	afterEach(async () => await gateway?.close());

	it('a 502 after half the body: the gateway did not act on it, and the words say so (not "may have created the task")', async () => {
		gateway = await rawBadGateway();
		const [json] = await submitFrame(gateway.baseUrl);
		// Today: "The gateway may have created the task: it was not submitted again". A request the
		// gateway refused before it had it whole may be sent again, like any refusal.
		expect(text(json)).not.toMatch(/may have created the task|may have gone through/i);
		expect(text(json)).toMatch(/before it had the whole request/i);
	});
});
