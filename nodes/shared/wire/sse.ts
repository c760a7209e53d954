/**
 * Server-sent events (`text/event-stream`), the format both chat endpoints stream in, read the
 * way the WHATWG specification says: lines end in CRLF, LF or CR (a CRLF may be split across two
 * network chunks), `:` lines are comments (proxies send them as keep-alives), `data:` lines of
 * one event are joined with `\n`, and a blank line ends the event.
 *
 * Linear in the size of the stream: each chunk is scanned once, and only a line that spans
 * several chunks is ever joined (once, when its end arrives). Nothing re-scans a growing buffer.
 */
import type { ByteStream } from './transport';

export interface ServerSentEvent {
	/** The `event:` name; `message` when the server gave none. */
	event: string;
	/** The event's `data:` lines joined with `\n`. */
	data: string;
	/** The last `id:` seen, if any. */
	id?: string;
}

const LF = 10;
const COLON = 58;
const SPACE = 32;

/** Whether the line `text[start, end)` is the field `name`: the name, then a colon or the line end. */
function isField(text: string, start: number, end: number, name: string): boolean {
	const after = start + name.length;
	return after <= end && text.startsWith(name, start) && (after === end || text.charCodeAt(after) === COLON);
}

/** The value of a field whose name ends at `nameEnd`: after the colon and one optional space. */
function fieldValue(text: string, nameEnd: number, end: number): string {
	let from = nameEnd + 1;
	if (from < end && text.charCodeAt(from) === SPACE) from++;
	return from < end ? text.slice(from, end) : '';
}

/** The incremental parser: feed it decoded text in any pieces, get the finished events. */
export class ServerSentEventParser {
	/** Pieces of the line whose end has not arrived yet. */
	private openLine: string[] = [];
	/** The last chunk ended in CR: an LF starting the next chunk belongs to that line end. */
	private pendingCrLf = false;
	/** The event's `data:` lines so far, joined with `\n`; undefined before the first. */
	private data: string | undefined;
	private eventName = '';
	private lastEventId: string | undefined;

	/** Parses `text`; returns the events it completed (appended to `out` when given). */
	push(text: string, out: ServerSentEvent[] = []): ServerSentEvent[] {
		let start = 0;
		if (this.pendingCrLf && text.length > 0) {
			this.pendingCrLf = false;
			if (text.charCodeAt(0) === LF) start = 1;
		}
		// The next LF and CR positions are looked up once each and reused until passed, so a chunk
		// without any CR is not searched for one after every line.
		let nextLf = text.indexOf('\n', start);
		let nextCr = text.indexOf('\r', start);
		while (nextLf !== -1 || nextCr !== -1) {
			let lineEnd: number;
			let nextStart: number;
			if (nextCr !== -1 && (nextLf === -1 || nextCr < nextLf)) {
				lineEnd = nextCr;
				if (nextCr + 1 === text.length) {
					nextStart = nextCr + 1;
					this.pendingCrLf = true;
				} else {
					nextStart = text.charCodeAt(nextCr + 1) === LF ? nextCr + 2 : nextCr + 1;
				}
			} else {
				lineEnd = nextLf;
				nextStart = nextLf + 1;
			}
			if (this.openLine.length > 0) {
				this.openLine.push(text.slice(start, lineEnd));
				const line = this.openLine.join('');
				this.openLine = [];
				this.takeLine(line, 0, line.length, out);
			} else {
				// A line inside this chunk is read in place: only its value becomes a string.
				this.takeLine(text, start, lineEnd, out);
			}
			start = nextStart;
			if (nextLf !== -1 && nextLf < start) nextLf = text.indexOf('\n', start);
			if (nextCr !== -1 && nextCr < start) nextCr = text.indexOf('\r', start);
		}
		if (start < text.length) this.openLine.push(start === 0 ? text : text.slice(start));
		return out;
	}

	/**
	 * The stream ended. The specification drops an event that no blank line closed; servers
	 * often end with `data: [DONE]\n` alone, so a last complete line still counts. A line cut in
	 * the middle (no line end at all) is dropped: it may be half a JSON text.
	 */
	end(out: ServerSentEvent[] = []): ServerSentEvent[] {
		this.openLine = [];
		this.pendingCrLf = false;
		this.dispatch(out);
		return out;
	}

	/** The line `text[start, end)`. Only the fields that matter are looked for, so nothing scans past the line. */
	private takeLine(text: string, start: number, end: number, out: ServerSentEvent[]): void {
		if (start === end) {
			this.dispatch(out);
			return;
		}
		if (text.charCodeAt(start) === COLON) return; // a comment or keep-alive
		if (isField(text, start, end, 'data')) {
			const value = fieldValue(text, start + 4, end);
			this.data = this.data === undefined ? value : `${this.data}\n${value}`;
		} else if (isField(text, start, end, 'event')) {
			this.eventName = fieldValue(text, start + 5, end);
		} else if (isField(text, start, end, 'id')) {
			const value = fieldValue(text, start + 2, end);
			if (!value.includes('\0')) this.lastEventId = value;
		}
		// `retry:` and unknown fields mean nothing to a one-shot reader.
	}

	private dispatch(out: ServerSentEvent[]): void {
		const data = this.data;
		const event = this.eventName || 'message';
		this.data = undefined;
		this.eventName = '';
		if (data === undefined) return; // an event without data is not dispatched
		const parsed: ServerSentEvent = { event, data };
		if (this.lastEventId !== undefined) parsed.id = this.lastEventId;
		out.push(parsed);
	}
}

/**
 * The events of an answer body, in order. Bytes are decoded as a stream, so a character split
 * across network chunks arrives whole. Events are handed over per network chunk (an array), so
 * a stream of many small events costs one await per chunk, not one per event; a chunk that
 * completes no event (a keep-alive comment, a piece of a line) is an empty array, so the reader
 * sees every sign of life (Idle Timeout).
 */
export async function* readServerSentEvents(
	stream: ByteStream | AsyncIterable<Buffer | Uint8Array | string>,
): AsyncGenerator<ServerSentEvent[], void, undefined> {
	const decoder = new TextDecoder('utf-8');
	const parser = new ServerSentEventParser();
	try {
		for await (const chunk of stream) {
			const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
			yield parser.push(text);
		}
		const events = parser.end(parser.push(decoder.decode()));
		if (events.length > 0) yield events;
	} finally {
		// The reader stopped early (an error event, a cancel): release the connection.
		const closable = stream as Partial<ByteStream>;
		if (typeof closable.destroy === 'function' && !closable.readableEnded) closable.destroy();
	}
}
