/**
 * A real-HTTP execution context for integration tests: the subset of n8n's IExecuteFunctions our
 * nodes use, with requests sent by n8n's own request function (from the pinned n8n packages), so
 * tests exercise the same wire path n8n does. The nodes read the credential themselves
 * (`getCredentials`, counted in `credentialReads`) and set the Authorization header on each
 * request (recorded in `requests`); `httpRequestWithAuthentication` stays for code that still
 * uses it, authenticated by our credential class.
 */
import * as path from 'path';
import { NodeApiError } from 'n8n-workflow';
import type {
	IBinaryData,
	ICredentialDataDecryptedObject,
	IDataObject,
	IExecuteFunctions,
	IHttpRequestOptions,
	INode,
	INodeExecutionData,
} from 'n8n-workflow';

import { GatewayApi } from '../../credentials/GatewayApi.credentials';

type N8nHttpRequest = (options: IHttpRequestOptions) => Promise<unknown>;

// n8n's own HTTP request implementation (what httpRequest/httpRequestWithAuthentication call).
const n8nHttpRequest: N8nHttpRequest = require(
	path.join(path.dirname(require.resolve('@n8n/backend-network')), 'http/axios/request.js'),
).httpRequest;
// What n8n's httpRequest helper does with a failure: marks it and throws it as it is (no NodeApiError).
const markHttpRequestError: (error: unknown) => unknown = require('@n8n/backend-network').markHttpRequestError;

export interface GatewayCredentialData {
	apiKey: string;
	baseUrl: string;
	groupMultiplier?: number;
	/** JSON object text, as the credential's Custom Headers field holds it. */
	customHeaders?: string;
}

export interface ContextOptions {
	/** Node parameters, the same for every item, or per item. */
	parameters: IDataObject | ((itemIndex: number) => IDataObject);
	/** Input items; default one empty item. */
	items?: INodeExecutionData[];
	credentials: GatewayCredentialData;
	continueOnFail?: boolean;
	/** Simulates a run from a Chat Trigger / streaming webhook. */
	streaming?: boolean;
	abortSignal?: AbortSignal;
	nodeName?: string;
	nodeType?: string;
}

export interface SentChunk {
	type: string;
	itemIndex: number;
	content?: IDataObject | string;
}

export interface StoredBinary {
	binary: IBinaryData;
	/** Whether the node handed the file over as a stream rather than a buffer. */
	streamed: boolean;
}

export interface TestContext {
	ctx: IExecuteFunctions;
	chunks: SentChunk[];
	binaries: StoredBinary[];
	/** Every request as our code asked for it (with the headers it set, Authorization included). */
	requests: IHttpRequestOptions[];
	/** The credential types read with getCredentials, one entry per read. */
	credentialReads: string[];
}

function lookup(source: IDataObject, dotted: string): unknown {
	let value: unknown = source;
	for (const part of dotted.split('.')) {
		if (value === null || typeof value !== 'object') return undefined;
		value = (value as IDataObject)[part];
	}
	return value;
}

async function collect(stream: AsyncIterable<Buffer | string>): Promise<Buffer> {
	const parts: Buffer[] = [];
	for await (const chunk of stream) parts.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
	return Buffer.concat(parts);
}

export function createExecuteContext(options: ContextOptions): TestContext {
	const node: INode = {
		id: 'test-node-id',
		name: options.nodeName ?? 'Gateway Node',
		type: options.nodeType ?? 'n8n-nodes-model-gateway.test',
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
	};
	const items = options.items ?? [{ json: {} }];
	const credentialType = new GatewayApi();
	const chunks: SentChunk[] = [];
	const binaries: StoredBinary[] = [];
	const requests: IHttpRequestOptions[] = [];
	const credentialReads: string[] = [];
	const parametersOf = (itemIndex: number) =>
		typeof options.parameters === 'function' ? options.parameters(itemIndex) : options.parameters;

	const send = async (requestOptions: IHttpRequestOptions) => {
		requests.push(requestOptions);
		try {
			return await n8nHttpRequest({ ...requestOptions });
		} catch (error) {
			throw markHttpRequestError(error);
		}
	};
	const sendAuthenticated = async (requestOptions: IHttpRequestOptions) => {
		try {
			return await send(requestOptions);
		} catch (error) {
			// n8n wraps every failure of an authenticated request like this.
			throw new NodeApiError(node, error as never);
		}
	};

	const ctx = {
		getNode: () => node,
		getInputData: () => items,
		continueOnFail: () => options.continueOnFail ?? false,
		getExecutionCancelSignal: () => options.abortSignal,
		getCredentials: async (type: string) => {
			credentialReads.push(type);
			return { groupMultiplier: 1, ...options.credentials } as unknown as IDataObject;
		},
		getNodeParameter: (name: string, itemIndex: number, fallback?: unknown, extra?: { extractValue?: boolean }) => {
			let value = lookup(parametersOf(itemIndex), name);
			if (value === undefined) {
				if (fallback === undefined) throw new Error(`Could not get parameter "${name}"`);
				value = fallback;
			}
			if (extra?.extractValue && value && typeof value === 'object' && '__rl' in (value as IDataObject)) {
				value = (value as IDataObject).value;
			}
			return value;
		},
		isStreaming: () => options.streaming ?? false,
		sendChunk: (type: string, itemIndex: number, content?: IDataObject | string) => {
			chunks.push({ type, itemIndex, content });
		},
		logger: { debug() {}, info() {}, warn() {}, error() {} },
		helpers: {
			httpRequest: async (requestOptions: IHttpRequestOptions) => await send(requestOptions),
			async httpRequestWithAuthentication(_type: string, requestOptions: IHttpRequestOptions) {
				if (options.abortSignal) requestOptions.abortSignal = options.abortSignal;
				const authenticated = await credentialType.authenticate(
					{ groupMultiplier: 1, ...options.credentials } as unknown as ICredentialDataDecryptedObject,
					requestOptions,
				);
				return await sendAuthenticated(authenticated);
			},
			async prepareBinaryData(data: Buffer | AsyncIterable<Buffer>, fileName?: string, mimeType?: string) {
				const streamed = !Buffer.isBuffer(data);
				const bytes = Buffer.isBuffer(data) ? data : await collect(data);
				const binary: IBinaryData = {
					data: bytes.toString('base64'),
					mimeType: mimeType ?? 'application/octet-stream',
					fileName,
					fileExtension: fileName?.includes('.') ? fileName.split('.').pop() : undefined,
					fileSize: `${bytes.length} B`,
					bytes: bytes.length,
				};
				binaries.push({ binary, streamed });
				return binary;
			},
		},
	};
	return { ctx: ctx as unknown as IExecuteFunctions, chunks, binaries, requests, credentialReads };
}

/** Decodes an item's binary property back to bytes. */
export function binaryBytes(item: INodeExecutionData, property = 'data'): Buffer {
	const binary = item.binary?.[property];
	if (!binary) throw new Error(`item has no binary property "${property}"`);
	return Buffer.from(binary.data, 'base64');
}
