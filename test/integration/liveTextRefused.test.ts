/**
 * Review r7: a streamed chat answer whose reading stops before its
 * end closes its connection at once, under both request helpers n8n hands a node (n8n 2.x's
 * @n8n/backend-network and n8n 1.x's n8n-core, from the runtime the e2e suite installs; skipped
 * when it is missing), for a plain and a gzip answer, and whichever chunk n8n's live text refuses
 * (the first, `begin`, or a later one); and the words of that failure.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import type { IExecuteFunctions, IHttpRequestOptions } from 'n8n-workflow';

import { callChat } from '../../nodes/shared/chat/chatCall';
import { CHAT_COMPLETIONS } from '../../nodes/shared/chat/completions';
import { MESSAGES_WIRE } from '../../nodes/GatewayMessages/create';
import { GatewayError } from '../../nodes/shared/failures/errors';
import { GatewayClient } from '../../nodes/shared/wire/transport';
import { BUSY_MARGIN_MS, eventually } from '../helpers/busy';
import { createExecuteContext } from '../helpers/executeContext';
import { stallingServer } from '../helpers/stallingServer';
import type { Stalling } from '../helpers/stallingServer';

const STALL_MS = 30_000;

const N8N1_HELPERS = path.join(
	process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'),
	'n8n-nodes-model-gateway',
	'n8n-1.123.81',
	'node_modules',
	'n8n-core',
	'dist/execution-engine/node-execution-context/utils/request-helper-functions.js',
);
const haveN8n1 = fs.existsSync(N8N1_HELPERS);

type HelperShape = 'n8n2' | 'n8n1';
const SHAPES: HelperShape[] = haveN8n1 ? ['n8n2', 'n8n1'] : ['n8n2'];

const EVENT = (text: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text } }] })}\n\n`;

/** An event stream, plain or gzip (flushed, so its first events arrive decodable), that stalls after `events`. */
async function stallingStream(events: string[], gzip: boolean): Promise<Stalling> {
	return await stallingServer(STALL_MS, (res) => {
		res.writeHead(200, { 'content-type': 'text/event-stream', ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
		if (!gzip) return void res.write(events.join(''));
		const zip = zlib.createGzip();
		zip.pipe(res);
		zip.write(events.join(''));
		zip.flush(zlib.constants.Z_SYNC_FLUSH);
	});
}

/** A streaming execution context whose request helper is n8n 2.x's or n8n 1.x's, and whose live text refuses `refused` chunks. */
function contextFor(baseUrl: string, shape: HelperShape, refused: (type: string) => boolean): IExecuteFunctions {
	const { ctx } = createExecuteContext({ parameters: {}, streaming: true, credentials: { apiKey: 'sk-r7-review-0123456789abcdef', baseUrl } });
	if (shape === 'n8n1') {
		const n8n1 = require(N8N1_HELPERS) as { httpRequest: (options: IHttpRequestOptions) => Promise<unknown> };
		(ctx.helpers as { httpRequest: unknown }).httpRequest = async (options: IHttpRequestOptions) => await n8n1.httpRequest({ ...options });
	}
	ctx.sendChunk = (type: string) => {
		if (refused(type)) throw new Error('the chat client has gone');
	};
	return ctx;
}

const call = { stream: true, deadlineMs: STALL_MS, body: { model: 'm', stream: true }, itemIndex: 0, what: 'Chat' };

describe('a streamed chat answer n8n stops taking closes its connection', () => {
	// n8n 1.x's helper module loads slowly the first time.
	beforeAll(() => {
		if (haveN8n1) require(N8N1_HELPERS);
	}, 120_000);

	const cases: Array<[HelperShape, boolean, 'begin' | 'item']> = [];
	for (const shape of SHAPES) for (const gzip of [false, true]) for (const at of ['begin', 'item'] as const) cases.push([shape, gzip, at]);

	it.each(cases)('helper %s, gzip %s, live text refused at %s: the socket closes while the gateway stalls', async (shape, gzip, at) => {
		const server = await stallingStream([EVENT('Hel'), EVENT('lo')], gzip);
		try {
			const ctx = contextFor(server.baseUrl, shape, (type) => type === at);
			const client = await GatewayClient.create(ctx);
			const started = Date.now();
			const failure = await callChat(ctx, client, CHAT_COMPLETIONS, call).catch((error: unknown) => error);
			expect(failure).toBeInstanceOf(Error);
			expect(Date.now() - started).toBeLessThan(BUSY_MARGIN_MS);
			expect(await eventually(() => server.closedAt() !== undefined)).toBe(true);
			expect(server.closedAt()! - started).toBeLessThan(STALL_MS / 2);
		} finally {
			await server.close();
		}
	});
});

describe('a streamed Messages answer n8n stops taking closes its connection', () => {
	const MESSAGE_EVENTS = [
		`event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'm' } })}\n\n`,
		`event: content_block_start\ndata: ${JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })}\n\n`,
		`event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } })}\n\n`,
	];
	it.each(['begin', 'item'])('live text refused at %s: the socket closes while the gateway stalls', async (at) => {
		const server = await stallingStream(MESSAGE_EVENTS, false);
		try {
			const ctx = contextFor(server.baseUrl, 'n8n2', (type) => type === at);
			const client = await GatewayClient.create(ctx);
			const started = Date.now();
			const failure = await callChat(ctx, client, MESSAGES_WIRE, { ...call, what: 'Messages' }).catch((error: unknown) => error);
			expect(failure).toBeInstanceOf(Error);
			expect(await eventually(() => server.closedAt() !== undefined)).toBe(true);
			expect(server.closedAt()! - started).toBeLessThan(STALL_MS / 2);
		} finally {
			await server.close();
		}
	});
});

describe('the failure when n8n stops taking a streamed answer', () => {
	// Review r7: refused at `begin`, the item failed with n8n's own Error, not a GatewayError:
	// callChat's `finally` awaits live.close(), LiveOrder.advance awaited the send chain the refused
	// chunk left rejected, and that rejection replaced the classified failure.
	it('refused at the first chunk: the item fails with a GatewayError of that item, not the raw error of n8n', async () => {
		const server = await stallingStream([EVENT('Hel')], false);
		try {
			const ctx = contextFor(server.baseUrl, 'n8n2', (type) => type === 'begin');
			const client = await GatewayClient.create(ctx);
			const failure = await callChat(ctx, client, CHAT_COMPLETIONS, call).catch((error: unknown) => error);
			expect(failure).toBeInstanceOf(GatewayError);
			expect((failure as GatewayError).itemIndex).toBe(0);
			expect((failure as GatewayError).kind).toBe('live_text');
			// The gateway had answered: it may have billed the answer.
			expect((failure as GatewayError).mayHaveActed).toBe(true);
		} finally {
			await server.close();
		}
	});

	// Review r7: refused at a later chunk, the failure read "the connection to 127.0.0.1:… failed
	// (no answer)", kind `network`: the gateway was answering; n8n stopped taking the answer.
	it('refused at a later chunk: the words do not blame the connection nor say no answer came', async () => {
		const server = await stallingStream([EVENT('Hel'), EVENT('lo')], false);
		try {
			const ctx = contextFor(server.baseUrl, 'n8n2', (type) => type === 'item');
			const client = await GatewayClient.create(ctx);
			const failure = (await callChat(ctx, client, CHAT_COMPLETIONS, call).catch((error: unknown) => error)) as GatewayError;
			expect(failure).toBeInstanceOf(GatewayError);
			expect(failure.kind).not.toBe('network');
			expect(failure.fullMessage).not.toMatch(/connection to .* failed|no answer/);
			expect(failure.headline).toBe('Chat failed: n8n could not pass the answer on (the chat client has gone)');
			expect(failure.mayHaveActed).toBe(true);
		} finally {
			await server.close();
		}
	});
});
