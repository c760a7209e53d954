import { Base64Text, encodeJsonBody } from '../../nodes/shared/wire/jsonBody';

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
});
