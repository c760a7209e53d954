/**
 * Gateway Chat, Gateway Messages, Gateway Image Generate and Gateway Plant Create against the
 * hostile gateway (test/hostile): keys printed by the gateway, redirects to a sibling host, paid
 * requests after an answer that leaves open whether the gateway acted, waits that never end,
 * errors inside 200 answers, links that are not files, and objects where text belongs.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { complete } from '../../nodes/GatewayChat/complete';
import { generateImages } from '../../nodes/GatewayImageGenerate/generate';
import { createMessage } from '../../nodes/GatewayMessages/create';
import { createPlant } from '../../nodes/GatewayPlantCreate/createPlant';
import { startHostileGateway } from '../hostile';
import type { HostileGateway } from '../hostile';
import { createExecuteContext } from '../helpers/executeContext';

const KEY = 'sk-hostile-9f8e7d6c5b4a39281706';
const SECRET_PART = KEY.slice(3);
const HEADER_SECRET = 'portkey-secret-value-4242';

let hostile: HostileGateway;
beforeAll(async () => {
	hostile = await startHostileGateway({ dripIntervalMs: 100, keepAliveIntervalMs: 100, videoPollsToFinish: 0 });
});
afterAll(async () => await hostile.close());
beforeEach(() => hostile.reset());

type Operation = (this: never) => Promise<INodeExecutionData[][]>;

interface Run {
	output?: INodeExecutionData[];
	error?: Error;
	/** Everything the run produced or threw, as n8n would store it. */
	text: string;
	requests: number;
}

async function run(operation: Operation, parameters: IDataObject | ((itemIndex: number) => IDataObject), options: { items?: number; continueOnFail?: boolean } = {}): Promise<Run> {
	const before = hostile.requests.length;
	const { ctx } = createExecuteContext({
		parameters,
		items: Array.from({ length: options.items ?? 1 }, (_, index) => ({ json: { index } })),
		continueOnFail: options.continueOnFail,
		credentials: { apiKey: KEY, baseUrl: hostile.baseUrl, customHeaders: JSON.stringify({ 'x-relay-token': HEADER_SECRET }) } as never,
	});
	try {
		const [output] = await (operation as unknown as (this: unknown) => Promise<INodeExecutionData[][]>).call(ctx);
		return { output, text: JSON.stringify(output), requests: hostile.requests.length - before };
	} catch (error) {
		const err = error as Error & { description?: string; context?: unknown };
		const text = JSON.stringify({ message: err.message, description: err.description, context: err.context, stack: err.stack, json: error });
		return { error: err, text, requests: hostile.requests.length - before };
	}
}

function expectNoSecret(result: Run) {
	expect(result.text).not.toContain(KEY);
	expect(result.text).not.toContain(SECRET_PART);
	expect(result.text).not.toContain(HEADER_SECRET);
}

const chat = (content: string, extra: IDataObject = {}) => ({
	model: { __rl: true, mode: 'id', value: 'chat-sonnet-5' },
	messages: { values: [{ role: 'user', content }] },
	maxTokens: 256,
	stream: false,
	options: {},
	...extra,
});
const image = (prompt: string, extra: IDataObject = {}) => ({ model: { __rl: true, mode: 'id', value: 'img-image-2' }, prompt, n: 1, responseFormat: 'url', options: {}, ...extra });
const plant = (id: number, name: string) => ({ id, name, tag: '' });

describe('the key is never printed', () => {
	it.each([
		['chat', complete, chat('hi [hostile:token-in-200]')],
		['chat streamed', complete, chat('hi [hostile:token-in-200]', { stream: true })],
		['messages', createMessage, chat('hi [hostile:token-in-200]')],
		['image', generateImages, image('cat [hostile:token-in-200]')],
		['plant', createPlant, plant(1, 'Rose [hostile:token-in-200]')],
	])('a 200 answer quoting the key (%s) is an authentication error, masked', async (_name, operation, parameters) => {
		const result = await run(operation as Operation, parameters);
		expect(result.error?.message).toMatch(/refused the API key.*"invalid token Bearer \*\*\*"/);
		expectNoSecret(result);
	});

	it('a 401 quoting the key without its sk- prefix', async () => {
		const result = await run(complete as Operation, chat('hi [hostile:401-secret-part]'));
		expect(result.error?.message).toContain('无效的令牌 token=***');
		expectNoSecret(result);
	});

	it.each([
		['chat', complete],
		['messages', createMessage],
	])('an error event quoting the key in the middle of a %s stream', async (_name, operation) => {
		const result = await run(operation as Operation, chat('hi [hostile:stream-error-key]', { stream: true }));
		expect(result.error?.message).toMatch(/failed: .*Authorization: Bearer \*\*\*/);
		expectNoSecret(result);
	});

	it('a Messages stream whose tool input is not JSON and holds the key', async () => {
		const result = await run(createMessage as Operation, chat('weather? [hostile:bad-tool-json-key]', { stream: true }));
		expect(result.error?.message).toMatch(/tool input that is not JSON: ".*Authorization=Bearer \*\*\*/);
		expectNoSecret(result);
	});

	it('with Continue On Fail the error item is masked too', async () => {
		const result = await run(complete as Operation, chat('hi [hostile:token-in-200]'), { continueOnFail: true });
		expect(result.output?.[0].json.error).toMatch(/refused the API key/);
		expect(result.output?.[0].json.kind).toBe('auth');
		expectNoSecret(result);
	});
});

describe('redirects never carry the key or custom headers to another origin', () => {
	it.each(['redirect-sibling-302', 'redirect-sibling-307', 'redirect-port-302'])('a chat POST answered %s is not sent on, and says where it went', async (scenario) => {
		const result = await run(complete as Operation, chat(`hi [hostile:${scenario}]`));
		expect(result.error?.message).toMatch(/redirected the request to http:\/\/(files\.gw\.example\.test|gw\.example\.test):\d+\/landing/);
		expect(hostile.leakedAuthorization()).toEqual([]);
		expect(hostile.requests.filter((request) => request.origin !== 'gateway')).toEqual([]);
	});

	it.each(['redirect-sibling-302', 'redirect-sibling-307', 'redirect-port-302'])('an image link answered %s is followed without the key', async (scenario) => {
		const result = await run(generateImages as Operation, image(`cat [hostile:${scenario}]`));
		expect(result.error).toBeUndefined();
		expect(result.output?.[0].binary?.data.mimeType).toBe('image/png');
		const landed = hostile.requests.filter((request) => request.origin !== 'gateway');
		expect(landed).toHaveLength(1);
		expect(landed[0].headers.authorization).toBeUndefined();
		expect(landed[0].headers['x-relay-token']).toBeUndefined();
		expect(hostile.leakedAuthorization()).toEqual([]);
	});

	it('custom headers go to the gateway itself', async () => {
		await run(complete as Operation, chat('hi'));
		expect(hostile.requests[0].headers['x-relay-token']).toBe(HEADER_SECRET);
	});

	it('a gateway that moved (301) is named, with what to change', async () => {
		const result = await run(complete as Operation, chat('hi [hostile:moved-301]'));
		expect(result.error?.message).toMatch(/the gateway moved to https:\/\/new\.example\.test\//);
		expect((result.error as { description?: string }).description).toMatch(/Update the Base URL/);
	});
});

describe('paid and state-changing requests are never sent twice', () => {
	it.each(['acted-then-502', 'acted-then-504', 'acted-then-reset'])('image generation after %s: sent once, "may have gone through"', async (scenario) => {
		const result = await run(generateImages as Operation, image(`cat [hostile:${scenario}]`));
		expect(hostile.count({ method: 'POST', path: '/v1/images/generations' })).toBe(1);
		expect(hostile.counters.imageGenerations).toBe(1);
		expect(JSON.stringify(result.error)).toMatch(/"mayHaveActed":true/);
		expect((result.error as { description?: string }).description).toMatch(/may have gone through/);
	});

	it.each(['acted-then-502', 'acted-then-504', 'acted-then-reset'])('plant create after %s: sent once; a second run hears "probably created by the first attempt"', async (scenario) => {
		const first = await run(createPlant as Operation, plant(31, `Fern [hostile:${scenario}]`));
		expect(hostile.count({ method: 'POST', path: '/plants' })).toBe(1);
		expect(hostile.plants.has('31')).toBe(true);
		expect((first.error as { description?: string }).description).toMatch(/may have gone through even so: it was not sent again/);
		const second = await run(createPlant as Operation, plant(31, 'Fern'));
		expect(second.error?.message).toContain('plant 31 already exists');
		expect((second.error as { description?: string }).description).toMatch(/probably created plant 31/);
	});

	it('a chat request after a 502 is retried, as the official SDKs do', async () => {
		const result = await run(complete as Operation, chat('hi [hostile:acted-then-502]'));
		expect(hostile.count({ method: 'POST', path: '/v1/chat/completions' })).toBeGreaterThan(1);
		expect(result.error?.message).toMatch(/HTTP 502/);
	}, 60_000);

	it('one image link answering 403 fails that image only: with Continue On Fail the other three keep their files', async () => {
		const result = await run(generateImages as Operation, image('cats [hostile:image-one-403]', { n: 4 }), { continueOnFail: true });
		const output = result.output ?? [];
		expect(output.map((item) => item.json.index)).toEqual([0, 1, 2, 3]);
		expect(output.filter((item) => item.binary?.data)).toHaveLength(3);
		expect(output[1].json.error).toMatch(/link has expired.*HTTP 403/);
		expect(output[1].json.url).toMatch(/\/files\/image-one-403\//);
		expect(output.every((item) => (item.pairedItem as { item: number }).item === 0)).toBe(true);
	});

	it('without Continue On Fail the error names the three images that were generated', async () => {
		const result = await run(generateImages as Operation, image('cats [hostile:image-one-403]', { n: 4 }));
		const description = (result.error as { description?: string }).description ?? '';
		for (const index of [0, 2, 3]) expect(description).toContain(`image ${index} (${hostile.siblingUrl}/files/image-one-403/`);
		expect(JSON.stringify((result.error as { context?: unknown }).context)).toMatch(/generatedImages/);
	});
});

describe('every wait ends', () => {
	it('a chat stream of keep-alive comments ends at the Timeout option', async () => {
		const started = Date.now();
		const result = await run(complete as Operation, chat('hi [hostile:keepalive-stream]', { stream: true, options: { timeoutSeconds: 1 } }));
		expect(result.error?.message).toMatch(/no complete answer within 1 s/);
		expect(Date.now() - started).toBeLessThan(8000);
		await waitFor(() => hostile.requests.some((request) => request.aborted));
	});

	it.each([
		['chat', complete, chat('hi [hostile:drip-body]', { options: { timeoutSeconds: 1 } })],
		['messages', createMessage, chat('hi [hostile:drip-body]', { options: { timeoutSeconds: 1 } })],
	])('a %s answer that drips spaces ends at the Timeout option', async (_name, operation, parameters) => {
		const started = Date.now();
		const result = await run(operation as Operation, parameters);
		expect(result.error?.message).toMatch(/no complete answer within 1 s/);
		expect(Date.now() - started).toBeLessThan(8000);
	});
});

describe('errors inside 200 answers are errors', () => {
	const bodies = ['200-error-object', '200-type-error', '200-success-false', '200-code-msg', '200-empty-array', '200-json-string', '200-null'];
	it.each(bodies)('chat %s', async (scenario) => {
		for (const stream of [false, true]) {
			const result = await run(complete as Operation, chat(`hi [hostile:${scenario}]`, { stream }));
			expect(result.output).toBeUndefined();
			expect(result.error?.message).toMatch(/^The chat request failed: /);
			expect(result.error?.message).not.toMatch(/Cannot read properties/);
		}
	});

	it('the same cause reads the same with Stream on and off', async () => {
		const off = await run(complete as Operation, chat('hi [hostile:200-type-error]'));
		const on = await run(complete as Operation, chat('hi [hostile:200-type-error]', { stream: true }));
		expect(on.error?.message).toBe(off.error?.message);
	});

	it('chat with no choices quotes what the gateway sent', async () => {
		const result = await run(complete as Operation, chat('hi [hostile:200-empty-choices]'));
		expect(result.error?.message).toMatch(/the gateway's answer has no choices: ".*"choices":\[\]/);
	});

	it.each(bodies)('messages, plant and image %s', async (scenario) => {
		for (const [operation, parameters] of [
			[createMessage, chat(`hi [hostile:${scenario}]`)],
			[createPlant, plant(5, `Ivy [hostile:${scenario}]`)],
			[generateImages, image(`dog [hostile:${scenario}]`)],
		] as const) {
			const result = await run(operation as Operation, parameters);
			expect(result.output).toBeUndefined();
			expect(result.error?.message).toMatch(/failed: /);
		}
	});

	it('a plant store that answers 200 {"error":400,…} has not created the plant', async () => {
		const result = await run(createPlant as Operation, plant(6, 'Ivy [hostile:plant-200-error]'));
		expect(result.error?.message).toMatch(/"name taken" \(code 400\)/);
	});
});

describe('links that are not files are refused, quoting their start', () => {
	it.each([
		['link-json-error', /answered with application\/json instead of an image: "\{"error":"link expired"\}"/],
		['link-forbidden-text', /answered with text\/plain instead of an image: "Forbidden"/],
		['link-tiny-text-as-mp4', /answered with text \(served as image\/png\) instead of an image: "Forbidden"/],
		['link-html', /answered with text\/html instead of an image/],
	])('%s', async (scenario, message) => {
		const result = await run(generateImages as Operation, image(`cat [hostile:${scenario}]`));
		expect(result.error?.message).toMatch(message);
	});
});

describe('objects where text belongs are refused before any request', () => {
	it.each([
		['Prompt', generateImages, image({ a: 1 } as never)],
		['Name', createPlant, { id: 1, name: { first: 'x' }, tag: '' }],
		['Tag', createPlant, { id: 1, name: 'x', tag: ['a'] }],
		['ID', createPlant, { id: { n: 1 }, name: 'x', tag: '' }],
	])('%s', async (field, operation, parameters) => {
		const result = await run(operation as Operation, parameters as IDataObject);
		expect(result.error?.message).toMatch(new RegExp(`^"${field}" must be (text|a whole number), but the expression gave an? (object|list) \\(item 0\\)`));
		expect(result.requests).toBe(0);
	});
});

async function waitFor(condition: () => boolean, timeoutMs = 3000): Promise<void> {
	const until = Date.now() + timeoutMs;
	while (!condition()) {
		if (Date.now() > until) throw new Error('condition not met in time');
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}
