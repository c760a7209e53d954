/**
 * Hostile review, round four, session eight: Idle Timeout and a request body whose upload is slow
 * (attempt.ts sendOnce no longer arms the watch before a one-piece Buffer body). Real HTTP to a
 * loopback server that reads the request at about 2.5 MB/s. Each was red on the code it was
 * written against: the upload counted as the gateway's silence.
 */
import * as fs from 'fs';
import * as http from 'http';
import type { AddressInfo } from 'net';

import type { ChatModel, Message, StreamChunk } from '@n8n/ai-node-sdk';
import type { IBinaryData, ISupplyDataFunctions } from 'n8n-workflow';

import { complete } from '../../nodes/GatewayChat/complete';
import { supplyGatewayChatModel } from '../../nodes/GatewayChatModel/supply';
import { BUSY_MARGIN_MS } from '../helpers/busy';
import { standInSdk } from '../helpers/chatModelSdk';
import { createExecuteContext } from '../helpers/executeContext';
import { binaryItem, frameOnDisk, pngHeader, withBinaryHelpers } from '../helpers/files';

const KEY = 'sk-integration-review-r8-0123456789abcdef';
const MODEL = { __rl: true, mode: 'id', value: 'chat-sonnet-5' };
const sse = (text: string, finish: string | null) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: text ? { content: text } : {}, finish_reason: finish }] })}\n\n`;
const ANSWER = `${sse('ok', null)}${sse('', 'stop')}data: [DONE]\n\n`;

type Route = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** Takes 256 KB of the request every 100 ms; `then` once it has all of it. */
function readSlowly(req: http.IncomingMessage, then: () => void): void {
	req.pause();
	const pace = setInterval(() => {
		let taken = 0;
		while (taken < 256 * 1024 && req.read(16 * 1024) !== null) taken += 16 * 1024;
	}, 100);
	req.on('readable', () => undefined);
	req.on('end', () => {
		clearInterval(pace);
		then();
	});
	req.on('close', () => clearInterval(pace));
}

/** The answer once the request is read slowly, whole. */
const slowThenAnswer: Route = (req, res) =>
	readSlowly(req, () => {
		res.writeHead(200, { 'content-type': 'text/event-stream' });
		res.end(ANSWER);
	});

async function withServer<T>(route: Route, use: (baseUrl: string) => Promise<T>): Promise<T> {
	const server = http.createServer(route);
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	try {
		return await use(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
	} finally {
		server.closeAllConnections();
		await new Promise((resolve) => server.close(resolve));
	}
}

/** Gateway Chat, streamed, with a 12 MB image kept in the item (a Buffer body). */
async function chatWithPhoto(baseUrl: string, options: Record<string, number>) {
	const { ctx } = createExecuteContext({
		parameters: { model: MODEL, messages: { values: [{ role: 'user', content: 'hi' }] }, maxTokens: 100, stream: true, options: { ...options, binaryAttachments: 'photo' } },
		credentials: { apiKey: KEY, baseUrl },
		items: [binaryItem({ photo: { bytes: pngHeader(64, 64, 12 * 1024 * 1024), fileName: 'photo.png', mimeType: 'image/png' } })],
	});
	withBinaryHelpers(ctx);
	return await complete.call(ctx);
}

describe('Gateway Chat Model: a slow upload of an image the agent passes in', () => {
	// n8n's AI Agent passes a binary image to the model as a message part (its "Automatically
	// Passthrough Binary Images"); wire.ts sends it as a data: URL inside the JSON text, so the body
	// is a string, which sendOnce still treats as text "sent at once": the idle watch runs from the
	// send, and a 12 MB image read at 2.5 MB/s (about 6.5 s) fails at Idle Timeout 2 s with "sent
	// nothing for 2 s after the request was sent", while the gateway is still receiving.
	it('is not the gateway\'s silence', async () => {
		await withServer(slowThenAnswer, async (baseUrl) => {
			const { ctx } = createExecuteContext({ parameters: { model: MODEL, options: { idleTimeoutSeconds: 2 } }, credentials: { apiKey: KEY, baseUrl }, nodeName: 'Gateway Chat Model' });
			const model = (await supplyGatewayChatModel(ctx as unknown as ISupplyDataFunctions, 0, async () => standInSdk)).response as ChatModel;
			const image = pngHeader(64, 64, 12 * 1024 * 1024).toString('base64');
			const user: Message = { role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'file', mediaType: 'image/png', data: image }] };
			const chunks: StreamChunk[] = [];
			for await (const chunk of model.stream([user])) chunks.push(chunk);
			expect(chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.delta : '')).join('')).toBe('ok');
		});
	});
});

const PHOTO_ON_DISK = frameOnDisk(12 * 1024 * 1024);

/** Gateway Chat, streamed, with a 12 MB image n8n keeps outside the item (filesystem mode): a streamed body. */
async function chatWithPhotoOnDisk(baseUrl: string, options: Record<string, number>) {
	const binary: IBinaryData = { id: `filesystem-v2:${PHOTO_ON_DISK}`, data: 'filesystem-v2', mimeType: 'image/png', fileName: 'photo.png', fileSize: '12 MB' };
	const { ctx } = createExecuteContext({
		parameters: { model: MODEL, messages: { values: [{ role: 'user', content: 'hi' }] }, maxTokens: 100, stream: true, options: { ...options, binaryAttachments: 'photo' } },
		credentials: { apiKey: KEY, baseUrl },
		items: [{ json: {}, binary: { photo: binary } }],
	});
	Object.assign(ctx.helpers, {
		assertBinaryData: () => binary,
		getBinaryMetadata: async () => ({ fileSize: fs.statSync(PHOTO_ON_DISK).size, mimeType: 'image/png' }),
		getBinaryStream: async (_id: string, chunkSize?: number) => fs.createReadStream(PHOTO_ON_DISK, { highWaterMark: chunkSize }),
		getBinaryDataBuffer: async () => {
			throw new Error('the file was read whole');
		},
	});
	return await complete.call(ctx);
}

/** A same-origin 307 for the first path (its body not read), then the slow read and the answer. */
const redirectThenSlow: Route = (req, res) => {
	if (req.url === '/v1/chat/completions') {
		req.resume();
		res.writeHead(307, { location: '/v2/chat/completions' });
		res.end();
		return;
	}
	slowThenAnswer(req, res);
};

describe('Gateway Chat: a slow upload of a file kept in the item, after a redirect', () => {
	// A same-origin 307 keeps the body (followRedirects): the second hop sends the same body within
	// the same attempt, whose idle watch the 307's head had armed (sendOnce: alive() at every
	// answer's head), so the second hop's slow upload counted as silence. Each hop's upload now
	// pauses the watch until that hop's answer's head.
	it('is not the gateway\'s silence either', async () => {
		await withServer(redirectThenSlow, async (baseUrl) => {
			const [output] = await chatWithPhoto(baseUrl, { idleTimeoutSeconds: 2 });
			expect(output[0].json.text).toBe('ok');
		});
	});

	it('nor is a streamed file\'s (kept outside the item), each hop watched from its own answer\'s head', async () => {
		await withServer(redirectThenSlow, async (baseUrl) => {
			const [output] = await chatWithPhotoOnDisk(baseUrl, { idleTimeoutSeconds: 2 });
			expect(output[0].json.text).toBe('ok');
		});
	});
});

describe('Gateway Chat: a gateway that takes a one-piece body and never answers', () => {
	// The watch is not armed before the head: Timeout alone ends the wait, and says so.
	it('ends at Timeout, in words about Timeout, not about a silence', async () => {
		const route: Route = (req) => void req.resume();
		await withServer(route, async (baseUrl) => {
			const started = Date.now();
			let error: (Error & { description?: string }) | undefined;
			try {
				await chatWithPhoto(baseUrl, { idleTimeoutSeconds: 1, timeoutSeconds: 3 });
			} catch (caught) {
				error = caught as Error;
			}
			expect(Date.now() - started).toBeLessThan(3000 + BUSY_MARGIN_MS);
			expect(error?.message).toMatch(/Timeout \(Seconds\)|3 s/);
			expect(error?.message).not.toMatch(/sent nothing/);
		});
	});
});
