/**
 * Reading a gateway's answer: a whole body within the attempt's deadline and a bound on its size,
 * and a whole answer's text as the JSON object an endpoint returns. Every problem is a GatewayError.
 */
import type { IDataObject } from 'n8n-workflow';

import { GatewayError, errorFromParsed, NOT_THE_GATEWAY_HINT, notAnObjectError } from '../failures/errors';
import type { GatewayErrorInit } from '../failures/errors';
import { gatewayQuote, isErrorShape, readErrorFields } from '../failures/errorBody';
import { headerValue } from './attempt';
import type { ByteStream } from './attempt';

export interface GatewayResponse<B> {
	status: number;
	headers: Record<string, unknown>;
	body: B;
}

function tryParse(text: string, parse: (text: string) => unknown): { ok: true; value: unknown } | { ok: false } {
	try {
		return { ok: true, value: parse(text) };
	} catch {
		return { ok: false };
	}
}

/**
 * A whole answer's text as a JSON object. An empty body, text that is not JSON, a value that is
 * not an object and an error body in a 200 (`{"error":…}`, `{"success":false}`, …) all become
 * GatewayErrors. For answers read some other way than `json` (a stream decoded as it arrives).
 */
export function jsonObjectAnswer<T = IDataObject>(
	response: GatewayResponse<string>,
	what: string,
	extra: Partial<GatewayErrorInit>,
	parse: (text: string) => unknown = JSON.parse,
): T {
	const text = response.body.trim();
	if (text === '') {
		throw new GatewayError({ kind: 'protocol', headline: `${what} failed: the gateway answered HTTP ${response.status} with an empty body`, ...extra });
	}
	const parsed = tryParse(text, parse);
	if (!parsed.ok) {
		const contentType = headerValue(response.headers, 'content-type');
		const page = /html/i.test(contentType) || text.startsWith('<');
		throw new GatewayError({
			kind: 'protocol',
			headline: `${what} failed: the gateway answered HTTP ${response.status} with ${page ? 'a page' : 'text'} instead of JSON`,
			gatewayMessage: gatewayQuote(text),
			hint: NOT_THE_GATEWAY_HINT,
			...extra,
		});
	}
	const body = parsed.value;
	if (typeof body !== 'object' || body === null || Array.isArray(body)) throw notAnObjectError(what, response.status, body, extra);
	if (isErrorShape(body)) throw errorFromParsed(what, response.status, readErrorFields(body), extra);
	return body as T;
}

/** How a body is read: up to `limit` bytes, each chunk a sign of life (`alive`), and what a failure while reading is. */
export type BodyBound = { limit: number; alive: () => void } & (
	/** An answer to use: more than `limit` is refused as too large; a failure is `failure(error)`. */
	| { quote?: false; what: string; extra: Partial<GatewayErrorInit>; failure: (error: unknown) => GatewayError }
	/**
	 * An error body to quote: what came before `limit`, before the stream broke off or went silent,
	 * or before a Stop (the caller asks the attempt which), is what the gateway said; `stream.readableEnded` says whether all of it.
	 */
	| { quote: true }
);

/**
 * Reads a whole body within the attempt's deadline (the stream is bound to it), up to `limit`
 * bytes: more than that is not an answer we can use, or, when quoted, not worth quoting.
 */
export async function readBody(stream: ByteStream, bound: BodyBound): Promise<Buffer> {
	const parts: Buffer[] = [];
	let size = 0;
	try {
		for await (const chunk of stream) {
			const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
			bound.alive();
			parts.push(buffer);
			size += buffer.length;
			if (size < bound.limit) continue;
			if (bound.quote) break;
			throw new GatewayError({ kind: 'protocol', headline: `${bound.what} failed: the answer is larger than ${Math.round(bound.limit / 1024 / 1024)} MiB`, ...bound.extra });
		}
	} catch (error) {
		if (!bound.quote) throw error instanceof GatewayError ? error : bound.failure(error);
	} finally {
		if (!stream.readableEnded) stream.destroy();
	}
	return Buffer.concat(parts);
}
