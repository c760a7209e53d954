/**
 * The loopback gateway's side of files in, JSON out, spoken to directly over HTTP: it decodes
 * every attachment, checks it against its declared type as the real services do, names what it
 * received (type, size, SHA-256 of the bytes) in its answer, answers JSON when asked (chat
 * `response_format`, a native tool forced or asked for), refuses a forced tool with thinking, and
 * checks the image options and the video's first frame.
 */
import { useGateway } from '../gateway/testing';
import { pdfBytes, pngBytes, sampleJpeg, sha256 } from '../helpers/files';

const env = useGateway();
const png = pngBytes(4, 4);
const pdf = pdfBytes();
const b64 = (bytes: Buffer) => bytes.toString('base64');

async function post(path: string, body: object) {
	const response = await env.api.post(path, body);
	const text = await response.text();
	return { status: response.status, text, json: () => JSON.parse(text) };
}

const chatBody = (content: unknown, extra: object = {}) => ({ model: 'chat-sonnet-5', messages: [{ role: 'user', content }], ...extra });
const nativeBody = (content: unknown, extra: object = {}) => ({ model: 'chat-sonnet-5', max_tokens: 1000, messages: [{ role: 'user', content }], ...extra });

describe('chat-completions attachments', () => {
	it('names each file by type, size and hash, and each link', async () => {
		const answer = await post('/v1/chat/completions', chatBody([
			{ type: 'image_url', image_url: { url: `data:image/png;base64,${b64(png)}` } },
			{ type: 'file', file: { filename: 'a.pdf', file_data: `data:application/pdf;base64,${b64(pdf)}` } },
			{ type: 'image_url', image_url: { url: 'https://example.com/x.png' } },
			{ type: 'text', text: 'What is this?' },
		]));
		expect(answer.status).toBe(200);
		expect(answer.json().choices[0].message.content).toBe(
			`Echo from chat-sonnet-5: What is this? [attached: image/png ${png.length} B sha256 ${sha256(png).slice(0, 12)}, application/pdf ${pdf.length} B sha256 ${sha256(pdf).slice(0, 12)}, link https://example.com/x.png]`,
		);
	});

	it.each([
		['a declared type that does not match the bytes', { type: 'image_url', image_url: { url: `data:image/png;base64,${b64(sampleJpeg())}` } }, 'Image does not match the provided media type image/png (the data is image/jpeg)'],
		['Base64 that does not decode', { type: 'image_url', image_url: { url: 'data:image/png;base64,@@@=' } }, 'the data is not valid base64'],
		['a PDF that is none', { type: 'file', file: { filename: 'a.pdf', file_data: `data:application/pdf;base64,${b64(png)}` } }, 'the data is not a PDF'],
		['a file without a name', { type: 'file', file: { file_data: `data:application/pdf;base64,${b64(pdf)}` } }, 'file.filename is required'],
		['an unknown part', { type: 'audio', audio: {} }, 'type must be one of text, image_url, file'],
	])('refuses %s with a 400', async (_what, part, message) => {
		const answer = await post('/v1/chat/completions', chatBody([part, { type: 'text', text: 'x' }]));
		expect(answer.status).toBe(400);
		expect(answer.json().error.message).toContain(message);
	});
});

describe('chat-completions JSON', () => {
	it('answers a JSON object with the echo and the attachments for json_object', async () => {
		const answer = await post('/v1/chat/completions', chatBody([{ type: 'image_url', image_url: { url: `data:image/png;base64,${b64(png)}` } }, { type: 'text', text: 'Hi' }], { response_format: { type: 'json_object' } }));
		expect(JSON.parse(answer.json().choices[0].message.content)).toEqual({
			echo: 'Echo from chat-sonnet-5: Hi',
			model: 'chat-sonnet-5',
			attachments: [{ kind: 'image', mimeType: 'image/png', bytes: png.length, sha256: sha256(png) }],
		});
	});

	it('follows a json_schema, filling attachment fields from what arrived', async () => {
		const schema = {
			type: 'object',
			properties: {
				status: { enum: ['paid', 'open'] },
				date: { type: 'string', format: 'date' },
				count: { type: 'integer' },
				attachments: { type: 'array', items: { type: 'object', properties: { mimeType: { type: 'string' }, sha256: { type: 'string' } } } },
			},
		};
		const answer = await post('/v1/chat/completions', chatBody([{ type: 'file', file: { filename: 'a.pdf', file_data: `data:application/pdf;base64,${b64(pdf)}` } }, { type: 'text', text: 'Hi' }], { response_format: { type: 'json_schema', json_schema: { name: 'invoice', schema, strict: true } } }));
		expect(JSON.parse(answer.json().choices[0].message.content)).toEqual({ status: 'paid', date: '2026-01-31', count: 1, attachments: [{ mimeType: 'application/pdf', sha256: sha256(pdf) }] });
	});

	it('refuses a json_schema without a name or a schema', async () => {
		const noName = await post('/v1/chat/completions', chatBody('x', { response_format: { type: 'json_schema', json_schema: { schema: {} } } }));
		expect(noName.status).toBe(400);
		const noSchema = await post('/v1/chat/completions', chatBody('x', { response_format: { type: 'json_schema', json_schema: { name: 'a', schema: [] } } }));
		expect(noSchema.json().error.param).toBe('response_format.json_schema.schema');
	});

	it('answers in words with [not-json]', async () => {
		const answer = await post('/v1/chat/completions', chatBody('x [not-json]', { response_format: { type: 'json_object' } }));
		expect(answer.json().choices[0].message.content).toBe('Sure! Here is what I found: the product looks great.');
	});
});

describe('native attachments and tools', () => {
	it('names image and document blocks, and refuses a media type that does not match', async () => {
		const ok = await post('/v1/messages', nativeBody([
			{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64(png) } },
			{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: b64(pdf) } },
			{ type: 'image', source: { type: 'url', url: 'https://example.com/x.png' } },
			{ type: 'text', text: 'Hi' },
		]));
		expect(ok.json().content[0].text).toContain(`image/png ${png.length} B sha256 ${sha256(png).slice(0, 12)}, application/pdf ${pdf.length} B`);
		const wrong = await post('/v1/messages', nativeBody([{ type: 'image', source: { type: 'base64', media_type: 'image/gif', data: b64(png) } }]));
		expect(wrong.status).toBe(400);
		expect(wrong.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('does not match the provided media type image/gif') } });
	});

	it('refuses an image above 5 MB of Base64, as the real service words it', async () => {
		const big = b64(Buffer.concat([png, Buffer.alloc(4 * 1024 * 1024)]));
		const answer = await post('/v1/messages', nativeBody([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: big } }]));
		expect(answer.json().error.message).toBe(`messages.0.content.0.source.base64: image exceeds 5 MB maximum: ${big.length} bytes > 5242880 bytes`);
	});

	const respond = { name: 'respond', input_schema: { type: 'object', properties: { title: { type: 'string' }, bytes: { type: 'integer' } } } };

	it('calls a forced tool with an input that follows its schema, streamed in input_json_delta pieces too', async () => {
		const body = nativeBody([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64(png) } }, { type: 'text', text: 'Name it' }], { tools: [respond], tool_choice: { type: 'tool', name: 'respond' } });
		const whole = (await post('/v1/messages', body)).json();
		expect(whole.stop_reason).toBe('tool_use');
		expect(whole.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'respond', input: { title: 'title: Name it', bytes: png.length } }]);
		const stream = (await post('/v1/messages', { ...body, stream: true })).text;
		expect(stream).toContain('"content_block":{"type":"tool_use"');
		const pieces = [...stream.matchAll(/"partial_json":"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`) as string);
		expect(pieces.length).toBeGreaterThan(1);
		expect(JSON.parse(pieces.join(''))).toEqual(whole.content[0].input);
	});

	it('refuses a forced tool with thinking, and with auto calls the tool the system prompt asks for', async () => {
		const forced = await post('/v1/messages', nativeBody('x', { tools: [respond], tool_choice: { type: 'tool', name: 'respond' }, thinking: { type: 'adaptive' } }));
		expect(forced.status).toBe(400);
		expect(forced.json().error.message).toBe('Thinking may not be enabled when tool_choice forces tool use.');
		const auto = await post('/v1/messages', nativeBody('x', { tools: [respond], tool_choice: { type: 'auto' }, thinking: { type: 'adaptive' }, system: 'Answer by calling the respond tool.' }));
		expect(auto.json().content.map((block: { type: string }) => block.type)).toEqual(['thinking', 'tool_use']);
		const none = await post('/v1/messages', nativeBody('x', { tools: [respond] }));
		expect(none.json().content.map((block: { type: string }) => block.type)).toEqual(['text']);
	});

	it('refuses tools that are not object schemas, and a named tool that is not offered', async () => {
		expect((await post('/v1/messages', nativeBody('x', { tools: [{ name: 'a', input_schema: { type: 'array' } }] }))).json().error.message).toBe("tools.0.custom.input_schema.type: Input should be 'object'");
		expect((await post('/v1/messages', nativeBody('x', { tools: [respond], tool_choice: { type: 'tool', name: 'other' } }))).status).toBe(400);
	});
});

describe('image options and the video first frame', () => {
	it('echoes size, quality and background, and refuses a transparent JPEG', async () => {
		const answer = await post('/v1/images/generations', { model: 'img-image-2', prompt: 'x', size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'webp' });
		expect(answer.json()).toMatchObject({ size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'webp' });
		const bad = await post('/v1/images/generations', { model: 'img-image-2', prompt: 'x', background: 'transparent', output_format: 'jpeg' });
		expect(bad.status).toBe(400);
		expect((await post('/v1/images/generations', { model: 'img-image-2', prompt: 'x', quality: 'ultra' })).json().error.param).toBe('quality');
	});

	it('takes a first frame as a link or a matching data URL, and refuses anything else', async () => {
		const submit = (image: unknown) => post('/v1/video/generations', { model: 'video-2-0-fast-260128', prompt: 'x', image });
		expect((await submit('https://example.com/f.png')).status).toBe(200);
		expect((await submit(`data:image/png;base64,${b64(png)}`)).status).toBe(200);
		expect((await submit(`data:image/png;base64,${b64(sampleJpeg())}`)).json().error.message).toContain('does not match the provided media type image/png');
		expect((await submit('file:///etc/passwd')).json().error.param).toBe('image');
	});
});
