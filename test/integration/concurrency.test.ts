/**
 * Concurrency across items, at node level against the loopback gateway: output order and
 * pairedItem follow the input whatever order the answers come in, never more requests in flight
 * than the Concurrency option, one 429 holds the whole batch back (shared backoff) without
 * multiplying retries, and the credential is read once per run, its key sent with every request. Nothing here asserts how fast
 * anything is: speed is for `npm run bench`.
 */
import type { IDataObject, IExecuteFunctions, IHttpRequestOptions } from 'n8n-workflow';

import { complete } from '../../nodes/GatewayChat/complete';
import { GatewayPlantCreate } from '../../nodes/GatewayPlantCreate/GatewayPlantCreate.node';
import { DEFAULT_CONCURRENCY, MAX_CONCURRENCY, getConcurrency } from '../../nodes/shared/items/itemRunner';
import type { Fault } from '../gateway';
import { useGateway } from '../gateway/testing';
import { createExecuteContext } from '../helpers/executeContext';

const KEY = 'sk-integration-concurrency-0123456789';
const CHAT = '/v1/chat/completions';
const env = useGateway();

/** The items' request bodies in the order their answers came back, and the most requests in flight at once. */
interface Traffic {
	answered: string[];
	peakInFlight: number;
}

/**
 * Wraps the context's httpRequest to watch the traffic. With `encoding: 'stream'` n8n's request
 * resolves at the answer's headers: a request stays in flight until its body is closed.
 */
function watchTraffic(ctx: IExecuteFunctions): Traffic {
	const traffic: Traffic = { answered: [], peakInFlight: 0 };
	let inFlight = 0;
	const send = ctx.helpers.httpRequest;
	ctx.helpers.httpRequest = async function (this: IExecuteFunctions, options: IHttpRequestOptions) {
		inFlight++;
		traffic.peakInFlight = Math.max(traffic.peakInFlight, inFlight);
		let response: { body?: { once?: (event: string, listener: () => void) => void } } | undefined;
		try {
			response = (await send.call(this, options)) as typeof response;
			return response;
		} finally {
			traffic.answered.push(String(options.body));
			if (typeof response?.body?.once === 'function') response.body.once('close', () => inFlight--);
			else inFlight--;
		}
	} as IExecuteFunctions['helpers']['httpRequest'];
	return traffic;
}

const items = (count: number) => Array.from({ length: count }, (_, i) => ({ json: { i } }));

describe('Gateway Chat, 20 items at concurrency 5', () => {
	async function runChat(parameters: (itemIndex: number) => IDataObject) {
		const { ctx, requests, credentialReads } = createExecuteContext({
			parameters: (itemIndex) => ({
				model: { __rl: true, mode: 'list', value: 'chat-sonnet-5' },
				maxTokens: 256,
				stream: false,
				options: { concurrency: 5 },
				...parameters(itemIndex),
			}),
			items: items(20),
			credentials: { apiKey: KEY, baseUrl: env.gateway.baseUrl },
			nodeType: 'n8n-nodes-model-gateway.gatewayChat',
		});
		const traffic = watchTraffic(ctx);
		const [output] = await complete.call(ctx);
		return { output, traffic, requests, credentialReads };
	}
	const question = (i: number) => ({ messages: { values: [{ role: 'user', content: `question ${i}` }] } });

	it('keeps input order and pairedItem when answers come back out of order, with at most 5 requests in flight', async () => {
		// Each wave of five: the first to arrive answers last.
		env.gateway.queueFaults(CHAT, Array.from({ length: 20 }, (_, k): Fault => `slow:${(4 - (k % 5)) * 40}`));
		const { output, traffic } = await runChat(question);

		const answeredItems = traffic.answered.map((body) => Number(/question (\d+)/.exec(body)?.[1]));
		expect([...answeredItems].sort((a, b) => a - b)).toEqual(items(20).map((_, i) => i));
		expect(answeredItems).not.toEqual([...answeredItems].sort((a, b) => a - b)); // really out of order
		expect(traffic.peakInFlight).toBe(5);
		expect(output.map((item) => item.json.text)).toEqual(items(20).map((_, i) => `Echo from chat-sonnet-5: question ${i}`));
		expect(output.map((item) => item.pairedItem)).toEqual(items(20).map((_, i) => ({ item: i })));
		expect(env.gateway.requests.filter((request) => request.path === CHAT)).toHaveLength(20);
	});

	it('reads the credential once and sends its key with every request', async () => {
		const { requests, credentialReads } = await runChat(question);
		expect(credentialReads).toEqual(['gatewayApi']);
		expect(requests).toHaveLength(20);
		for (const request of requests) expect(request.headers).toMatchObject({ Authorization: `Bearer ${KEY}` });
		for (const request of env.gateway.requests.filter((sent) => sent.path === CHAT)) expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
	});
});

describe('Gateway Plant Create, shared backoff', () => {
	async function runPlants(rows: IDataObject[], concurrency: number) {
		const { ctx } = createExecuteContext({
			parameters: (itemIndex) => ({ ...rows[itemIndex], options: { concurrency } }),
			items: rows.map((row) => ({ json: row })),
			credentials: { apiKey: KEY, baseUrl: env.gateway.baseUrl },
		});
		return await new GatewayPlantCreate().execute.call(ctx);
	}
	const plantPosts = () => env.gateway.requests.filter((request) => request.path === '/plants' && request.method === 'POST');

	it('a 429 on one item paces the batch just under what got through, and only that item is sent again', async () => {
		// A bare 429 (no Retry-After, as relays send it) after others got through: no pause for the
		// whole batch, no storm of retries: the rest goes out at about what the gateway admitted.
		const rows = Array.from({ length: 20 }, (_, i) => ({ id: 7000 + i, name: i === 7 ? 'Patient [429-once]' : `Plant ${i}` }));
		const [output] = await runPlants(rows, 5);

		expect(output.map((item) => item.json)).toEqual(rows);
		expect(output.map((item) => item.pairedItem)).toEqual(rows.map((_, i) => ({ item: i })));
		const posts = plantPosts();
		// 20 items, one retry: a retry per item would be more.
		expect(posts).toHaveLength(21);
		const ofItem7 = posts.filter((post) => post.rawBody.includes('[429-once]'));
		expect(ofItem7).toHaveLength(2);
		// The retry is not held back by a backoff of 0.5 to 1 s: it waits only its turn in the pace.
		expect(ofItem7[1].time - ofItem7[0].time).toBeLessThan(450);
	});

	it('a 429 before anything got through holds the whole batch back for a backoff', async () => {
		env.gateway.queueFaults('/plants', ['429']);
		const rows = Array.from({ length: 10 }, (_, i) => ({ id: 7100 + i, name: `Plant ${i}` }));
		const [output] = await runPlants(rows, 1);
		expect(output.map((item) => item.json)).toEqual(rows);
		const posts = plantPosts();
		expect(posts).toHaveLength(11);
		// 0.5 to 1 s between the 429 and the next request of the batch.
		expect(posts[1].time - posts[0].time).toBeGreaterThanOrEqual(450);
	});

	it('with Retry-After, the whole batch waits that long: the first wave is all that is sent before it', async () => {
		env.gateway.queueFaults('/plants', ['429-retry-after:1']);
		const rows = Array.from({ length: 10 }, (_, i) => ({ id: 8000 + i, name: `Plant ${i}` }));
		const [output] = await runPlants(rows, 5);

		expect(output.map((item) => item.json)).toEqual(rows);
		const posts = plantPosts();
		expect(posts).toHaveLength(11);
		const limited = posts[0].time;
		const beforeResume = posts.filter((post) => post.time < limited + 950);
		// The five lanes' first requests; every later request, the retry included, waited.
		expect(beforeResume.length).toBeLessThanOrEqual(5);
		const retried = posts.filter((post) => post.rawBody === posts[0].rawBody);
		expect(retried).toHaveLength(2);
		expect(retried[1].time - limited).toBeGreaterThanOrEqual(950);
	});
});

describe('the Concurrency option', () => {
	it.each([
		[undefined, DEFAULT_CONCURRENCY],
		[1, 1],
		[0, 1],
		[-3, 1],
		[7.9, 7],
		[MAX_CONCURRENCY, MAX_CONCURRENCY],
		[100_000, MAX_CONCURRENCY],
		['not a number', DEFAULT_CONCURRENCY],
	])('%p runs %p at once', (value, expected) => {
		const { ctx } = createExecuteContext({
			parameters: { options: value === undefined ? {} : { concurrency: value } },
			credentials: { apiKey: KEY, baseUrl: 'http://127.0.0.1:9' },
		});
		expect(getConcurrency(ctx)).toBe(expected);
	});

	it('defaults to 10 and allows at most 100', () => {
		expect(DEFAULT_CONCURRENCY).toBe(10);
		expect(MAX_CONCURRENCY).toBe(100);
	});
});
