/**
 * Idle Timeout (issue 28) under a hostile review, over real HTTP to the loopback gateway: a silence
 * right after the answer's head (no byte of its body) is told apart from one before the head, and
 * every byte is a sign of life, the first few too: a relay whose keep-alive is a lone line end,
 * sent more often than the limit, keeps a slow answer alive. Times are bounds with a margin.
 */
import * as http from 'http';
import type { AddressInfo } from 'net';

import type { ChatModel, FunctionTool, Message, StreamChunk } from '@n8n/ai-node-sdk';
import type { IDataObject, ISupplyDataFunctions } from 'n8n-workflow';

import { complete } from '../../nodes/GatewayChat/complete';
import { supplyGatewayChatModel } from '../../nodes/GatewayChatModel/supply';
import { createMessage } from '../../nodes/GatewayMessages/create';
import { useGateway } from '../gateway/testing';
import { BUSY_MARGIN_MS } from '../helpers/busy';
import { standInSdk } from '../helpers/chatModelSdk';
import { createExecuteContext } from '../helpers/executeContext';
import { binaryItem, pngHeader, withBinaryHelpers } from '../helpers/files';

const KEY = 'sk-integration-idle-hostile-0123456789';
const env = useGateway();
const WORDS = 'one two three four five six seven eight nine ten eleven twelve';
/** Silent right after the head for 3.5 s, a lone "\n" every 700 ms meanwhile; then the whole answer. */
const NEWLINE_KEEPALIVES = `${WORDS} [stall-after:0] [stall-for:3500] [stall-ping:700] [stall-keepalive:newline]`;

type Operation = typeof complete;
const NODES: Array<[string, Operation, string, string]> = [
	['Gateway Chat', complete, '/v1/chat/completions', 'The chat request'],
	['Gateway Messages', createMessage, '/v1/messages', 'The messages request'],
];

async function run(operation: Operation, content: string, idleTimeoutSeconds: number) {
	const { ctx } = createExecuteContext({
		parameters: { model: { __rl: true, mode: 'id', value: 'chat-sonnet-5' }, messages: { values: [{ role: 'user', content }] }, maxTokens: 4096, stream: true, options: { idleTimeoutSeconds } },
		credentials: { apiKey: KEY, baseUrl: env.gateway.baseUrl },
	});
	const started = Date.now();
	try {
		const [output] = await operation.call(ctx);
		return { output, took: Date.now() - started };
	} catch (error) {
		return { error: error as Error & { description?: string }, took: Date.now() - started };
	}
}

describe.each(NODES)('%s', (_name, operation, path, what) => {
	it('a gateway silent right after the head: the answer had begun, before its first event; sent once', async () => {
		const result = await run(operation, `${WORDS} [stall-after:0]`, 1);
		expect(result.error?.message).toBe(`${what} failed: the gateway sent nothing for 1 s after the answer began, before its first event, the limit set by Idle Timeout (Seconds)`);
		expect(result.took).toBeLessThan(1000 + BUSY_MARGIN_MS);
		expect(env.gateway.requests.filter((request) => request.path === path)).toHaveLength(1);
	});

	it('a lone line end sent more often than the limit, before the first event, keeps the answer alive', async () => {
		const result = await run(operation, NEWLINE_KEEPALIVES, 2);
		expect(result.error).toBeUndefined();
		expect(String(result.output?.[0].json.text)).toContain('twelve');
		expect(result.took).toBeGreaterThanOrEqual(3400);
	});
});

describe('Gateway Chat Model', () => {
	async function chatModel(options: IDataObject) {
		const { ctx } = createExecuteContext({
			parameters: { model: { __rl: true, mode: 'id', value: 'chat-sonnet-5' }, options },
			credentials: { apiKey: KEY, baseUrl: env.gateway.baseUrl },
			nodeName: 'Gateway Chat Model',
		});
		return (await supplyGatewayChatModel(ctx as unknown as ISupplyDataFunctions, 0, async () => standInSdk)).response as ChatModel;
	}

	it('an AI Agent\'s tool-call stream that stalls between its tool deltas ends at Idle Timeout, sent once', async () => {
		const calculator: FunctionTool = { type: 'function', name: 'Calculator', description: 'Does sums', inputSchema: { type: 'object', properties: { input: { type: 'string' } } } };
		const model = (await chatModel({ idleTimeoutSeconds: 1, timeoutSeconds: 60 })).withTools([calculator]);
		const user: Message = { role: 'user', content: [{ type: 'text', text: '[tool-pieces] [call:Calculator {"input": "2 + 3"}] [call:Calculator {"input": "6 * 7"}] [stall-after:900]' }] };
		const started = Date.now();
		let error: (Error & { description?: string }) | undefined;
		try {
			for await (const chunk of model.stream([user])) void chunk;
		} catch (caught) {
			error = caught as Error;
		}
		expect(error?.message).toMatch(/^The chat model request failed: the gateway sent nothing for 1 s after \d+ events, [12] tool calls? begun, before any text of the answer, the limit set by Idle Timeout \(Seconds\)$/);
		expect(Date.now() - started).toBeLessThan(1000 + BUSY_MARGIN_MS);
		expect(env.gateway.requests.filter((request) => request.path === '/v1/chat/completions')).toHaveLength(1);
	});

	it('a lone line end sent more often than the limit, before the first event, keeps the answer alive', async () => {
		const model = await chatModel({ idleTimeoutSeconds: 2 });
		const chunks: StreamChunk[] = [];
		const user: Message = { role: 'user', content: [{ type: 'text', text: NEWLINE_KEEPALIVES }] };
		for await (const chunk of model.stream([user])) chunks.push(chunk);
		expect(chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.delta : '')).join('')).toContain('twelve');
	});
});

/**
 * A body in one piece (files n8n keeps in the item, its default mode) goes out at the gateway's
 * reading pace, and n8n's request helper does not say when its last byte went: its silence counts
 * from the answer's head. A gateway reading a 16 MB body at about 2.5 MB/s is still receiving, not
 * silent (the review's report: it failed with "sent nothing for 2 s after the request was sent").
 */
describe('Gateway Chat: a slow upload of a file kept in the item', () => {
	it('is not the gateway\'s silence', async () => {
		const chunk = (text: string, finish: string | null) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: text ? { content: text } : {}, finish_reason: finish }] })}\n\n`;
		const server = http.createServer((req, res) => {
			// Reads about 256 KB every 100 ms, then answers.
			req.pause();
			const reader = setInterval(() => {
				for (let read = 0; read < 256 * 1024 && req.read(16 * 1024) !== null; read += 16 * 1024);
			}, 100);
			req.on('readable', () => undefined);
			req.on('end', () => {
				clearInterval(reader);
				res.writeHead(200, { 'content-type': 'text/event-stream' });
				res.end(`${chunk('ok', null)}${chunk('', 'stop')}data: [DONE]\n\n`);
			});
			req.on('close', () => clearInterval(reader));
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		try {
			const { ctx } = createExecuteContext({
				parameters: { model: { __rl: true, mode: 'id', value: 'chat-sonnet-5' }, messages: { values: [{ role: 'user', content: 'hi' }] }, maxTokens: 100, stream: true, options: { idleTimeoutSeconds: 2, binaryAttachments: 'photo' } },
				credentials: { apiKey: KEY, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` },
				items: [binaryItem({ photo: { bytes: pngHeader(64, 64, 12 * 1024 * 1024), fileName: 'photo.png', mimeType: 'image/png' } })],
			});
			withBinaryHelpers(ctx);
			const [output] = await complete.call(ctx);
			expect(output[0].json.text).toBe('ok');
		} finally {
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		}
	});
});

/**
 * An error answer whose body arrives slower than Idle Timeout: its status and the words that had
 * arrived are the gateway's answer, quoted, not "sent nothing" (the words were lost).
 */
describe.each(NODES)('%s: an error body that drips slower than Idle Timeout', (_name, operation) => {
	it('is quoted as far as it came, with its status', async () => {
		const server = http.createServer((req, res) => {
			req.resume();
			req.on('end', () => {
				res.writeHead(400, { 'content-type': 'application/json' });
				res.write('{"error":{"message":"the prompt names an unknown voice, ');
				// The rest comes after a silence longer than the limit.
				const later = setTimeout(() => res.end('try again later"}}'), 3000);
				res.on('close', () => clearTimeout(later));
			});
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		try {
			const { ctx } = createExecuteContext({
				parameters: { model: { __rl: true, mode: 'id', value: 'chat-sonnet-5' }, messages: { values: [{ role: 'user', content: 'hi' }] }, maxTokens: 100, stream: true, options: { idleTimeoutSeconds: 1 } },
				credentials: { apiKey: KEY, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` },
			});
			const started = Date.now();
			const error = await operation.call(ctx).then(
				() => undefined,
				(caught: Error & { description?: string }) => caught,
			);
			const said = `${error?.message} ${error?.description}`;
			expect(said).toContain('HTTP 400');
			expect(said).toContain('the prompt names an unknown voice');
			expect(Date.now() - started).toBeLessThan(1000 + BUSY_MARGIN_MS);
		} finally {
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		}
	});
});
