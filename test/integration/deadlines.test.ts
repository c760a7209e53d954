/**
 * One deadline owner, over real HTTP: a gateway that always answers 429 (with no Retry-After,
 * 0, a huge one, a negative one, an HTTP date) against every node ends each item within its own
 * limit (plus 2 s), in words that say what was waited and which limit ended it; a 429 of one item
 * does not hold the others past their own limits; and no request of a run reaches the gateway
 * after the run ended.
 */
import type { ChatModel, Message } from '@n8n/ai-node-sdk';
import type { IDataObject, INodeExecutionData, ISupplyDataFunctions } from 'n8n-workflow';

import { complete } from '../../nodes/GatewayChat/complete';
import type { AiNodeSdk } from '../../nodes/GatewayChatModel/sdk';
import { supplyGatewayChatModel } from '../../nodes/GatewayChatModel/supply';
import { GatewayImageGenerate } from '../../nodes/GatewayImageGenerate/GatewayImageGenerate.node';
import { createMessage } from '../../nodes/GatewayMessages/create';
import { GatewayPlantCreate } from '../../nodes/GatewayPlantCreate/GatewayPlantCreate.node';
import { executeVideo } from '../../nodes/GatewayVideoGenerate/router';
import { BUSY_MARGIN_MS } from '../helpers/busy';
import { createExecuteContext } from '../helpers/executeContext';
import { tooManyRequests, useScriptedServer } from '../helpers/scriptedServer';

const KEY = 'sk-deadlines-0123456789abcdef';
const CHAT_REPLY = JSON.stringify({
	id: 'c1',
	object: 'chat.completion',
	model: 'chat-sonnet-5',
	choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
	usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

const { serve, forget } = useScriptedServer();

function context(baseUrl: string, parameters: IDataObject | ((itemIndex: number) => IDataObject), options: { items?: INodeExecutionData[]; continueOnFail?: boolean; nodeType?: string } = {}) {
	return createExecuteContext({
		parameters,
		items: options.items,
		continueOnFail: options.continueOnFail,
		credentials: { apiKey: KEY, baseUrl },
		nodeType: options.nodeType,
	});
}

/** How a run ended, and how long it took. */
async function timed(work: () => Promise<unknown>): Promise<{ ms: number; error?: Error & { description?: string }; value?: unknown }> {
	const start = Date.now();
	try {
		const value = await work();
		return { ms: Date.now() - start, value };
	} catch (error) {
		return { ms: Date.now() - start, error: error as Error & { description?: string } };
	}
}

const chatParameters = (timeoutSeconds: number, extra: IDataObject = {}) => ({
	model: { __rl: true, mode: 'id', value: 'chat-sonnet-5' },
	messages: { values: [{ role: 'user', content: 'Hello' }] },
	maxTokens: 100,
	stream: false,
	options: { timeoutSeconds },
	...extra,
});

async function runChat(baseUrl: string, timeoutSeconds: number, extra: IDataObject = {}) {
	const { ctx } = context(baseUrl, chatParameters(timeoutSeconds, extra), { nodeType: 'n8n-nodes-model-gateway.gatewayChat' });
	return await timed(async () => await complete.call(ctx));
}

describe('an always-429 gateway against Gateway Chat (Timeout 5 s)', () => {
	it('without Retry-After: backs off within the Timeout and says how long and how often it tried', async () => {
		const gw = await serve(() => tooManyRequests());
		const { ms, error } = await runChat(gw.baseUrl, 5);
		expect(error).toBeDefined();
		expect(ms).toBeLessThan(5000 + BUSY_MARGIN_MS);
		expect(error?.message).toMatch(/rate limit/);
		expect(error?.message).toMatch(/Timeout \(Seconds\)/);
		expect(error?.message).toMatch(new RegExp(`${gw.requests.length} tries`));
		expect(gw.requests.length).toBeGreaterThan(1);
	});

	it.each([
		['10', 10],
		['60', 60],
		['99999999', 99_999_999],
	])('with Retry-After: %s, fails at once, naming the wait and the time left', async (retryAfter, seconds) => {
		const gw = await serve(() => tooManyRequests(retryAfter));
		const { ms, error } = await runChat(gw.baseUrl, 5);
		expect(ms).toBeLessThan(BUSY_MARGIN_MS);
		expect(gw.requests).toHaveLength(1);
		expect(error?.message).toMatch(new RegExp(`the gateway asks to retry after ${seconds} s, more than the [0-9.]+ s left of Timeout \\(Seconds\\)`));
		expect(error?.message).not.toMatch(/waiting did not help/);
	});

	it('with Retry-After as an HTTP date a minute ahead, fails at once', async () => {
		const gw = await serve(() => tooManyRequests(new Date(Date.now() + 61_000).toUTCString()));
		const { ms, error } = await runChat(gw.baseUrl, 5);
		expect(ms).toBeLessThan(BUSY_MARGIN_MS);
		expect(gw.requests).toHaveLength(1);
		expect(error?.message).toMatch(/the gateway asks to retry after (60|61) s, more than the [0-9.]+ s left of Timeout \(Seconds\)/);
	});

	it.each(['0', '-5', 'Thu, 01 Jan 1970 00:00:00 GMT'])('with Retry-After: %s, backs off (no hammering) and ends within the Timeout', async (retryAfter) => {
		const gw = await serve(() => tooManyRequests(retryAfter));
		const { ms, error } = await runChat(gw.baseUrl, 5);
		expect(error?.message).toMatch(/Timeout \(Seconds\)/);
		expect(ms).toBeLessThan(5000 + BUSY_MARGIN_MS);
		// A backoff, not 20 requests in a few milliseconds.
		expect(gw.requests.length).toBeLessThan(8);
	});
});

describe('an always-429 gateway against the other nodes', () => {
	it('Gateway Messages (Timeout 5 s) fails at once on a Retry-After longer than its Timeout', async () => {
		const gw = await serve(() => tooManyRequests('60'));
		const { ctx } = context(gw.baseUrl, chatParameters(5), { nodeType: 'n8n-nodes-model-gateway.gatewayMessages' });
		const { ms, error } = await timed(async () => await createMessage.call(ctx));
		expect(ms).toBeLessThan(BUSY_MARGIN_MS);
		expect(error?.message).toMatch(/the gateway asks to retry after 60 s, more than the [0-9.]+ s left of Timeout \(Seconds\)/);
	});

	it('Gateway Messages (Timeout 3 s) without Retry-After ends within its Timeout', async () => {
		const gw = await serve(() => tooManyRequests());
		const { ctx } = context(gw.baseUrl, chatParameters(3), { nodeType: 'n8n-nodes-model-gateway.gatewayMessages' });
		const { ms, error } = await timed(async () => await createMessage.call(ctx));
		expect(ms).toBeLessThan(3000 + BUSY_MARGIN_MS);
		expect(error?.message).toMatch(/Timeout \(Seconds\)/);
	});

	it('Gateway Image Generate fails at once on a Retry-After longer than its limit, and says nothing was created', async () => {
		const gw = await serve(() => tooManyRequests('600'));
		const { ctx } = context(gw.baseUrl, { model: { __rl: true, mode: 'list', value: 'img-image-2' }, prompt: 'a fox' });
		const { ms, error } = await timed(async () => await new GatewayImageGenerate().execute.call(ctx));
		expect(ms).toBeLessThan(BUSY_MARGIN_MS);
		expect(gw.requests).toHaveLength(1);
		expect(error?.message).toMatch(/the gateway asks to retry after 600 s, more than the [0-9.]+ s left of the 300 s limit for generating images/);
		expect(`${error?.message} ${error?.description}`).not.toMatch(/may have gone through/);
	});

	it("Gateway Image Generate downloads its links within the item's limit, not a limit of their own", async () => {
		// The generation answers when 295 s of the item's 300 s are gone (the clock is moved on);
		// the link then asks for 10 s more, which the item no longer has.
		const realNow = Date.now.bind(Date);
		let shift = 0;
		const clock = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + shift);
		try {
			const gw = await serve((request) => {
				if (request.method === 'POST') {
					shift = 295_000;
					return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ created: 1, data: [{ url: `${gw.baseUrl}/files/fox.png` }] }) };
				}
				return tooManyRequests('10');
			});
			const { ctx } = context(gw.baseUrl, { model: { __rl: true, mode: 'list', value: 'img-image-2' }, prompt: 'a fox' });
			const { ms, error } = await timed(async () => await new GatewayImageGenerate().execute.call(ctx));
			expect(error?.message).toMatch(/retry after 10 s, more than the [0-9.]+ s left of the 300 s limit for generating images/);
			expect(ms - shift).toBeLessThan(BUSY_MARGIN_MS);
			expect(gw.requests.map((r) => r.method)).toEqual(['POST', 'GET']);
		} finally {
			clock.mockRestore();
		}
	});

	it('Gateway Plant Create fails at once on a Retry-After longer than its limit', async () => {
		const gw = await serve(() => tooManyRequests('45'));
		const { ctx } = context(gw.baseUrl, () => ({ id: 7, name: 'Fern' }), { items: [{ json: {} }] });
		const { ms, error } = await timed(async () => await new GatewayPlantCreate().execute.call(ctx));
		expect(ms).toBeLessThan(BUSY_MARGIN_MS);
		expect(gw.requests).toHaveLength(1);
		expect(error?.message).toMatch(/the gateway asks to retry after 45 s, more than the [0-9.]+ s left of the 30 s limit for creating a plant/);
	});

	it('Gateway Plant Create without Retry-After backs off within its 30 s limit, then says how often it tried', async () => {
		const gw = await serve(() => tooManyRequests());
		const { ctx } = context(gw.baseUrl, () => ({ id: 8, name: 'Fern' }), { items: [{ json: {} }] });
		const { ms, error } = await timed(async () => await new GatewayPlantCreate().execute.call(ctx));
		expect(ms).toBeLessThan(30_000 + BUSY_MARGIN_MS);
		expect(error?.message).toMatch(new RegExp(`${gw.requests.length} tries in [0-9.]+ s; the next would come after the [0-9.]+ s left of the 30 s limit for creating a plant`));
		// A 429 created nothing: the message does not say the plant may exist.
		expect(`${error?.message} ${error?.description}`).not.toMatch(/may have gone through/);
	});

	it('the Gateway Chat Model (Timeout 4 s) ends within its Timeout, with Retry-After or without', async () => {
		const standInSdk = {
			BaseChatModel: class {
				constructor(
					public provider: string,
					public modelId: string,
					public defaultConfig?: object,
					protected tools: unknown[] = [],
				) {}
			},
			supplyModel: (_ctx: unknown, model: ChatModel) => ({ response: model }),
			getParametersJsonSchema: () => ({}),
		} as unknown as AiNodeSdk;
		const user: Message = { role: 'user', content: [{ type: 'text', text: 'Hello' }] };
		for (const retryAfter of [undefined, '60']) {
			const gw = await serve(() => tooManyRequests(retryAfter));
			const { ctx } = createExecuteContext({
				parameters: { model: { __rl: true, mode: 'id', value: 'chat-sonnet-5' }, options: { timeoutSeconds: 4 } },
				credentials: { apiKey: KEY, baseUrl: gw.baseUrl },
				nodeName: 'Gateway Chat Model',
			});
			const model = (await supplyGatewayChatModel(ctx as unknown as ISupplyDataFunctions, 0, async () => standInSdk)).response as ChatModel;
			const { ms, error } = await timed(async () => await model.generate([user]));
			expect(ms).toBeLessThan(retryAfter ? BUSY_MARGIN_MS : 4000 + BUSY_MARGIN_MS);
			expect(error?.message).toMatch(retryAfter ? /the gateway asks to retry after 60 s, more than the [0-9.]+ s left of Timeout \(Seconds\)/ : /Timeout \(Seconds\)/);
			await gw.close();
			forget();
		}
	});
});

describe('words', () => {
	it('a Generate whose every submit got 429 says nothing was created, and what was waited', async () => {
		const gw = await serve(() => tooManyRequests('0.1'));
		const { ctx } = context(
			gw.baseUrl,
			{ operation: 'generate', model: { __rl: true, mode: 'list', value: 'video-2-0-fast-260128' }, prompt: 'a fox', seconds: 5, size: '1280x720' },
			{ items: [{ json: {} }, { json: {} }], nodeType: 'n8n-nodes-model-gateway.gatewayVideoGenerate' },
		);
		const { error } = await timed(async () => await executeVideo(ctx));
		const said = `${error?.message} ${error?.description}`;
		expect(said).not.toMatch(/may have (created|gone through)/);
		expect(said).not.toMatch(/got no answer/);
		expect(error?.message).toMatch(/rate limit/);
		expect(error?.message).toMatch(/tries in [0-9.]+ s/);
	});
});

describe('the shared pause', () => {
	it('does not hold an item past its own Timeout: it fails then, in words that say why', async () => {
		// Item 0 is told to retry after 4 s, which holds the run's requests. Item 1 (Timeout 2 s)
		// meets a 502 a little later and would retry inside that hold.
		const gw = await serve((request) => {
			const item = /item-(\d)/.exec(request.body)?.[1];
			const earlier = gw.requests.filter((seen) => seen.body.includes(`item-${item}`)).length;
			if (earlier > 1) return { status: 200, body: CHAT_REPLY };
			return item === '0' ? tooManyRequests('4') : { status: 502, body: '', delayMs: 300 };
		});
		const { ctx } = context(
			gw.baseUrl,
			(itemIndex) => ({ ...chatParameters(itemIndex === 0 ? 30 : 2), messages: { values: [{ role: 'user', content: `item-${itemIndex}` }] } }),
			{ items: [{ json: {} }, { json: {} }], continueOnFail: true, nodeType: 'n8n-nodes-model-gateway.gatewayChat' },
		);
		const started = Date.now();
		const [output] = (await complete.call(ctx)) as INodeExecutionData[][];
		const item1Failed = output[1].json;
		expect(item1Failed.error).toMatch(/more than the [0-9.]+ s left of Timeout \(Seconds\)/);
		// Item 1 got no request in during the hold.
		const item1Requests = gw.requests.filter((request) => request.body.includes('item-1'));
		expect(item1Requests).toHaveLength(1);
		expect(output[0].json.text).toBe('Hi');
		expect(Date.now() - started).toBeGreaterThanOrEqual(3900);
	});
});

describe('no request after the run ended', () => {
	it('a lane waiting out a Retry-After sends nothing once another item failed the run', async () => {
		// Item 0 is refused at once (400): the run fails. Item 1 was told to retry after 3 s.
		const gw = await serve((request) => {
			if (request.body.includes('item-0')) return { status: 400, body: JSON.stringify({ error: { message: 'bad prompt' } }), delayMs: 200 };
			return tooManyRequests('3');
		});
		const { ctx } = context(gw.baseUrl, (itemIndex) => ({ model: { __rl: true, mode: 'list', value: 'img-image-2' }, prompt: `item-${itemIndex}` }), {
			items: [{ json: {} }, { json: {} }],
		});
		const { error } = await timed(async () => await new GatewayImageGenerate().execute.call(ctx));
		const ended = Date.now();
		expect(error?.message).toMatch(/bad prompt/);
		await new Promise((resolve) => setTimeout(resolve, 5000));
		expect(gw.requests.filter((request) => request.time > ended)).toEqual([]);
		expect(gw.requests.filter((request) => request.body.includes('item-1'))).toHaveLength(1);
	});
});
