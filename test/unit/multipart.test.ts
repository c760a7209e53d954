/**
 * The multipart/form-data body of an image edit (nodes/shared/wire/multipart.ts): read back by
 * an independent parser (undici's, Node's own `Response.formData()`) and by the loopback gateway's
 * (test/gateway/multipart.js); a file to stream is streamed piecewise with its length known up
 * front; a file read that is not the file checked fails the body with the file's error.
 */
import { Readable } from 'node:stream';

import * as fc from 'fast-check';

import { MultipartForm } from '../../nodes/shared/wire/multipart';
import { StreamedBody } from '../../nodes/shared/wire/streamedBody';
import type { FileStreamSource, NodeReadable } from '../../nodes/shared/wire/streamedBody';
import { MultipartError, parseMultipart } from '../gateway/multipart';
import { pngHeader } from '../helpers/files';

const read = async (body: NodeReadable | Buffer, pieces: Buffer[] = []) => {
	if (Buffer.isBuffer(body)) return body;
	for await (const chunk of body as AsyncIterable<Buffer>) pieces.push(chunk);
	return Buffer.concat(pieces);
};

/** A file in `chunk`-byte pieces, as n8n's binary store streams one; `reads` counts the pieces given. */
function source(bytes: Buffer, chunk: number, recorded = bytes.length): FileStreamSource & { reads: number } {
	const state = {
		reads: 0,
		size: recorded,
		open: async () => {
			async function* pieces() {
				for (let at = 0; at < bytes.length; at += chunk) {
					state.reads++;
					yield bytes.subarray(at, at + chunk);
				}
			}
			return Readable.from(pieces(), { objectMode: false }) as unknown as NodeReadable;
		},
		changed: (problem: string) => new Error(`"Images From Binary Fields" field "data" changed after it was checked: it ${problem} (item 0)`),
		slow: () => new Error('slow'),
	};
	return state;
}

async function formOf(form: MultipartForm) {
	const encoded = form.encode();
	const bytes = encoded instanceof StreamedBody ? await read((await encoded.open()).body) : encoded;
	if (encoded instanceof StreamedBody) expect(encoded.size).toBe(bytes.length);
	return { bytes, parsed: await new Response(bytes, { headers: { 'content-type': form.contentType } }).formData() };
}

describe('MultipartForm', () => {
	const png = pngHeader(16, 16, 3000);
	const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(500, 7)]);

	it('holds text fields and files, each file with its name and type, as an independent parser reads them', async () => {
		const form = new MultipartForm([
			{ name: 'model', value: 'img-image-2' },
			{ name: 'prompt', value: 'Put the cat in a tiny hat.\r\nKeep the background — ünïcode too.' },
			{ name: 'image[]', fileName: 'cat.png', mimeType: 'image/png', source: png },
			{ name: 'image[]', fileName: 'hat.jpg', mimeType: 'image/jpeg', source: jpeg },
		]);
		expect(form.contentType).toBe(`multipart/form-data; boundary=${form.boundary}`);
		const { bytes, parsed } = await formOf(form);
		expect(parsed.get('model')).toBe('img-image-2');
		expect(parsed.get('prompt')).toBe('Put the cat in a tiny hat.\r\nKeep the background — ünïcode too.');
		const files = parsed.getAll('image[]') as File[];
		expect(files.map((file) => [file.name, file.type])).toEqual([
			['cat.png', 'image/png'],
			['hat.jpg', 'image/jpeg'],
		]);
		expect(Buffer.from(await files[0].arrayBuffer()).equals(png)).toBe(true);
		expect(Buffer.from(await files[1].arrayBuffer()).equals(jpeg)).toBe(true);
		// The loopback gateway's parser reads the same.
		const ours = parseMultipart(form.contentType, bytes);
		expect(ours.fields).toEqual({ model: ['img-image-2'], prompt: ['Put the cat in a tiny hat.\r\nKeep the background — ünïcode too.'] });
		expect(ours.files['image[]'].map((file) => file.bytes.equals(file.fileName === 'cat.png' ? png : jpeg))).toEqual([true, true]);
	});

	it('streams a file kept outside the item piece by piece, its length known before any byte is read', async () => {
		const big = pngHeader(64, 64, 1024 * 1024 + 7);
		const file = source(big, 64 * 1024);
		const form = new MultipartForm([
			{ name: 'prompt', value: 'sharpen' },
			{ name: 'image', fileName: 'big.png', mimeType: 'image/png', source: file },
			{ name: 'mask', fileName: 'mask.png', mimeType: 'image/png', source: png },
		]);
		const encoded = form.encode();
		expect(encoded).toBeInstanceOf(StreamedBody);
		const size = (encoded as StreamedBody).size;
		expect(file.reads).toBe(0);
		const opened = await (encoded as StreamedBody).open();
		const pieces: Buffer[] = [];
		const bytes = await read(opened.body, pieces);
		expect(bytes.length).toBe(size);
		// Never one piece of a file's size: the body follows the file's reads.
		expect(file.reads).toBe(17);
		expect(Math.max(...pieces.map((piece) => piece.length))).toBeLessThanOrEqual(64 * 1024);
		const parsed = parseMultipart(form.contentType, bytes);
		expect(parsed.files.image[0]).toMatchObject({ fileName: 'big.png', contentType: 'image/png' });
		expect(parsed.files.image[0].bytes.equals(big)).toBe(true);
		expect(parsed.files.mask[0].bytes.equals(png)).toBe(true);
	});

	it('fails the body with the file\'s own error when the file read is longer than the size checked', async () => {
		const form = new MultipartForm([{ name: 'image', fileName: 'a.png', mimeType: 'image/png', source: source(png, 1000, png.length - 10) }]);
		const opened = await (form.encode() as StreamedBody).open();
		await expect(read(opened.body)).rejects.toThrow(/field "data" changed after it was checked: it holds more than the 2990 bytes n8n recorded for it/);
	});

	it('keeps a name with quotes or line breaks inside its header, as browsers encode it', () => {
		const form = new MultipartForm([{ name: 'image', fileName: 'my "best"\r\nshot.png', mimeType: 'image/png', source: png }]);
		const parsed = parseMultipart(form.contentType, form.encode() as Buffer);
		expect(parsed.files.image[0].fileName).toBe('my %22best%22%0D%0Ashot.png');
		expect(parsed.files.image[0].bytes.equals(png)).toBe(true);
	});

	// Go's mime/multipart (what new-api reads forms with) refuses a whole form whose part header holds
	// a control character, and reads a `\` before a tspecial as an escape: `name="user\"` hid its closing
	// quote and the part was dropped without a word. Checked by hand against Go 1.26's ReadForm.
	it('every name and file name reads back as sent, `"`, `\\` and control characters percent-encoded (both parsers)', async () => {
		const percent = (text: string) => text.replace(/["\\\x00-\x1f\x7f]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
		// The WHATWG form parser (undici's) decodes %22, %0D and %0A back, as browsers encode only those.
		const whatwg = (text: string) => percent(text).replace(/%0A/g, '\n').replace(/%0D/g, '\r').replace(/%22/g, '"');
		const names = ['user\\', 'scan\x01 2026\\.png', 'C:\\photos\\(1)\\cat.png', 'tab\there', 'del\x7f', 'a\\"b', 'nul\x00.png'];
		for (const name of names) {
			const form = new MultipartForm([
				{ name, value: 'v' },
				{ name: 'image', fileName: name, mimeType: 'image/png', source: png },
			]);
			const { bytes, parsed } = await formOf(form);
			const ours = parseMultipart(form.contentType, bytes);
			expect([ours.fields, ours.files.image?.[0]?.fileName]).toEqual([{ [percent(name)]: ['v'] }, percent(name)]);
			expect([parsed.get(whatwg(name)), (parsed.get('image') as File).name]).toEqual(['v', whatwg(name)]);
		}
		// Every one-character name up to U+00FF, so each edge of the unsafe set is checked, not drawn.
		for (let code = 0; code <= 0xff; code += 1) {
			const name = `a${String.fromCharCode(code)}b`;
			const form = new MultipartForm([{ name, value: 'v' }]);
			expect(parseMultipart(form.contentType, form.encode() as Buffer).fields).toEqual({ [percent(name)]: ['v'] });
		}
		fc.assert(
			fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (name) => {
				const form = new MultipartForm([{ name: `f${name}`, value: 'v' }, { name: 'image', fileName: `${name}.png`, mimeType: 'image/png', source: png }]);
				const ours = parseMultipart(form.contentType, form.encode() as Buffer);
				expect(ours.fields).toEqual({ [percent(`f${name}`)]: ['v'] });
				expect(ours.files.image[0].fileName).toBe(percent(`${name}.png`));
			}),
			{ numRuns: 300, seed: 28_281 },
		);
	});

	it('names its largest part, for a gateway that refuses the request as too large', () => {
		const form = new MultipartForm([
			{ name: 'prompt', value: 'x'.repeat(100) },
			{ name: 'image[]', fileName: 'a.png', mimeType: 'image/png', source: png },
			{ name: 'mask', fileName: 'm.png', mimeType: 'image/png', source: source(png, 100, 9000) },
		]);
		expect(form.largestPart).toEqual({ name: 'mask', bytes: 9000, file: true });
	});
});

describe('the loopback gateway refuses a malformed form', () => {
	const boundary = 'b0undary';
	const type = `multipart/form-data; boundary=${boundary}`;
	it.each([
		['no closing delimiter', `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nimg`, /NextPart: EOF/],
		['no delimiter at all', 'model=img', /NextPart: EOF/],
		['a part without Content-Disposition', `--${boundary}\r\nContent-Type: text/plain\r\n\r\nx\r\n--${boundary}--\r\n`, /Content-Disposition/],
		['garbage after a delimiter', `--${boundary}XX\r\n`, /expecting a new Part/],
		['a control character in a part header (Go refuses the whole form)', `--${boundary}\r\nContent-Disposition: form-data; name="a\x01b"\r\n\r\nx\r\n--${boundary}--\r\n`, /malformed MIME header line/],
	])('%s', (_, body, words) => {
		expect(() => parseMultipart(type, Buffer.from(body))).toThrow(MultipartError);
		expect(() => parseMultipart(type, Buffer.from(body))).toThrow(words);
	});
	it('reads a Content-Disposition as Go does: `\\` escapes a tspecial only, an unreadable one drops its part, an empty file name is a text field', () => {
		const part = (disposition: string) => `--${boundary}\r\nContent-Disposition: form-data; ${disposition}\r\n\r\nv\r\n`;
		const body = [part('name="C:\\dir\\a(1\\).png"'), part('name="user\\"'), part('name="x"; filename=""'), part('NAME=token'), `--${boundary}--\r\n`].join('');
		expect(parseMultipart(type, Buffer.from(body)).fields).toEqual({ 'C:\\dir\\a(1).png': ['v'], x: ['v'], token: ['v'] });
	});

	it('a Content-Type without a boundary, or of another type', () => {
		expect(() => parseMultipart('multipart/form-data', Buffer.alloc(0))).toThrow(/no multipart boundary/);
		expect(() => parseMultipart('application/json', Buffer.alloc(0))).toThrow(/isn't multipart\/form-data/);
	});
});
