// The loopback gateway's native messages endpoint, driven with the official messages client.
import Anthropic from '@anthropic-ai/sdk';
import { TEST_KEY, gatewayClient, useGateway } from '../gateway/testing';

const env = useGateway();
let client: Anthropic;

// Native clients get the base address without a path and the key as a bearer token.
const makeClient = (authToken: string) => new Anthropic({ baseURL: env.gateway.baseUrl, authToken, maxRetries: 0 });
beforeAll(() => {
	client = makeClient(TEST_KEY);
});

const user = (content: string) => [{ role: 'user' as const, content }];

describe('POST /v1/messages, non-streamed', () => {
	it('answers a plain message with one text block and usage, over the bearer key', async () => {
		const message = await client.messages.create({ model: 'chat-sonnet-5', max_tokens: 1024, messages: user('hello there') });
		expect(message).toMatchObject({
			type: 'message',
			role: 'assistant',
			model: 'chat-sonnet-5',
			stop_reason: 'end_turn',
			stop_sequence: null,
			content: [{ type: 'text', text: 'Echo from chat-sonnet-5: hello there' }],
			usage: { input_tokens: 2, output_tokens: 5 },
		});
		expect(message.id).toMatch(/^msg_/);
		const [request] = env.gateway.requests;
		expect(request.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
		expect(request.headers['x-api-key']).toBeUndefined();
		expect(request.headers['anthropic-version']).toBeDefined();
	});

	it('shows system (string or blocks), effort and enabled thinking with a signature', async () => {
		const message = await client.messages.create({
			model: 'chat-opus-4-8',
			max_tokens: 4096,
			system: [{ type: 'text', text: 'You are terse' }],
			thinking: { type: 'enabled', budget_tokens: 2048 },
			output_config: { effort: 'xhigh' },
			messages: user('plan it'),
		});
		expect(message.content).toEqual([
			{ type: 'thinking', thinking: 'Thinking within 2048 tokens about: plan it', signature: expect.any(String) },
			{ type: 'text', text: '[You are terse] Echo from chat-opus-4-8 (effort: xhigh): plan it' },
		]);
		const plain = await client.messages.create({ model: 'chat-opus-4-8', max_tokens: 50, system: 'Be kind', messages: user('x') });
		expect(plain.content).toEqual([{ type: 'text', text: '[Be kind] Echo from chat-opus-4-8: x' }]);
	});

	it('thinks in adaptive mode and always on chat-fable-5', async () => {
		const adaptive = await client.messages.create({ model: 'chat-sonnet-5', max_tokens: 500, thinking: { type: 'adaptive' }, messages: user('q') });
		expect(adaptive.content.map((b) => b.type)).toEqual(['thinking', 'text']);
		const fable = await client.messages.create({ model: 'chat-fable-5', max_tokens: 500, messages: user('q') });
		expect(fable.content.map((b) => b.type)).toEqual(['thinking', 'text']);
	});

	it('reports stop_sequence and max_tokens stops', async () => {
		const stopped = await client.messages.create({ model: 'chat-haiku-4-5', max_tokens: 100, stop_sequences: ['from'], messages: user('x') });
		expect(stopped).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'from', content: [{ text: 'Echo ' }] });
		const cut = await client.messages.create({ model: 'chat-haiku-4-5', max_tokens: 2, messages: user('a b c') });
		expect(cut).toMatchObject({ stop_reason: 'max_tokens', content: [{ text: 'Echo from' }], usage: { output_tokens: 2 } });
	});

	it.each([
		[{ max_tokens: undefined }, /max_tokens: Field required/],
		[{ max_tokens: 64001 }, /64001 > 64000/],
		[{ thinking: { type: 'enabled', budget_tokens: 512 } }, /greater than or equal to 1024/],
		[{ thinking: { type: 'enabled', budget_tokens: 4096 } }, /must be greater than `thinking.budget_tokens`/],
		[{ output_config: { effort: 'extreme' } }, /output_config.effort/],
		[{ messages: [{ role: 'system', content: 'x' }] }, /top-level `system` parameter/],
		[{ thinking: { type: 'adaptive' }, temperature: 0.2 }, /temperature/],
	])('rejects %j with a native invalid_request_error', async (change, message) => {
		const body = { model: 'chat-haiku-4-5', max_tokens: 4096, messages: user('x'), ...change };
		// An explicit timeout: the client refuses a large non-streamed max_tokens without one.
		const error = await client.messages.create(body as never, { timeout: 30_000 }).catch((e) => e);
		expect(error).toBeInstanceOf(Anthropic.BadRequestError);
		expect(error.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(message) } });
	});

	it('wraps auth, quota and unknown-model errors natively', async () => {
		const bad = await makeClient('sk-invalid-1').messages.create({ model: 'chat-sonnet-5', max_tokens: 10, messages: user('x') }).catch((e) => e);
		expect(bad).toBeInstanceOf(Anthropic.AuthenticationError);
		expect(bad.error).toMatchObject({ type: 'error', error: { type: 'authentication_error', message: expect.stringMatching(/^Invalid token/) } });

		const poor = await makeClient('sk-noquota-1').messages.create({ model: 'chat-sonnet-5', max_tokens: 10, messages: user('x') }).catch((e) => e);
		expect(poor).toBeInstanceOf(Anthropic.PermissionDeniedError);

		const unknown = await client.messages.create({ model: 'chat-unknown-9', max_tokens: 10, messages: user('x') }).catch((e) => e);
		expect(unknown.status).toBe(503);
		expect(unknown.error).toMatchObject({
			type: 'error',
			error: { message: 'No available channel for model chat-unknown-9 under group default (distributor)' },
		});
	});

	it('refuses x-api-key alone: only the bearer token counts', async () => {
		const response = await gatewayClient(env.gateway.baseUrl, null).post(
			'/v1/messages',
			{ model: 'chat-sonnet-5', max_tokens: 10, messages: user('x') },
			{ headers: { 'x-api-key': TEST_KEY } },
		);
		expect(response.status).toBe(401);
		expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
	});
});

describe('POST /v1/messages, streamed', () => {
	it('sends the real event sequence', async () => {
		const stream = await client.messages.create({
			model: 'chat-opus-4-8',
			max_tokens: 4096,
			thinking: { type: 'enabled', budget_tokens: 1024 },
			messages: user('tell me more'),
			stream: true,
		});
		const events: Anthropic.Messages.RawMessageStreamEvent[] = [];
		for await (const event of stream) events.push(event);
		const kinds = events.map((e) => (e.type === 'content_block_delta' ? e.delta.type : e.type));
		const squeezed = kinds.filter((kind, i) => kind !== kinds[i - 1]);
		expect(squeezed).toEqual([
			'message_start',
			'content_block_start',
			'thinking_delta',
			'signature_delta',
			'content_block_stop',
			'content_block_start',
			'text_delta',
			'content_block_stop',
			'message_delta',
			'message_stop',
		]);
		expect(kinds.filter((k) => k === 'text_delta').length).toBeGreaterThan(3);
		const delta = events.find((e) => e.type === 'message_delta') as Anthropic.Messages.RawMessageDeltaEvent;
		expect(delta.delta.stop_reason).toBe('end_turn');
	});

	it('sends a ping event the client skips', async () => {
		const response = await env.api.post('/v1/messages', {
			model: 'chat-sonnet-5',
			max_tokens: 100,
			messages: user('x'),
			stream: true,
		});
		expect(response.headers.get('content-type')).toBe('text/event-stream');
		expect(await response.text()).toContain('event: ping\ndata: {"type":"ping"}\n\n');
	});

	it('aggregates with messages.stream(): same content and usage as non-streamed', async () => {
		const body = { model: 'chat-fable-5', max_tokens: 2000, system: 'Sys', messages: user('stream this please') };
		const pieces: string[] = [];
		const final = await client.messages.stream(body).on('text', (text) => pieces.push(text)).finalMessage();
		const direct = await client.messages.create(body);
		expect(pieces.length).toBeGreaterThan(3);
		expect(pieces.join('')).toBe('[Sys] Echo from chat-fable-5: stream this please');
		expect(final.content).toEqual(direct.content);
		expect(final.usage).toMatchObject({ input_tokens: direct.usage.input_tokens, output_tokens: direct.usage.output_tokens });
		expect(final.stop_reason).toBe('end_turn');
	});

	it('[stream-error] sends an error event that the client raises', async () => {
		const stream = client.messages.stream({ model: 'chat-sonnet-5', max_tokens: 100, messages: user('go [stream-error] go') });
		const error = await stream.finalMessage().catch((e) => e);
		expect(error).toBeInstanceOf(Anthropic.APIError);
		expect(String(error.message)).toContain('Overloaded');
	});

	it('[break-stream] drops the connection mid-stream', async () => {
		const stream = client.messages.stream({ model: 'chat-sonnet-5', max_tokens: 100, messages: user('go [break-stream] go on') });
		let text = '';
		stream.on('text', (t) => (text += t));
		await expect(stream.finalMessage()).rejects.toThrow();
		expect(text).toMatch(/^Echo/);
		expect(text).not.toContain('go on');
	});

	it('[429-once] answers a bare 429 once per prompt', async () => {
		const body = { model: 'chat-sonnet-5', max_tokens: 100, messages: user('[429-once] messages') };
		const first = await client.messages.create(body).catch((e) => e);
		expect(first).toBeInstanceOf(Anthropic.RateLimitError);
		await expect(client.messages.create(body)).resolves.toMatchObject({ stop_reason: 'end_turn' });
	});
});
