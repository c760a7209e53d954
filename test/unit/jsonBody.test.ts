import { Readable } from 'node:stream';

import { Base64Text, encodeJsonBody } from '../../nodes/shared/wire/jsonBody';
import { StreamedBody } from '../../nodes/shared/wire/streamedBody';
import type { FileStreamSource, NodeReadable } from '../../nodes/shared/wire/streamedBody';

describe('request bodies with files (encodeJsonBody)', () => {
	const bytesOf = (size: number, seed: number) => Buffer.from(Array.from({ length: size }, (_, i) => (i * 31 + seed) % 256));

	it('writes exactly the bytes of JSON.stringify, the files as their Base64 text', () => {
		for (const size of [0, 1, 2, 3, 4, 49_151, 49_152, 49_153, 200_001]) {
			const body = {
				model: 'm',
				text: 'ünïcödé "quoted" \\ \n ☃',
				parts: [{ url: new Base64Text(bytesOf(size, 1), 'data:image/png;base64,') }, { data: new Base64Text(bytesOf(size + 1, 2)) }],
			};
			const sent = encodeJsonBody(body);
			expect(Buffer.isBuffer(sent)).toBe(true);
			expect(sent.toString()).toBe(JSON.stringify(body));
		}
	});

	it('sends a body without files as JSON text, as before', () => {
		expect(encodeJsonBody({ a: 1, b: ['x'] })).toBe('{"a":1,"b":["x"]}');
	});

	it('is still right when a value of the body looks like its marker', () => {
		const body = { trap: 'mgw-file-', file: new Base64Text(bytesOf(10, 3)) };
		expect(encodeJsonBody(body).toString()).toBe(JSON.stringify(body));
	});

	describe('a file streamed from n8n\'s binary store', () => {
		/** A source that reads `bytes` in chunks of `chunk` bytes (a fresh stream per open). */
		const sourceOf = (bytes: Buffer, chunk: number, size = bytes.length): FileStreamSource & { opened: Readable[] } => {
			const opened: Readable[] = [];
			return {
				size,
				opened,
				open: async () => {
					const stream = Readable.from(
						(function* () {
							for (let at = 0; at < bytes.length; at += chunk) yield bytes.subarray(at, at + chunk);
						})(),
						{ objectMode: false },
					);
					opened.push(stream);
					return stream as unknown as NodeReadable;
				},
				changed: (problem) => new Error(`the file ${problem}`),
				slow: (within, progress) => new Error(`the file was slow within ${within}: ${progress}`),
			};
		};
		const send = async (body: StreamedBody) => {
			const parts: Buffer[] = [];
			for await (const part of (await body.open()).body as Readable) parts.push(part as Buffer);
			return Buffer.concat(parts);
		};

		it('is the same JSON as the bytes would make, whatever the chunks (the 0 to 2 bytes left over carried on)', async () => {
			for (const size of [0, 1, 2, 3, 4, 5, 100, 49_153]) {
				for (const chunk of [1, 2, 3, 4, 5, 7, 64 * 1024]) {
					const a = bytesOf(size, 1);
					const b = bytesOf(size + 2, 2);
					const expected = JSON.stringify({ t: 'ü', a: new Base64Text(a, 'data:image/png;base64,'), b: new Base64Text(b), z: 1 });
					const body = encodeJsonBody({ t: 'ü', a: new Base64Text(sourceOf(a, chunk), 'data:image/png;base64,'), b: new Base64Text(b), z: 1 });
					expect(body).toBeInstanceOf(StreamedBody);
					const sent = await send(body as StreamedBody);
					expect(sent.toString()).toBe(expected);
					expect((body as StreamedBody).size).toBe(sent.length);
				}
			}
		});

		it('fails when the file is longer or shorter than its recorded size, and closes it', async () => {
			for (const [size, recorded, problem] of [
				[100, 99, 'holds more than the 99 bytes n8n recorded for it'],
				[100, 101, 'holds 100 bytes, not the 101 bytes n8n recorded for it'],
			] as const) {
				const source = sourceOf(bytesOf(size, 3), 7, recorded);
				const body = encodeJsonBody({ file: new Base64Text(source) }) as StreamedBody;
				await expect(send(body)).rejects.toThrow(`the file ${problem}`);
				expect(source.opened.every((stream) => stream.destroyed)).toBe(true);
			}
		});

		it('opens the file afresh each time, and closes it when the body is closed unread', async () => {
			const source = sourceOf(bytesOf(1000, 4), 10);
			const body = encodeJsonBody({ file: new Base64Text(source) }) as StreamedBody;
			expect((await send(body)).toString()).toBe(JSON.stringify({ file: bytesOf(1000, 4).toString('base64') }));
			const opened = await body.open();
			expect(source.opened).toHaveLength(2);
			opened.close();
			expect(source.opened[1].destroyed).toBe(true);
			expect(opened.failure).toBeUndefined();
		});
	});
});
