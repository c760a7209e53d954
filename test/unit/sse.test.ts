import { ServerSentEventParser, readServerSentEvents } from '../../nodes/shared/wire/sse';
import type { ServerSentEvent } from '../../nodes/shared/wire/sse';

function parseAll(pieces: string[]): ServerSentEvent[] {
	const parser = new ServerSentEventParser();
	const out: ServerSentEvent[] = [];
	for (const piece of pieces) parser.push(piece, out);
	return parser.end(out);
}

async function* chunksOf(...chunks: Array<Buffer | string>) {
	for (const chunk of chunks) yield chunk;
}

async function readAll(source: AsyncIterable<Buffer | string>): Promise<ServerSentEvent[]> {
	const events: ServerSentEvent[] = [];
	for await (const batch of readServerSentEvents(source)) events.push(...batch);
	return events;
}

const CHAT_STREAM =
	'data: {"choices":[{"delta":{"content":"Hel"}}]}\n\n' +
	': keep-alive\n\n' +
	'data: {"choices":[{"delta":{"content":"lo"}}]}\n\n' +
	'data: [DONE]\n\n';

describe('ServerSentEventParser', () => {
	it('reads data events and skips comments used as keep-alives', () => {
		expect(parseAll([CHAT_STREAM])).toEqual([
			{ event: 'message', data: '{"choices":[{"delta":{"content":"Hel"}}]}' },
			{ event: 'message', data: '{"choices":[{"delta":{"content":"lo"}}]}' },
			{ event: 'message', data: '[DONE]' },
		]);
	});

	it('gives the same events however the text is split into chunks', () => {
		const whole = parseAll([CHAT_STREAM]);
		for (let cut = 1; cut < CHAT_STREAM.length; cut++) {
			expect(parseAll([CHAT_STREAM.slice(0, cut), CHAT_STREAM.slice(cut)])).toEqual(whole);
		}
		expect(parseAll(CHAT_STREAM.split(''))).toEqual(whole);
	});

	it('reads event names, multi-line data and ids', () => {
		const text = 'event: message_start\ndata: {"a":1}\n\nid: 7\nevent: note\ndata: line one\ndata: line two\n\n';
		expect(parseAll([text])).toEqual([
			{ event: 'message_start', data: '{"a":1}' },
			{ event: 'note', data: 'line one\nline two', id: '7' },
		]);
	});

	it.each([
		['CRLF', '\r\n'],
		['CR', '\r'],
		['LF', '\n'],
	])('accepts %s line ends', (_name, eol) => {
		const text = `event: ping${eol}data: {"type":"ping"}${eol}${eol}data: x${eol}${eol}`;
		expect(parseAll([text])).toEqual([
			{ event: 'ping', data: '{"type":"ping"}' },
			{ event: 'message', data: 'x' },
		]);
	});

	it('treats a CRLF split across two chunks as one line end', () => {
		expect(parseAll(['data: a\r', '\ndata: b\r', '\n\r', '\n'])).toEqual([{ event: 'message', data: 'a\nb' }]);
	});

	it('strips exactly one space after the colon and takes a field without a colon as empty', () => {
		expect(parseAll(['data:no-space\n\ndata:  two\n\ndata\ndata\n\n'])).toEqual([
			{ event: 'message', data: 'no-space' },
			{ event: 'message', data: ' two' },
			{ event: 'message', data: '\n' },
		]);
	});

	it('does not dispatch events without data, and ignores retry and unknown fields', () => {
		expect(parseAll(['event: lonely\n\nretry: 1000\nfoo: bar\n\n:\n\n'])).toEqual([]);
	});

	it('delivers a last event not closed by a blank line, but drops a line cut in the middle', () => {
		expect(parseAll(['data: [DONE]\n'])).toEqual([{ event: 'message', data: '[DONE]' }]);
		expect(parseAll(['data: {"a":1}\n\ndata: {"cho'])).toEqual([{ event: 'message', data: '{"a":1}' }]);
	});

	it('joins a long line that spans many chunks', () => {
		const payload = 'x'.repeat(100_000);
		const text = `data: ${payload}\n\n`;
		const pieces: string[] = [];
		for (let i = 0; i < text.length; i += 7) pieces.push(text.slice(i, i + 7));
		expect(parseAll(pieces)).toEqual([{ event: 'message', data: payload }]);
	});
});

describe('readServerSentEvents', () => {
	it('decodes UTF-8 characters split across network chunks', async () => {
		const bytes = Buffer.from('data: {"t":"héllo 👋"}\n\n');
		const cut = bytes.indexOf(0xf0) + 2; // inside the four-byte emoji
		expect(await readAll(chunksOf(bytes.subarray(0, cut), bytes.subarray(cut)))).toEqual([{ event: 'message', data: '{"t":"héllo 👋"}' }]);
		const eCut = bytes.indexOf(0xc3) + 1; // inside the two-byte é
		expect(await readAll(chunksOf(bytes.subarray(0, eCut), bytes.subarray(eCut)))).toEqual([{ event: 'message', data: '{"t":"héllo 👋"}' }]);
	});

	it('hands events over per network chunk and accepts string chunks', async () => {
		const batches: number[] = [];
		for await (const batch of readServerSentEvents(chunksOf('data: 1\n\ndata: 2\n\n', 'data: 3\n\n'))) batches.push(batch.length);
		expect(batches).toEqual([2, 1]);
	});

	it('closes the connection when the reader stops early', async () => {
		let destroyed = false;
		const stream = Object.assign(chunksOf('data: 1\n\n', 'data: 2\n\n'), {
			destroy: () => {
				destroyed = true;
			},
			readableEnded: false,
		});
		for await (const batch of readServerSentEvents(stream)) {
			expect(batch[0].data).toBe('1');
			break;
		}
		expect(destroyed).toBe(true);
	});

	it('passes on a failure of the connection', async () => {
		async function* failing() {
			yield Buffer.from('data: 1\n\n');
			throw Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
		}
		await expect(readAll(failing())).rejects.toThrow('aborted');
	});
});
