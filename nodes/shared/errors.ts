/**
 * Gateway failures -> n8n errors in plain words. Relays of this kind answer errors in several
 * shapes (OpenAI style, their own task style, the native messages style, the plant store's, an
 * HTML page from a proxy, or nothing at all); all of them end up as one message that names the
 * cause and quotes what the gateway said, with any key scrubbed out.
 */
import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { INode, JsonObject } from 'n8n-workflow';

export type GatewayErrorKind =
	| 'authentication'
	| 'quota'
	| 'rate_limit'
	| 'unknown_model'
	| 'bad_request'
	| 'not_found'
	| 'server'
	| 'other';

export interface ParsedErrorBody {
	message?: string;
	code?: string | number;
	type?: string;
	/** The body was an HTML page (a proxy's error page), summarised in `message`. */
	html?: boolean;
}

const KEY_PATTERN = /sk-[A-Za-z0-9_\-.]{3,}/g;
const BEARER_PATTERN = /(Bearer\s+)[^\s"',;]+/gi;

/** Removes the key (and anything shaped like a key or a bearer token) from text we show. */
export function scrubSecrets(text: string, apiKey?: string): string {
	let out = String(text ?? '');
	if (apiKey && apiKey.length >= 4) out = out.split(apiKey).join('sk-***');
	return out.replace(KEY_PATTERN, 'sk-***').replace(BEARER_PATTERN, '$1***');
}

function summariseHtml(html: string): string {
	const pick = (tag: string) => {
		const match = new RegExp(`<${tag}[^>]*>([\\s\\S]*?)</${tag}>`, 'i').exec(html);
		return match ? match[1].replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim() : '';
	};
	const summary = pick('title') || pick('h1');
	return summary ? `an HTML error page ("${summary.slice(0, 120)}")` : 'an HTML page instead of JSON';
}

function asText(value: unknown): string | undefined {
	if (typeof value === 'string' && value.trim() !== '') return value.trim();
	return undefined;
}

/** Reads the message, code and type from any of the error body shapes these gateways use. */
export function parseErrorBody(bodyText: string, contentType = ''): ParsedErrorBody {
	const text = (bodyText ?? '').trim();
	if (text === '') return {};
	if (/html/i.test(contentType) || /^<(!doctype|html|head|body)/i.test(text)) {
		return { message: summariseHtml(text), html: true };
	}
	let body: unknown;
	try {
		body = JSON.parse(text);
	} catch {
		return { message: text.length > 300 ? `${text.slice(0, 300)}…` : text };
	}
	if (typeof body !== 'object' || body === null) return { message: String(body) };
	const record = body as Record<string, unknown>;
	const nested = record.error;
	if (typeof nested === 'object' && nested !== null) {
		// {"error":{"message","type","code"}} and {"type":"error","error":{"type","message"}}
		const error = nested as Record<string, unknown>;
		return {
			message: asText(error.message) ?? asText(record.message),
			code: (error.code as string | number | undefined) ?? undefined,
			type: asText(error.type) ?? asText(record.type),
		};
	}
	if (typeof nested === 'string') return { message: asText(record.message) ?? nested };
	// {"error":<int>,"message"} (plant store) and {"code","message","data"} (task endpoints)
	const code = typeof nested === 'number' ? nested : (record.code as string | number | undefined);
	return {
		message: asText(record.message) ?? asText(record.detail) ?? asText(record.msg),
		code: code ?? undefined,
		type: asText(record.type),
	};
}

export function classifyError(status: number | undefined, parsed: ParsedErrorBody): GatewayErrorKind {
	const code = String(parsed.code ?? '').toLowerCase();
	const words = `${code} ${parsed.type ?? ''} ${parsed.message ?? ''}`.toLowerCase();
	if (code === 'model_not_found' || /model_not_found|no available channel|unknown model|model .*not (found|exist)/.test(words)) {
		return 'unknown_model';
	}
	if (status === 401 || /authentication_error|invalid_api_key|invalid token/.test(words)) return 'authentication';
	if (status === 429) return 'rate_limit';
	if (status === 402 || /quota|insufficient|balance|billing/.test(words)) return 'quota';
	if (status === 403) return 'quota';
	if (status === 404) return 'not_found';
	if (status !== undefined && status >= 500) return 'server';
	if (status !== undefined && status >= 400) return 'bad_request';
	return 'other';
}

const HEADLINES: Record<GatewayErrorKind, string> = {
	authentication: 'Authentication failed: the gateway refused the API key',
	quota: 'No quota: the gateway refused the request for lack of quota or permission',
	rate_limit: 'Rate limited: the gateway asked to slow down, and retrying did not help',
	unknown_model: 'Unknown model: the gateway has no channel for this model',
	bad_request: 'Bad request: the gateway refused the request',
	not_found: 'Not found',
	server: 'The gateway failed to answer',
	other: 'The gateway returned an error',
};

const HINTS: Partial<Record<GatewayErrorKind, string>> = {
	authentication: 'Check the API Key of the Model Gateway credential.',
	quota: "Top up the account or ask the gateway's administrator for access to this model.",
	rate_limit: 'Lower the concurrency option, or try again later.',
	unknown_model: 'Pick a model from the list, or check the id for typos.',
	server: 'This is usually temporary; try again later.',
};

export interface GatewayErrorDetails {
	status?: number;
	kind: GatewayErrorKind;
	message: string;
	description?: string;
	gatewayMessage?: string;
	gatewayCode?: string | number;
}

/** Builds the plain-words message for an HTTP error answer. */
export function describeHttpError(
	status: number,
	bodyText: string,
	contentType: string,
	apiKey?: string,
): GatewayErrorDetails {
	const parsed = parseErrorBody(bodyText, contentType);
	const kind = classifyError(status, parsed);
	const quoted = parsed.message ? scrubSecrets(parsed.message, apiKey) : undefined;
	const codePart = parsed.code !== undefined && parsed.code !== '' ? ` (code ${parsed.code})` : '';
	let message = `${HEADLINES[kind]} (HTTP ${status})`;
	if (quoted) message += `: ${parsed.html ? 'it answered with ' + quoted : `"${quoted}"`}${codePart}`;
	else message += status === 429 ? '' : ': the gateway sent no details';
	return {
		status,
		kind,
		message,
		description: HINTS[kind],
		gatewayMessage: quoted,
		gatewayCode: parsed.code,
	};
}

/**
 * A temporary link on another host (a CDN or a signed object-store URL) that answers 403, 404 or
 * 410 has expired or its file is gone: said in those words, since "no quota" or "not found" would
 * send the user looking in the wrong place.
 */
export function isExpiredLinkStatus(status: number): boolean {
	return status === 403 || status === 404 || status === 410;
}

export function describeExpiredLink(details: GatewayErrorDetails, link: string, what: string): GatewayErrorDetails {
	let host = 'the file host';
	try {
		host = `the file host ${new URL(link).host}`;
	} catch {
		// keep the generic wording
	}
	return {
		...details,
		kind: 'other',
		message: `${what} failed: the link has expired (${host} answered HTTP ${details.status})`,
		description:
			'Links to generated files are temporary. Generate the file again to get a new link, and download it soon after it is generated.',
	};
}

/** The n8n error for an HTTP error answer. Only scrubbed, parsed fields reach n8n. */
export function gatewayHttpError(
	node: INode,
	details: GatewayErrorDetails,
	itemIndex?: number,
	extra: JsonObject = {},
): NodeApiError {
	const response: JsonObject = {
		kind: details.kind,
		httpCode: details.status ?? null,
		gatewayMessage: details.gatewayMessage ?? null,
		gatewayCode: details.gatewayCode ?? null,
		...extra,
	};
	const error = new NodeApiError(node, response, {
		message: details.message,
		description: details.description,
		httpCode: details.status !== undefined ? String(details.status) : undefined,
		itemIndex,
	});
	return Object.keys(extra).length ? attachItemFields(error, extra) : error;
}

/** Network failures carry the request configuration (with its headers); only the cause is kept. */
export function describeNetworkError(error: unknown, what: string, apiKey?: string): string {
	const err = error as { code?: string; message?: string; name?: string };
	const code = err?.code ?? '';
	if (err?.name === 'AbortError' || code === 'ERR_CANCELED') return `${what} was cancelled`;
	if (code === 'ECONNABORTED' || code === 'ETIMEDOUT' || /timeout/i.test(err?.message ?? '')) {
		return `${what} timed out: the gateway did not answer in time`;
	}
	if (code === 'ECONNREFUSED') return `${what} failed: the connection was refused (is the Base URL right?)`;
	if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `${what} failed: the host name could not be resolved (is the Base URL right?)`;
	if (code === 'ECONNRESET' || code === 'EPIPE' || /socket hang up|aborted/i.test(err?.message ?? '')) {
		return `${what} failed: the connection was dropped before the answer was complete`;
	}
	const detail = scrubSecrets(err?.message ?? String(error), apiKey).slice(0, 200);
	return `${what} failed: ${detail}`;
}

export function isRetryableNetworkError(error: unknown): boolean {
	const err = error as { code?: string; message?: string };
	return (
		['ECONNRESET', 'EPIPE', 'ECONNREFUSED', 'ETIMEDOUT', 'EAI_AGAIN'].includes(err?.code ?? '') ||
		/socket hang up/i.test(err?.message ?? '')
	);
}

export function isAbortError(error: unknown): boolean {
	const err = error as { code?: string; name?: string };
	return err?.name === 'AbortError' || err?.code === 'ERR_CANCELED' || err?.name === 'CanceledError';
}

export function networkError(node: INode, message: string, itemIndex?: number): NodeOperationError {
	return new NodeOperationError(node, message, { itemIndex });
}

/** Fields that an error item carries on Continue On Fail (e.g. a video's task id). */
export function attachItemFields<E extends Error>(error: E, fields: Record<string, unknown>): E {
	const target = error as E & { context?: Record<string, unknown> };
	target.context = { ...(target.context ?? {}), itemFields: { ...(itemFieldsOf(error) ?? {}), ...fields } };
	return error;
}

export function itemFieldsOf(error: unknown): Record<string, unknown> | undefined {
	const context = (error as { context?: { itemFields?: Record<string, unknown> } })?.context;
	return context?.itemFields;
}
