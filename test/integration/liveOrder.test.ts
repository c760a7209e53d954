/**
 * Streaming several items to a chat client: each item's text reaches it whole and in item order,
 * even when a later item's answer is written faster than an earlier one's (n8n's streaming API
 * recorded by the test context; a loopback SSE server whose first item answers slowly).
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

import { complete } from '../../nodes/GatewayChat/complete';
import { LiveOrder } from '../../nodes/shared/chat/liveOrder';
import { createExecuteContext } from '../helpers/executeContext';

const KEY = 'sk-live-order-0123456789';

/** A chat-completions stream: one word per event, `pauseMs` apart. */
function streamServer(): Promise<{ url: string; close: () => Promise<void> }> {
	const server = http.createServer((req, res) => {
		let body = '';
		req.on('data', (chunk) => (body += chunk));
		req.on('end', async () => {
			const content = JSON.parse(body).messages.at(-1).content as string;
			const pauseMs = content.startsWith('slow') ? 40 : 1;
			res.writeHead(200, { 'content-type': 'text/event-stream' });
			for (const word of content.split(' ')) {
				res.write(`data: ${JSON.stringify({ id: 'c', model: 'm', choices: [{ index: 0, delta: { content: `${word} ` } }] })}\n\n`);
				await new Promise((resolve) => setTimeout(resolve, pauseMs));
			}
			res.write(`data: ${JSON.stringify({ id: 'c', model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
			res.end('data: [DONE]\n\n');
		});
	});
	return new Promise((resolve) =>
		server.listen(0, '127.0.0.1', () =>
			resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: async () => await new Promise<void>((done) => server.close(() => done())) }),
		),
	);
}

it('streams the first item live and holds the others until it ends: no interleaved chunks', async () => {
	const server = await streamServer();
	try {
		const contents = ['slow one two three four five', 'fast six seven', 'fast eight nine'];
		const { ctx, chunks } = createExecuteContext({
			parameters: (itemIndex) => ({
				model: { __rl: true, mode: 'id', value: 'chat-sonnet-5' },
				messages: { values: [{ role: 'user', content: contents[itemIndex] }] },
				maxTokens: 64,
				stream: true,
				options: { concurrency: 3 },
			}),
			items: contents.map(() => ({ json: {} })),
			streaming: true,
			credentials: { apiKey: KEY, baseUrl: server.url },
		});
		const [output] = await complete.call(ctx);
		expect(output.map((item) => item.json.text)).toEqual(contents.map((content) => `${content.split(' ').join(' ')} `));
		// Every item's chunks in one block, items in order: begin, items…, end; then the next item.
		const order = chunks.map((chunk) => chunk.itemIndex);
		expect(order).toEqual([...order].sort((a, b) => a - b));
		for (const item of [0, 1, 2]) {
			const types = chunks.filter((chunk) => chunk.itemIndex === item).map((chunk) => chunk.type);
			expect(types[0]).toBe('begin');
			expect(types.at(-1)).toBe('end');
		}
	} finally {
		await server.close();
	}
});

describe('LiveOrder', () => {
	it('releases a later item whole once the earlier ones have ended, and a failed item never blocks the rest', async () => {
		const order = new LiveOrder();
		const sent: string[] = [];
		const say = (text: string) => async () => {
			sent.push(text);
		};
		const first = order.enter();
		const second = order.enter();
		const third = order.enter();
		await third.send(say('c1'));
		await third.end();
		await second.send(say('b1'));
		await first.send(say('a1'));
		expect(sent).toEqual(['a1']);
		await first.end();
		expect(sent).toEqual(['a1', 'b1']);
		await second.send(say('b2'));
		expect(sent).toEqual(['a1', 'b1', 'b2']);
		await second.end(); // ended (e.g. failed before writing more): the third, already whole, follows
		expect(sent).toEqual(['a1', 'b1', 'b2', 'c1']);
	});

	it('a chunk n8n refuses fails the send that carried it, never an end: not the live item own, nor when released for a later item (review r7)', async () => {
		const order = new LiveOrder();
		const refused = async () => {
			throw new Error('the chat client has gone');
		};
		const first = order.enter();
		const second = order.enter();
		await expect(first.send(refused)).rejects.toThrow('the chat client has gone');
		await second.send(refused); // held: it goes out when the first item ends
		await second.end();
		await expect(first.end()).resolves.toBeUndefined();
	});
});
