/**
 * Idle Timeout (issue 28) under a hostile review: every byte the gateway sends is a sign of life,
 * including the first few, read while the reader looks for the answer's first character
 * (answerStart). A real stream (PassThrough) fed one byte at a time; no clock.
 */
import { PassThrough } from 'stream';

import { answerStart } from '../../nodes/shared/chat/chatCall';
import type { ByteStream } from '../../nodes/shared/wire/transport';

/** Lets the stream deliver what was written (its events fire on later ticks). */
const settle = async () => {
	for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('answerStart counts every chunk it reads as a sign of life', () => {
	it.each([
		['one byte at a time (a relay that sends "\\n" as its keep-alive)', ['\n', '\n', '\n'], 'd'],
		['a CRLF at a time', ['\r\n', '\r\n'], 'd'],
		['the first bytes of a UTF-8 byte order mark', ['\xEF', '\xBB', '\xBF'], 'd'],
	])('%s', async (_, pieces, first) => {
		const body = new PassThrough();
		let signs = 0;
		const start = answerStart({ body: body as unknown as ByteStream, alive: () => signs++ });
		for (const [index, piece] of pieces.entries()) {
			body.write(Buffer.from(piece, 'latin1'));
			await settle();
			expect(signs).toBeGreaterThanOrEqual(index + 1);
		}
		body.end('data: [DONE]\n\n');
		expect((await start).first).toBe(first);
	});
});
