/**
 * One attempt of a request: its time limit and the execution's cancel signal as one signal, where
 * its streamed body was when it ended, and the one rule of whether the gateway may have acted on
 * it (`AttemptSignal.mayHaveActed`). `sendOnce` sends it through n8n's request helper, a streamed
 * body opened afresh for it; `followRedirects` follows redirects hop by hop, the key and a body
 * never going to another origin.
 */
import type { IDataObject, IHttpRequestOptions } from 'n8n-workflow';

import { GatewayError } from '../failures/errors';
import type { GatewayErrorInit, Upload } from '../failures/errors';
import { isSameOrigin } from '../credential/url';
import { encodeJsonBody, holdsFile } from './jsonBody';
import { MultipartForm } from './multipart';
import { StreamedBody, stalledFileOf } from './streamedBody';
import type { NodeReadable, OpenedBody } from './streamedBody';
import { secondsText } from './retry';
import { CancelledError, IdleWatch, deadlineSignal } from './timing';

/** A readable HTTP body: a Node Readable, named without importing Node's stream module (n8n's rules). */
export type ByteStream = NodeReadable;

/** A header's value as text: its first value when repeated, '' when absent; `name` in any case. */
export function headerValue(headers: Record<string, unknown> | undefined, name: string): string {
	const value = headers?.[name] ?? headers?.[name.toLowerCase()];
	if (Array.isArray(value)) return String(value[0] ?? '');
	return value === undefined || value === null ? '' : String(value);
}

export interface RawResponse {
	statusCode: number;
	headers: Record<string, unknown>;
	body: ByteStream;
}

/** The idle limit of a streamed answer: the longest silence allowed, and its name as the user knows it. */
export interface IdleLimit {
	ms: number;
	name: string;
}

/**
 * One attempt's time limit, its idle limit (a streamed answer's) and the execution's cancel signal
 * as one signal; `timedOut`, `idled` and `cancelled` say which ended it. The idle watch runs from
 * the request sent (one with files: from its answer's head, see sendOnce) to the answer's last
 * byte: the request sent, each answer's head and each chunk its reader reads (OpenAnswer.alive) are
 * signs of life. Whichever limit ends the attempt first is the one reported: the others stop.
 */
export class AttemptSignal {
	readonly signal: AbortSignal;
	private readonly deadline: AbortSignal;
	private readonly idleWatch: IdleWatch | undefined;
	/**
	 * Set when the request body's file failed (could not be opened, or is not the file checked):
	 * the call fails with this error as it is (the item's own), never retried nor read as the network's.
	 */
	bodyFailure: Error | undefined;
	/** Where a streamed body was when the attempt ended or its answer came (errors.ts `Upload`); `mayHaveActed` reads it. */
	upload: Upload = 'sent';

	/**
	 * `reportedMs`: the limit the messages name (the whole of the item's deadline when that, not
	 * the attempt's own limit, cut the attempt short). `cutBy`: the name of a limit set from outside
	 * the call (an image item's 300 s, Max Wait) when that cut the attempt short.
	 */
	constructor(
		readonly deadlineMs: number,
		private readonly cancel?: AbortSignal,
		readonly reportedMs = deadlineMs,
		readonly cutBy?: string,
		/** The name of the attempt's own limit, when the user set it ("Timeout (Seconds)"). */
		private readonly ownLimitName?: string,
		/** A streamed answer's idle limit, when it is shorter than the attempt's own. */
		readonly idle?: IdleLimit,
	) {
		this.deadline = deadlineSignal(deadlineMs);
		const ends = [this.deadline, ...(cancel ? [cancel] : [])];
		if (idle) {
			const watch = new IdleWatch(idle.ms);
			this.idleWatch = watch;
			// The deadline first: the idle limit never fires after it (a Stop is told apart by `cancelled`, which wins).
			this.deadline.addEventListener('abort', () => watch.stop(), { once: true });
			ends.push(watch.signal);
		}
		this.signal = ends.length > 1 ? AbortSignal.any(ends) : this.deadline;
	}

	get cancelled(): boolean {
		return this.cancel?.aborted === true;
	}

	/** The limit that cut this attempt short, as the messages name it. */
	get limitWords(): string {
		return this.cutBy ?? this.ownLimitName ?? `${secondsText(this.reportedMs)} s`;
	}

	get timedOut(): boolean {
		return this.deadline.aborted && !this.cancelled && !this.idled;
	}

	/** The idle limit ended the attempt (it stops once another limit has). */
	get idled(): boolean {
		return this.idleWatch?.signal.aborted === true && !this.cancelled;
	}

	/** A sign of life: the request sent whole, the answer's head, a byte of its body. */
	alive(): void {
		this.idleWatch?.alive();
	}

	/** A request's files on their way (each hop's): no silence until its next sign of life. */
	uploading(): void {
		this.idleWatch?.pause();
	}

	/** The answer is read, or gone: its silence no longer matters. */
	answerDone(): void {
		this.idleWatch?.stop();
	}

	/**
	 * Whether the gateway may have acted on this attempt, the one rule: an answer that came decides
	 * (`status`: an error status, which says "may have acted" for a 5xx or 408, unless it came before
	 * the body was sent whole: then the gateway refused a request it never had whole). With no answer:
	 * a body this side cut before its end was not acted on; a body sent whole, or one whose connection
	 * the gateway closed mid-body (Node's client drops an answer that came just before), may have been.
	 */
	mayHaveActed(sentBody: boolean, status?: number): boolean {
		// A 5xx or 408: the gateway may have done the work before its proxy gave up (502/504) or failed
		// afterwards (500); any other error status is a refusal, whatever its body turns out to say.
		if (status !== undefined) return (status >= 500 || status === 408) && this.upload !== 'answeredEarly';
		return sentBody && this.upload !== 'cutHere';
	}

	/**
	 * Destroys the answer's stream when the attempt's time runs out or the run is stopped; and an
	 * answer destroyed before its end, by whichever reader stopped, closes its connection
	 * (`closeConnection`). The stream is n8n's wrapper of the socket's: destroyed alone, it keeps the
	 * socket open until the gateway sends again.
	 */
	bind(stream: ByteStream, closeConnection: () => void): void {
		const destroy = stream.destroy.bind(stream);
		stream.destroy = (error?: Error) => {
			const early = !stream.readableEnded;
			destroy(error);
			if (early) closeConnection();
			return stream;
		};
		const onAbort = () => void stream.destroy(new CancelledError(this.timedOut ? 'deadline' : 'cancelled'));
		if (this.signal.aborted) return onAbort();
		this.signal.addEventListener('abort', onAbort, { once: true });
		const release = () => this.signal.removeEventListener('abort', onAbort);
		stream.once('close', release);
		stream.once('end', release);
	}
}

type HttpRequest = (options: IHttpRequestOptions) => Promise<unknown>;

/** What a call sends: an object as JSON (its files as Base64 text), a string as it is, or a multipart form. */
export type RequestBody = IDataObject | string | MultipartForm;

function encodeBody(body: RequestBody): string | Buffer | StreamedBody {
	if (typeof body === 'string') return body;
	return body instanceof MultipartForm ? body.encode() : encodeJsonBody(body);
}

/** Whether a body carries files the node attached (text that merely looks like one, `data: …`, is text). */
function carriesFiles(body: RequestBody): boolean {
	if (typeof body === 'string') return false;
	return body instanceof MultipartForm ? body.holdsFiles : holdsFile(body, true);
}

/** The Content-Type of a body. */
export function bodyType(body: RequestBody): string {
	return body instanceof MultipartForm ? body.contentType : 'application/json';
}

/**
 * Sends one request (`options` without its body) and returns the answer, bound to the attempt.
 * A body of files streamed from n8n's binary store is opened afresh for this attempt, sized up front
 * (so relays get a body of known length, not chunks), and closed when the answer is done or the
 * request fails; the attempt records where it was (`upload`) and a file's own failure (`bodyFailure`).
 */
export async function sendOnce(http: HttpRequest, attemptOptions: IHttpRequestOptions, body: RequestBody | undefined, attempt: AttemptSignal): Promise<RawResponse> {
	// Where the upload was is a fact of this hop: a 307 answered before the body was read says
	// nothing of the next hop, which may have had the whole body.
	attempt.upload = 'sent';
	// This request's own end besides the attempt's, on which n8n's helper aborts it: an answer closed
	// before its end (a redirect's, an error body quoted in part) closes its socket, and the attempt,
	// which may go on to the next hop, goes on.
	const answerClosed = new AbortController();
	const closeConnection = () => answerClosed.abort();
	const options = { ...attemptOptions, abortSignal: AbortSignal.any([attempt.signal, answerClosed.signal]) };
	const encoded = body !== undefined && options.method !== 'GET' ? encodeBody(body) : undefined;
	// The silence is the gateway's once the request is sent whole. Text goes out at once. Files go at
	// the gateway's reading pace, which is no silence, and the last of them may wait megabytes deep
	// in the system's buffers after this side has handed it over: their silence counts from the answer's head.
	if (encoded !== undefined && carriesFiles(body as RequestBody)) attempt.uploading();
	else attempt.alive();
	if (!(encoded instanceof StreamedBody)) {
		const response = (await http(encoded === undefined ? options : { ...options, body: encoded })) as RawResponse;
		attempt.alive();
		attempt.bind(response.body, closeConnection);
		return response;
	}
	let opened: OpenedBody;
	try {
		// Every file's open ends with the attempt (its deadline, a Stop): an S3 GET that never answers too.
		opened = await encoded.open(attempt.signal);
	} catch (error) {
		// Nothing was sent. A Stop is a Stop (the caller's cancel path); a deadline passed while the
		// file opened is that file's failure; a file that could not be opened fails with its own error.
		attempt.upload = 'cutHere';
		if (!attempt.cancelled) attempt.bodyFailure = attempt.timedOut ? stalledFileOf(error, attempt.limitWords) : error instanceof Error ? error : new Error(String(error));
		throw attempt.bodyFailure ?? error;
	}
	const headers = { ...(options.headers as Record<string, string>), 'Content-Length': String(encoded.size) };
	// A Node Readable is a body n8n's request helper pipes (its types do not name streams).
	const streamed = { ...options, headers, body: opened.body as unknown as IHttpRequestOptions['body'] };
	let response: RawResponse | undefined;
	try {
		response = (await http(streamed)) as RawResponse;
	} finally {
		if (response === undefined) {
			// Who held the body up, asked before closing it: a file that stopped giving bytes when the deadline came.
			const stalled = attempt.timedOut ? opened.stalled(attempt.limitWords) : undefined;
			opened.close();
			// A file that is not the one checked, could not be read, or stalled fails the request with its own error, not as the network's.
			attempt.bodyFailure = opened.failure ?? stalled;
			// Cut here (the file, the deadline, a Stop) or by the gateway's close, which may have followed an answer.
			if (!opened.ended) attempt.upload = attempt.signal.aborted || attempt.bodyFailure !== undefined ? 'cutHere' : 'cutThere';
		}
	}
	if (!opened.ended) attempt.upload = 'answeredEarly';
	attempt.alive();
	response.body.once('close', opened.close);
	response.body.once('end', opened.close);
	attempt.bind(response.body, closeConnection);
	return response;
}

const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** A redirect's Location as an absolute URL, or undefined when it is none. */
function resolveLocation(location: string, from: string): string | undefined {
	if (location === '') return undefined;
	try {
		return new URL(location, from).toString();
	} catch {
		return undefined;
	}
}

export interface RedirectRoute {
	/** Where the request goes first. */
	url: string;
	method: string;
	/** The gateway's own origin: the only one a body (and the key) may be re-sent to. */
	baseUrl: string;
	/** What the call does, for messages, and the fields its errors keep. */
	what: string;
	extra: Partial<GatewayErrorInit>;
}

/** Sends a request, following redirects hop by hop; the answer is a non-redirect status. */
export async function followRedirects(route: RedirectRoute, hop: (url: string) => Promise<RawResponse>): Promise<RawResponse> {
	const { method, baseUrl, what } = route;
	let url = route.url;
	for (let hops = 0; ; hops++) {
		const response = await hop(url);
		if (!REDIRECT_STATUSES.has(response.statusCode)) return response;
		response.body.destroy();
		const status = response.statusCode;
		const extra = { ...route.extra, status, mayHaveActed: false };
		const next = resolveLocation(headerValue(response.headers, 'location'), url);
		if (next === undefined) throw new GatewayError({ kind: 'redirect', headline: `${what} failed: the gateway answered HTTP ${status} without a usable Location`, ...extra });
		// The gateway itself moved for good to another origin: the Base URL is out of date.
		const movedGateway = (status === 301 || status === 308) && isSameOrigin(url, baseUrl) && !isSameOrigin(next, baseUrl);
		// A body is re-sent only as 307/308 ask, and only to the gateway's own origin.
		const keepsBody = status === 307 || status === 308;
		if (movedGateway || (method !== 'GET' && !(keepsBody && isSameOrigin(next, baseUrl)))) {
			throw new GatewayError({
				kind: 'redirect',
				headline: movedGateway
					? `${what} failed: the gateway moved to ${next}`
					: `${what} failed: the gateway redirected the request to ${next}; a request with a body is not sent to another address`,
				hint: movedGateway
					? 'Update the Base URL of the credential to the new address.'
					: 'Check the Base URL of the credential: it should be the address the gateway answers on directly.',
				...extra,
			});
		}
		if (hops >= MAX_REDIRECTS) throw new GatewayError({ kind: 'redirect', headline: `${what} failed: more than ${MAX_REDIRECTS} redirects, the last to ${next}`, ...extra });
		url = next;
	}
}
