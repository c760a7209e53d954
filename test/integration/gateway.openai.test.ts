// The loopback gateway's OpenAI-format endpoints, driven with the official `openai` client to
// prove that the wire format is the real one.
import OpenAI from 'openai';
import { PNG } from 'pngjs';
import { TEST_KEY, useGateway } from '../gateway/testing';

const env = useGateway();
let client: OpenAI;
beforeAll(() => {
	client = new OpenAI({ baseURL: `${env.gateway.baseUrl}/v1`, apiKey: TEST_KEY, maxRetries: 0 });
});

const CATALOGUE = [
	'img-image-2',
	'video-2-0-260128',
	'video-2-0-fast-260128',
	'video-2-0-mini-260615',
	'chat-fable-5',
	'chat-opus-4-8',
	'chat-sonnet-5',
	'chat-haiku-4-5',
	'chat-opus-4-7',
	'chat-opus-4-6',
];

describe('GET /v1/models', () => {
	it('lists the whole catalogue plus gateway-only models, with endpoint types', async () => {
		const models: OpenAI.Models.Model[] = [];
		for await (const model of client.models.list()) models.push(model);
		const ids = models.map((m) => m.id);
		expect(ids).toEqual(expect.arrayContaining(CATALOGUE));
		expect(ids.length).toBeGreaterThanOrEqual(CATALOGUE.length + 2);
		expect(ids.filter((id) => !CATALOGUE.includes(id))).toEqual(
			expect.arrayContaining([expect.stringMatching(/^chat-/), expect.stringMatching(/^img-/)]),
		);
		const sonnet = models.find((m) => m.id === 'chat-sonnet-5') as unknown as Record<string, unknown>;
		expect(sonnet).toMatchObject({ object: 'model', owned_by: expect.any(String), created: expect.any(Number) });
		expect(sonnet.supported_endpoint_types).toEqual(expect.arrayContaining(['openai', 'anthropic']));
	});

	it('retrieves one model and answers 404 for an unknown one', async () => {
		await expect(client.models.retrieve('img-image-2')).resolves.toMatchObject({ id: 'img-image-2' });
		await expect(client.models.retrieve('nope')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
	});
});

/** Streams a one-message chat and returns the content received and the error that ended it. */
async function streamContent(prompt: string): Promise<{ received: string; error?: unknown }> {
	const stream = await client.chat.completions.create({ model: 'chat-sonnet-5', messages: [{ role: 'user', content: prompt }], stream: true });
	let received = '';
	try {
		for await (const chunk of stream) received += chunk.choices[0]?.delta?.content ?? '';
	} catch (error) {
		return { received, error };
	}
	return { received };
}

describe('POST /v1/chat/completions', () => {
	it('answers deterministically, with the system message visible and usage', async () => {
		const completion = await client.chat.completions.create({
			model: 'chat-sonnet-5',
			messages: [
				{ role: 'system', content: 'Be terse' },
				{ role: 'user', content: 'first question' },
				{ role: 'assistant', content: 'an answer' },
				{ role: 'user', content: 'hello gateway' },
			],
			max_tokens: 100,
		});
		expect(completion).toMatchObject({ object: 'chat.completion', model: 'chat-sonnet-5' });
		expect(completion.id).toMatch(/^chatcmpl-/);
		expect(completion.choices).toHaveLength(1);
		expect(completion.choices[0].finish_reason).toBe('stop');
		expect(completion.choices[0].message).toEqual({ role: 'assistant', content: '[Be terse] Echo from chat-sonnet-5: hello gateway' });
		const { prompt_tokens, completion_tokens, total_tokens } = completion.usage!;
		expect(completion_tokens).toBe(7); // whitespace-separated words
		expect(total_tokens).toBe(prompt_tokens + completion_tokens);
	});

	it('sends reasoning_content for chat-fable-5 and echoes reasoning_effort', async () => {
		const fable = await client.chat.completions.create({ model: 'chat-fable-5', messages: [{ role: 'user', content: 'hi' }] });
		expect((fable.choices[0].message as unknown as Record<string, string>).reasoning_content).toBe('Reasoning with adaptive effort about: hi');

		const opus = await client.chat.completions.create({
			model: 'chat-opus-4-8',
			reasoning_effort: 'xhigh',
			messages: [{ role: 'user', content: 'hi' }],
		});
		expect((opus.choices[0].message as unknown as Record<string, string>).reasoning_content).toContain('xhigh');
		const plain = await client.chat.completions.create({ model: 'chat-opus-4-8', messages: [{ role: 'user', content: 'hi' }] });
		expect(plain.choices[0].message).not.toHaveProperty('reasoning_content');
	});

	it('accepts content parts, honours stop, and cuts at max_tokens with finish_reason length', async () => {
		const parts = await client.chat.completions.create({
			model: 'chat-haiku-4-5',
			messages: [{ role: 'user', content: [{ type: 'text', text: 'one two three' }] }],
			stop: ['two'],
		});
		expect(parts.choices[0].message.content).toBe('Echo from chat-haiku-4-5: one ');

		const short = await client.chat.completions.create({
			model: 'chat-haiku-4-5',
			messages: [{ role: 'user', content: 'one two three' }],
			max_tokens: 3,
		});
		expect(short.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: 'Echo from chat-haiku-4-5:' } });
		expect(short.usage!.completion_tokens).toBe(3);
	});

	it('streams real chunks: role first, reasoning, split content, finish, usage chunk, [DONE]', async () => {
		const stream = await client.chat.completions.create({
			model: 'chat-fable-5',
			messages: [{ role: 'user', content: 'stream me a reply please' }],
			stream: true,
			stream_options: { include_usage: true },
		});
		const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
		for await (const chunk of stream) chunks.push(chunk);
		expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0].id)).toBe(true);
		expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
		const deltas = chunks.flatMap((c) => c.choices.map((choice) => choice.delta as Record<string, string>));
		const content = deltas.map((d) => d.content ?? '').join('');
		const reasoning = deltas.map((d) => d.reasoning_content ?? '').join('');
		expect(content).toBe('Echo from chat-fable-5: stream me a reply please');
		expect(reasoning).toBe('Reasoning with adaptive effort about: stream me a reply please');
		expect(deltas.filter((d) => d.content).length).toBeGreaterThan(3);
		const finish = chunks.filter((c) => c.choices[0]?.finish_reason);
		expect(finish.map((c) => c.choices[0].finish_reason)).toEqual(['stop']);
		const last = chunks[chunks.length - 1];
		expect(last.choices).toEqual([]);
		expect(last.usage).toMatchObject({ completion_tokens: 18, completion_tokens_details: { reasoning_tokens: 10 } });
	});

	it('writes the stream as separate SSE events ending in [DONE]', async () => {
		const response = await env.api.post('/v1/chat/completions', {
			model: 'chat-sonnet-5',
			messages: [{ role: 'user', content: 'a b c' }],
			stream: true,
		});
		expect(response.headers.get('content-type')).toBe('text/event-stream');
		const text = await response.text();
		const events = text.split('\n\n').filter(Boolean);
		expect(events.every((e) => e.startsWith('data: '))).toBe(true);
		expect(events[events.length - 1]).toBe('data: [DONE]');
	});

	it('rejects max_tokens above the output limit, bad messages and non-chat models with 400', async () => {
		const tooLong = client.chat.completions.create({ model: 'chat-haiku-4-5', max_tokens: 64001, messages: [{ role: 'user', content: 'x' }] });
		await expect(tooLong).rejects.toMatchObject({ status: 400, param: 'max_tokens', type: 'invalid_request_error' });
		await expect(
			client.chat.completions.create({ model: 'chat-sonnet-5', max_tokens: 128000, messages: [{ role: 'user', content: 'x' }] }),
		).resolves.toBeDefined();
		await expect(client.chat.completions.create({ model: 'chat-sonnet-5', messages: [] })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
		await expect(
			client.chat.completions.create({ model: 'img-image-2', messages: [{ role: 'user', content: 'x' }] }),
		).rejects.toMatchObject({ status: 400, param: 'model' });
	});

	it('answers 503 model_not_found for an unknown model, as new-api does', async () => {
		const error = await client.chat.completions
			.create({ model: 'chat-nonexistent', messages: [{ role: 'user', content: 'x' }] })
			.catch((e) => e);
		expect(error).toBeInstanceOf(OpenAI.InternalServerError);
		expect(error).toMatchObject({ status: 503, code: 'model_not_found', type: 'new_api_error' });
		expect(error.message).toContain('No available channel for model chat-nonexistent under group default (distributor)');
	});

	it('maps key problems to 401 and 403 with new-api bodies', async () => {
		const bad = new OpenAI({ baseURL: `${env.gateway.baseUrl}/v1`, apiKey: 'sk-invalid-123', maxRetries: 0 });
		const error = await bad.models.list().catch((e) => e);
		expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
		expect(error).toMatchObject({ code: 'invalid_api_key', type: 'new_api_error' });
		expect(error.error.message).toMatch(/^Invalid token \(request id: \w+\)$/);

		const poor = new OpenAI({ baseURL: `${env.gateway.baseUrl}/v1`, apiKey: 'sk-noquota-1', maxRetries: 0 });
		await expect(poor.chat.completions.create({ model: 'chat-sonnet-5', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
			status: 403,
			code: 'insufficient_user_quota',
		});
	});

	it('[stream-error] makes the client raise the error chunk mid-stream', async () => {
		const { received, error } = await streamContent('please [stream-error] now');
		expect(String(error)).toMatch(/upstream stream error/);
		expect(received.length).toBeGreaterThan(0);
		expect(received).not.toBe('Echo from chat-sonnet-5: please [stream-error] now');
	});

	it('[break-stream] drops the connection after some content', async () => {
		const { received, error } = await streamContent('please [break-stream] now and later');
		expect(String(error)).toMatch(/terminated|closed|reset/i); // fetch's error from another realm: match text
		expect(received).toMatch(/^Echo /);
		expect(received).not.toContain('later');
	});

	it('[429-once] fails the first identical request with a bare 429 and lets the retry through', async () => {
		const retrying = new OpenAI({ baseURL: `${env.gateway.baseUrl}/v1`, apiKey: TEST_KEY, maxRetries: 1 });
		const body = { model: 'chat-sonnet-5', messages: [{ role: 'user' as const, content: 'limit me [429-once]' }] };
		const completion = await retrying.chat.completions.create(body);
		expect(completion.choices[0].message.content).toContain('limit me');
		const calls = env.gateway.requests.filter((r) => r.path === '/v1/chat/completions');
		expect(calls).toHaveLength(2);
		expect(calls[0].rawBody).toBe(calls[1].rawBody);
		// A different prompt gets its own first 429.
		await expect(client.chat.completions.create({ ...body, messages: [{ role: 'user', content: 'other [429-once]' }] })).rejects.toBeInstanceOf(
			OpenAI.RateLimitError,
		);
	});
});

describe('POST /v1/images/generations', () => {
	it('returns links on the file host to real PNGs, one colour per index', async () => {
		const result = await client.images.generate({ model: 'img-image-2', prompt: 'a red fox', n: 3, response_format: 'url' });
		expect(result.data).toHaveLength(3);
		const colours: string[] = [];
		for (const image of result.data!) {
			expect(image.url!.startsWith(`${env.gateway.fileBaseUrl}/files/images/`)).toBe(true);
			expect(image.url).toMatch(/\.png$/);
			expect(image.revised_prompt).toContain('a red fox');
			const download = await fetch(image.url!);
			expect(download.headers.get('content-type')).toBe('image/png');
			const png = PNG.sync.read(Buffer.from(await download.arrayBuffer()));
			expect([png.width, png.height]).toEqual([64, 64]);
			colours.push(Array.from(png.data.subarray(0, 4)).join(','));
		}
		expect(new Set(colours).size).toBe(3);
		expect(result.usage).toMatchObject({ output_tokens: expect.any(Number), input_tokens: 3 });
		// The downloads went to the other origin without the key.
		const downloads = env.gateway.requests.filter((r) => r.server === 'files');
		expect(downloads).toHaveLength(3);
		expect(downloads.every((r) => r.headers.authorization === undefined)).toBe(true);
		expect(env.gateway.requests.find((r) => r.server === 'api')!.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
	});

	it('returns b64_json of real images, PNG by default and JPEG/WebP on request', async () => {
		const png = await client.images.generate({ model: 'img-image-2', prompt: 'x', response_format: 'b64_json' });
		expect(PNG.sync.read(Buffer.from(png.data![0].b64_json!, 'base64')).width).toBe(64);

		const body = { model: 'img-image-2', prompt: 'x', response_format: 'b64_json', output_format: 'jpeg' } as const;
		const jpeg = await client.images.generate(body);
		expect(Buffer.from(jpeg.data![0].b64_json!, 'base64').subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));

		const webp = await client.images.generate({ ...body, response_format: 'url', output_format: 'webp' });
		expect(webp.data![0].url).toMatch(/\.webp$/);
		const download = await fetch(webp.data![0].url!);
		expect(download.headers.get('content-type')).toBe('image/webp');
		const bytes = Buffer.from(await download.arrayBuffer());
		expect([bytes.toString('ascii', 0, 4), bytes.toString('ascii', 8, 12)]).toEqual(['RIFF', 'WEBP']);
	});

	it('defaults to one url image and accepts the gateway-only image model', async () => {
		const result = await client.images.generate({ model: 'img-image-2-mini', prompt: 'x' });
		expect(result.data).toHaveLength(1);
		expect(result.data![0].url).toBeDefined();
	});

	it.each([
		[{ n: 11 }, 'n'],
		[{ n: 0 }, 'n'],
		[{ n: 1.5 }, 'n'],
		[{ prompt: '' }, 'prompt'],
		[{ response_format: 'gif' }, 'response_format'],
		[{ output_format: 'bmp' }, 'output_format'],
		[{ model: 'chat-sonnet-5' }, 'model'],
	])('rejects %j with 400 naming %s', async (change, param) => {
		const error = await client.images.generate({ model: 'img-image-2', prompt: 'x', ...change } as never).catch((e) => e);
		expect(error).toBeInstanceOf(OpenAI.BadRequestError);
		expect(error).toMatchObject({ param, type: 'invalid_request_error' });
	});

	it('[expired] links answer 403 like an expired signed URL', async () => {
		const result = await client.images.generate({ model: 'img-image-2', prompt: 'old [expired]' });
		const download = await fetch(result.data![0].url!);
		expect(download.status).toBe(403);
		expect(await download.text()).toContain('<Code>AccessDenied</Code>');
	});
});
