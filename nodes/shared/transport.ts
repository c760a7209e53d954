/**
 * The one way every node talks to the gateway: joins the base URL and the path, authenticates
 * through the n8n credential, applies a timeout and the execution's cancel signal, retries what
 * is worth retrying with one backoff shared by the whole batch, and turns every failure into a
 * plain n8n error that never contains the key.
 */
import { NodeOperationError } from 'n8n-workflow';
import type {
	ICredentialDataDecryptedObject,
	ICredentialsDecrypted,
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	ILoadOptionsFunctions,
	INode,
	JsonObject,
} from 'n8n-workflow';

import {
	describeExpiredLink,
	describeHttpError,
	describeNetworkError,
	gatewayHttpError,
	isAbortError,
	isExpiredLinkStatus,
	isRetryableNetworkError,
	networkError,
	scrubSecrets,
} from './errors';
import type { GatewayErrorDetails } from './errors';
import { DEFAULT_RETRY_POLICY, isRetryableStatus, isSafeToRepeat, parseRetryAfter, retryDelayMs } from './retry';
import type { RetryPolicy } from './retry';
import { BackoffGate, CancelledError, pause } from './timing';
import { isHttpUrl, isSameOrigin, joinUrl, normalizeBaseUrl } from './url';

export const CREDENTIAL_TYPE = 'gatewayApi';

type GatewayContext = IExecuteFunctions | ILoadOptionsFunctions;

/** What a readable HTTP body offers without importing Node's stream module (n8n's rules). */
export interface ByteStream extends AsyncIterable<Buffer | Uint8Array | string> {
	read(size?: number): Buffer | string | null;
	unshift(chunk: Buffer): void;
	once(event: string, listener: (...args: unknown[]) => void): this;
	removeListener(event: string, listener: (...args: unknown[]) => void): this;
	destroy(error?: Error): void;
	readonly readableEnded?: boolean;
}

export interface GatewayCall {
	method?: IHttpRequestMethods;
	/** An endpoint path such as `/v1/models`, joined to the credential's base URL. */
	path: string;
	/** An object is sent as JSON; a string is sent as it is (already-serialised JSON). */
	body?: IDataObject | string;
	itemIndex?: number;
	timeoutMs?: number;
	/** Retry tuning for this call, or false for a single attempt. */
	retry?: Partial<RetryPolicy> | false;
	/** What the call does, for messages: "Creating the plant". */
	what?: string;
	/** Fields an error item keeps on Continue On Fail (e.g. a task id). */
	errorFields?: JsonObject;
}

export interface GatewayResponse<B> {
	status: number;
	headers: Record<string, unknown>;
	body: B;
}

interface RawResponse {
	statusCode: number;
	headers: Record<string, unknown>;
	body: unknown;
}

const DEFAULT_TIMEOUT_MS = 300_000;
const ERROR_BODY_LIMIT = 64 * 1024;

function header(headers: Record<string, unknown>, name: string): string {
	const value = headers?.[name] ?? headers?.[name.toLowerCase()];
	return value === undefined || value === null ? '' : String(value);
}

function bodyText(body: unknown): string {
	if (body === undefined || body === null) return '';
	if (Buffer.isBuffer(body)) return body.toString('utf8');
	if (body instanceof ArrayBuffer) return Buffer.from(body).toString('utf8');
	if (typeof body === 'string') return body;
	return JSON.stringify(body);
}

/** Reads at most `limit` bytes of an error answer that arrived as a stream. */
async function readLimited(stream: ByteStream, limit = ERROR_BODY_LIMIT): Promise<string> {
	const parts: Buffer[] = [];
	let size = 0;
	try {
		for await (const chunk of stream) {
			const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
			parts.push(buffer);
			size += buffer.length;
			if (size >= limit) break;
		}
	} catch {
		// a dropped error body still leaves the status code to report
	} finally {
		stream.destroy();
	}
	return Buffer.concat(parts).toString('utf8').slice(0, limit);
}

/**
 * The gateway as one execution sees it: credential values read once, one backoff gate shared by
 * all items, and the execution's cancel signal.
 */
export class GatewayClient {
	readonly gate = new BackoffGate();

	private constructor(
		private readonly ctx: GatewayContext,
		readonly baseUrl: string,
		readonly groupMultiplier: number,
		private readonly apiKey: string,
		/**
		 * The credential as read once per execution, handed back on every request: without it n8n
		 * reads it from its database and decrypts it again for each request (about a millisecond
		 * of the event loop each, which 100 concurrent items feel).
		 */
		private readonly credentialsDecrypted: ICredentialsDecrypted,
	) {}

	/** Reads and checks the credential before any request is sent. */
	static async create(ctx: GatewayContext): Promise<GatewayClient> {
		const credentials = await ctx.getCredentials(CREDENTIAL_TYPE);
		const apiKey = String(credentials.apiKey ?? '').trim();
		const baseUrl = normalizeBaseUrl(String(credentials.baseUrl ?? ''));
		if (!apiKey.startsWith('sk-')) {
			throw new NodeOperationError(
				ctx.getNode(),
				'The API key of the Model Gateway credential must begin with "sk-"',
				{ description: 'Open the credential and paste the gateway token (it is not shown here).' },
			);
		}
		if (!isHttpUrl(baseUrl)) {
			throw new NodeOperationError(
				ctx.getNode(),
				'The Base URL of the Model Gateway credential must look like http(s)://host[:port][/path]',
			);
		}
		const multiplier = Number(credentials.groupMultiplier ?? 1);
		const reference = ctx.getNode().credentials?.[CREDENTIAL_TYPE];
		const decrypted: ICredentialsDecrypted = {
			id: reference?.id ?? '',
			name: reference?.name ?? '',
			type: CREDENTIAL_TYPE,
			data: credentials as ICredentialDataDecryptedObject,
		};
		return new GatewayClient(ctx, baseUrl, Number.isFinite(multiplier) && multiplier >= 0 ? multiplier : 1, apiKey, decrypted);
	}

	get node(): INode {
		return this.ctx.getNode();
	}

	get cancelSignal(): AbortSignal | undefined {
		const ctx = this.ctx as Partial<IExecuteFunctions>;
		return typeof ctx.getExecutionCancelSignal === 'function' ? ctx.getExecutionCancelSignal() : undefined;
	}

	url(path: string): string {
		return joinUrl(this.baseUrl, path);
	}

	/** Text with the key removed, for anything that may be shown or logged. */
	scrub(text: string): string {
		return scrubSecrets(text, this.apiKey);
	}

	/** Sends a JSON request and returns the parsed JSON answer. */
	async json<T = IDataObject>(call: GatewayCall): Promise<T> {
		const response = await this.text(call);
		if (response.body.trim() === '') return {} as T;
		try {
			return JSON.parse(response.body) as T;
		} catch {
			const details = describeHttpError(response.status, response.body, header(response.headers, 'content-type'), this.apiKey);
			throw gatewayHttpError(
				this.node,
				{ ...details, kind: 'other', message: `The gateway answered HTTP ${response.status} with something that is not JSON: ${details.gatewayMessage ?? 'an empty body'}` },
				call.itemIndex,
				call.errorFields,
			);
		}
	}

	/** Sends a request and returns the answer as text (callers that must parse it themselves). */
	async text(call: GatewayCall): Promise<GatewayResponse<string>> {
		const response = await this.send(call, 'arraybuffer', true);
		return { status: response.statusCode, headers: response.headers, body: bodyText(response.body) };
	}

	/** Sends a request and returns the open answer stream (server-sent events). */
	async stream(call: GatewayCall): Promise<GatewayResponse<ByteStream>> {
		const response = await this.send(call, 'stream', true);
		return { status: response.statusCode, headers: response.headers, body: response.body as ByteStream };
	}

	/**
	 * Opens a download. The key goes only to links on the gateway's own origin; a link anywhere
	 * else (a CDN) is fetched without it, and redirects never carry it to another host. Such a
	 * link that answers 403, 404 or 410 is reported as expired.
	 */
	async download(link: string, call: Omit<GatewayCall, 'path' | 'method' | 'body'>): Promise<GatewayResponse<ByteStream>> {
		const authenticated = isSameOrigin(link, this.baseUrl);
		const response = await this.send({ ...call, path: link, method: 'GET' }, 'stream', authenticated, !authenticated);
		return { status: response.statusCode, headers: response.headers, body: response.body as ByteStream };
	}

	private async send(
		call: GatewayCall,
		encoding: 'arraybuffer' | 'stream',
		authenticated: boolean,
		fromFileHost = false,
	): Promise<RawResponse> {
		const policy: RetryPolicy = call.retry === false ? { ...DEFAULT_RETRY_POLICY, maxRetries: 0 } : { ...DEFAULT_RETRY_POLICY, ...call.retry };
		const what = call.what ?? 'The gateway request';
		const signal = this.cancelSignal;
		for (let attempt = 0; ; attempt++) {
			await this.gate.wait(signal).catch((error) => this.rethrowCancel(error, what, call));
			let response: RawResponse;
			try {
				response = await this.attempt(call, encoding, authenticated);
			} catch (error) {
				if (isAbortError(error) || signal?.aborted) this.rethrowCancel(new CancelledError(), what, call);
				const cause = this.rootCause(error);
				if (attempt < policy.maxRetries && isRetryableNetworkError(cause) && isSafeToRepeat(policy, undefined, (cause as { code?: string })?.code)) {
					await pause(retryDelayMs(attempt, undefined, policy), signal).catch((e) => this.rethrowCancel(e, what, call));
					continue;
				}
				throw networkError(this.node, describeNetworkError(cause, what, this.apiKey), call.itemIndex);
			}
			if (response.statusCode < 400) return response;

			const text = encoding === 'stream' ? await readLimited(response.body as ByteStream) : bodyText(response.body);
			const details = describeHttpError(response.statusCode, text, header(response.headers, 'content-type'), this.apiKey);
			if (attempt < policy.maxRetries && isRetryableStatus(response.statusCode, details.kind) && isSafeToRepeat(policy, response.statusCode)) {
				const retryAfter = parseRetryAfter(response.headers?.['retry-after'], Date.now());
				if (retryAfter === undefined || retryAfter <= policy.maxRetryAfterMs) {
					const delay = retryDelayMs(attempt, retryAfter, policy);
					// A 429 is about the account, not this item: the whole batch holds back.
					if (response.statusCode === 429) this.gate.holdFor(delay);
					await pause(delay, signal).catch((e) => this.rethrowCancel(e, what, call));
					continue;
				}
			}
			if (fromFileHost && isExpiredLinkStatus(response.statusCode)) {
				throw this.httpError(describeExpiredLink(details, call.path, what), call);
			}
			throw this.httpError(details, call);
		}
	}

	private async attempt(call: GatewayCall, encoding: 'arraybuffer' | 'stream', authenticated: boolean): Promise<RawResponse> {
		const isJsonBody = call.body !== undefined;
		const options: IHttpRequestOptions = {
			method: call.method ?? (isJsonBody ? 'POST' : 'GET'),
			url: /^https?:\/\//i.test(call.path) ? call.path : this.url(call.path),
			headers: isJsonBody ? { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' } : {},
			body: typeof call.body === 'string' ? call.body : call.body !== undefined ? JSON.stringify(call.body) : undefined,
			encoding,
			json: false,
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			timeout: call.timeoutMs ?? DEFAULT_TIMEOUT_MS,
			abortSignal: this.cancelSignal,
			sendCredentialsOnCrossOriginRedirect: false,
		};
		if (options.body === undefined) delete options.body;
		const response = authenticated
			? await this.ctx.helpers.httpRequestWithAuthentication.call(this.ctx, CREDENTIAL_TYPE, options, {
					credentialsDecrypted: this.credentialsDecrypted,
				})
			: await this.ctx.helpers.httpRequest(options);
		return response as RawResponse;
	}

	httpError(details: GatewayErrorDetails, call: Pick<GatewayCall, 'itemIndex' | 'errorFields'>) {
		return gatewayHttpError(this.node, details, call.itemIndex, call.errorFields);
	}

	/** n8n wraps network failures; the code that says what happened is on the cause. */
	private rootCause(error: unknown): unknown {
		let current = error as { cause?: unknown; code?: string };
		for (let depth = 0; depth < 4 && current?.cause && !current.code; depth++) {
			current = current.cause as { cause?: unknown; code?: string };
		}
		return current ?? error;
	}

	private rethrowCancel(error: unknown, what: string, call: GatewayCall): never {
		if (error instanceof CancelledError || isAbortError(error)) {
			throw networkError(this.node, `${what} was cancelled`, call.itemIndex);
		}
		throw error;
	}
}
