/**
 * What relays really do, against the loopback gateway over real HTTP: streams sent as
 * `text/plain` or without any content type, `data: [DONE] ` with a trailing space, the native
 * format's `anthropic-version` header (and a custom header that overrides it), and `x-api-key`
 * authentication set through Custom Headers (the gateway's `acceptXApiKey` option).
 */
import type { IDataObject } from 'n8n-workflow';

import { complete } from '../../nodes/GatewayChat/complete';
import { createMessage } from '../../nodes/GatewayMessages/create';
import { useGateway } from '../gateway/testing';
import { createExecuteContext } from '../helpers/executeContext';

const KEY = 'sk-integration-relay-0123456789';
const env = useGateway();

const say = (content: string) => ({ values: [{ role: 'user', content }] });

interface RunOptions {
	customHeaders?: Record<string, string>;
	apiKey?: string;
}

async function chat(parameters: IDataObject, options: RunOptions = {}) {
	const context = createExecuteContext({
		parameters: { model: { __rl: true, mode: 'list', value: 'chat-sonnet-5' }, messages: say('Hello'), maxTokens: 4096, stream: false, options: {}, ...parameters },
		credentials: { apiKey: options.apiKey ?? KEY, baseUrl: env.gateway.baseUrl, customHeaders: options.customHeaders && JSON.stringify(options.customHeaders) },
		nodeType: 'n8n-nodes-model-gateway.gatewayChat',
	});
	const [output] = await complete.call(context.ctx);
	return output[0].json;
}

async function messages(parameters: IDataObject, options: RunOptions = {}) {
	const context = createExecuteContext({
		parameters: { model: { __rl: true, mode: 'list', value: 'chat-sonnet-5' }, messages: say('Hello'), maxTokens: 4096, stream: false, options: {}, ...parameters },
		credentials: { apiKey: options.apiKey ?? KEY, baseUrl: env.gateway.baseUrl, customHeaders: options.customHeaders && JSON.stringify(options.customHeaders) },
		nodeType: 'n8n-nodes-model-gateway.gatewayMessages',
	});
	const [output] = await createMessage.call(context.ctx);
	return output[0].json;
}

const sent = (path: string) => env.gateway.requests.filter((request) => request.path === path);

/** The content type the gateway really answers a streamed request with (checked, so the node tests mean something). */
async function streamedContentType(path: string, body: IDataObject): Promise<string | null> {
	const response = await env.api.post(path, { model: 'chat-sonnet-5', max_tokens: 64, stream: true, ...body });
	await response.text();
	return response.headers.get('content-type');
}

describe('the loopback gateway sends streams as sloppy relays do', () => {
	it.each([
		['/v1/chat/completions', { messages: [{ role: 'user', content: 'Hi [stream-type:text/plain]' }] }, 'text/plain'],
		['/v1/chat/completions', { messages: [{ role: 'user', content: 'Hi [stream-type:none]' }] }, null],
		['/v1/messages', { messages: [{ role: 'user', content: 'Hi [stream-type:text/plain]' }] }, 'text/plain'],
		['/v1/messages', { messages: [{ role: 'user', content: 'Hi [stream-type:none]' }] }, null],
		['/v1/messages', { messages: [{ role: 'user', content: 'Hi' }] }, 'text/event-stream'],
	])('%s %j answers with content type %s', async (path, body, type) => {
		expect(await streamedContentType(path, body)).toBe(type);
	});

	it('ends a chat stream with `data: [DONE] ` (a trailing space) for [done-space]', async () => {
		const response = await env.api.post('/v1/chat/completions', { model: 'chat-sonnet-5', stream: true, messages: [{ role: 'user', content: 'Hi [done-space]' }] });
		expect(await response.text()).toMatch(/data: \[DONE\] \n\n$/);
	});
});

describe('Gateway Chat reads a stream by its body, whatever its content type', () => {
	it.each(['[stream-type:text/plain]', '[stream-type:none]', '[done-space]', '[stream-type:text/plain] [done-space]'])(
		'%s: the same answer as without Stream',
		async (word) => {
			const parameters = { messages: say(`Tell me about foxes ${word}`) };
			const plain = await chat({ ...parameters, stream: false });
			const streamed = await chat({ ...parameters, stream: true });
			expect(plain.text).toBe(`Echo from chat-sonnet-5: Tell me about foxes ${word}`);
			expect(streamed).toEqual(plain);
			expect(JSON.parse(sent('/v1/chat/completions')[1].rawBody)).toMatchObject({ stream: true });
		},
	);
});

describe('Gateway Messages reads a stream by its body, whatever its content type', () => {
	it.each(['[stream-type:text/plain]', '[stream-type:none]'])('%s: the same answer as without Stream', async (word) => {
		const parameters = { messages: say(`Plan a trip ${word}`), model: { __rl: true, mode: 'list', value: 'chat-fable-5' } };
		const plain = await messages({ ...parameters, stream: false });
		const streamed = await messages({ ...parameters, stream: true });
		expect(plain.text).toBe(`Echo from chat-fable-5: Plan a trip ${word}`);
		expect(plain.thinking).toBe(`Thinking about: Plan a trip ${word}`);
		expect(streamed).toEqual(plain);
	});
});

describe('Gateway Messages and the native format\'s headers', () => {
	it('sends anthropic-version: 2023-06-01 with the bearer key, streamed or not', async () => {
		await messages({ stream: false });
		await messages({ stream: true });
		for (const request of sent('/v1/messages')) {
			expect(request.headers).toMatchObject({ authorization: `Bearer ${KEY}`, 'anthropic-version': '2023-06-01' });
		}
	});

	it('lets a custom header override anthropic-version, whatever its letter case, sending it once', async () => {
		await messages({}, { customHeaders: { 'Anthropic-Version': '2024-10-22' } });
		const [request] = sent('/v1/messages');
		expect(request.headers['anthropic-version']).toBe('2024-10-22');
		// Node's HTTP server joins repeated headers with ", ": one value means it was sent once.
		expect(String(request.headers['anthropic-version'])).not.toContain(',');
	});

	it('does not send anthropic-version to the chat-completions endpoint', async () => {
		await chat({});
		expect(sent('/v1/chat/completions')[0].headers['anthropic-version']).toBeUndefined();
	});
});

describe('x-api-key: the gateway option, and the nodes sending it through Custom Headers', () => {
	it('the gateway refuses x-api-key alone by default, and accepts it on /v1/messages with acceptXApiKey', async () => {
		const body = { model: 'chat-sonnet-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] };
		const onlyXApiKey = (path: string, key = KEY) =>
			fetch(`${env.gateway.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) });
		expect((await onlyXApiKey('/v1/messages')).status).toBe(401);
		env.gateway.setOptions({ acceptXApiKey: true });
		expect((await onlyXApiKey('/v1/messages')).status).toBe(200);
		expect((await onlyXApiKey('/v1/messages', 'sk-invalid-0123456789')).status).toBe(401);
		expect((await onlyXApiKey('/v1/messages', 'sk-noquota-0123456789')).status).toBe(403);
		// Only the native endpoint takes it, as relays do.
		expect((await onlyXApiKey('/v1/chat/completions')).status).toBe(401);
	});

	it('Gateway Messages sends x-api-key from Custom Headers beside the bearer key', async () => {
		env.gateway.setOptions({ acceptXApiKey: true });
		const output = await messages({}, { customHeaders: { 'x-api-key': KEY } });
		expect(output.text).toBe('Echo from chat-sonnet-5: Hello');
		expect(sent('/v1/messages')[0].headers).toMatchObject({ 'x-api-key': KEY, authorization: `Bearer ${KEY}`, 'anthropic-version': '2023-06-01' });
	});
});
