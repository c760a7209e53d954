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

/** The incremental parser: feed it decoded text in any pieces, get the finished events. */
export class ServerSentEventParser {
	/** Pieces of the line whose end has not arrived yet. */
	private openLine: string[] = [];
	/** The last chunk ended in CR: an LF starting the next chunk belongs to that line end. */
	private pendingCrLf = false;
	private dataLines: string[] = [];
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
			let line = text.slice(start, lineEnd);
			if (this.openLine.length > 0) {
				this.openLine.push(line);
				line = this.openLine.join('');
				this.openLine = [];
			}
			this.takeLine(line, out);
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

	private takeLine(line: string, out: ServerSentEvent[]): void {
		if (line.length === 0) {
			this.dispatch(out);
			return;
		}
		if (line.charCodeAt(0) === COLON) return; // a comment or keep-alive
		const colon = line.indexOf(':');
		const field = colon === -1 ? line : line.slice(0, colon);
		let value = '';
		if (colon !== -1) value = line.charCodeAt(colon + 1) === SPACE ? line.slice(colon + 2) : line.slice(colon + 1);
		switch (field) {
			case 'data':
				this.dataLines.push(value);
				break;
			case 'event':
				this.eventName = value;
				break;
			case 'id':
				if (!value.includes('\0')) this.lastEventId = value;
				break;
			default:
				// `retry:` and unknown fields mean nothing to a one-shot reader.
				break;
		}
	}

	private dispatch(out: ServerSentEvent[]): void {
		const lines = this.dataLines;
		const event = this.eventName || 'message';
		this.dataLines = [];
		this.eventName = '';
		if (lines.length === 0) return; // an event without data is not dispatched
		const parsed: ServerSentEvent = { event, data: lines.length === 1 ? lines[0] : lines.join('\n') };
		if (this.lastEventId !== undefined) parsed.id = this.lastEventId;
		out.push(parsed);
	}
}

/**
 * The events of an answer body, in order. Bytes are decoded as a stream, so a character split
 * across network chunks arrives whole. Events are handed over per network chunk (an array), so
 * a stream of many small events costs one await per chunk, not one per event.
 */
export async function* readServerSentEvents(
	stream: ByteStream | AsyncIterable<Buffer | Uint8Array | string>,
): AsyncGenerator<ServerSentEvent[], void, undefined> {
	const decoder = new TextDecoder('utf-8');
	const parser = new ServerSentEventParser();
	try {
		for await (const chunk of stream) {
			const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
			const events = parser.push(text);
			if (events.length > 0) yield events;
		}
		const events = parser.end(parser.push(decoder.decode()));
		if (events.length > 0) yield events;
	} finally {
		// The reader stopped early (an error event, a cancel): release the connection.
		const closable = stream as Partial<ByteStream>;
		if (typeof closable.destroy === 'function' && !closable.readableEnded) closable.destroy();
	}
}
