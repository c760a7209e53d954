/**
 * The exits: every way data leaves a node, masked with the credential's secret policy, in one
 * place. Each node's `execute` runs inside `withMaskedExits`, which reads the policy first
 * (reading the credential sends no request) and hands the node a context whose exits mask:
 * - the output items (json, and the binary metadata: file name, extension, directory);
 * - the live stream to the chat client (`sendChunk`), across chunk boundaries;
 * - log lines (message and metadata), custom data and messages to the editor;
 * - any error the node throws (input checks included), through the edge.
 * So no path of a node, present or future, can forget to mask: it has no other way out.
 */
import type { IBinaryKeyData, IDataObject, IExecuteFunctions, INodeExecutionData, Logger } from 'n8n-workflow';

import { asNodeError, isOwnNodeError } from './edge';
import { StreamMasker, noSecretsMasker } from '../credential/secrets';
import type { SecretMasker } from '../credential/secrets';
import { CREDENTIAL_TYPE, secretPolicyOf } from '../credential/settings';

type ExecuteRun = (ctx: IExecuteFunctions) => Promise<INodeExecutionData[][]>;

/** Runs a node's execute with every exit masked; `run` gets the masking context. */
export async function withMaskedExits(ctx: IExecuteFunctions, run: ExecuteRun): Promise<INodeExecutionData[][]> {
	// Each credential is read once: the policy's read serves the node's too.
	const reads = new Map<string, Promise<unknown>>();
	const credentials = async (type: string) => {
		if (!reads.has(type)) reads.set(type, ctx.getCredentials(type));
		return await reads.get(type);
	};
	const masker = await credentials(CREDENTIAL_TYPE).then(
		(raw) => secretPolicyOf(raw as IDataObject),
		// No credential to read: the node fails on it later; until then, the patterns.
		() => noSecretsMasker,
	);
	try {
		const output = await run(maskingContext(ctx, masker, credentials));
		return output.map((items) => maskItems(items, masker));
	} catch (error) {
		throw maskError(ctx, error, masker);
	}
}

/** Output items with every json string and every binary's metadata masked (the file bytes stay). */
export function maskItems(items: INodeExecutionData[], masker: SecretMasker): INodeExecutionData[] {
	return items.map((item) => {
		const masked: INodeExecutionData = { ...item, json: masker.maskDeep(item.json) };
		if (item.binary) masked.binary = maskBinary(item.binary, masker);
		return masked;
	});
}

function maskBinary(binary: IBinaryKeyData, masker: SecretMasker): IBinaryKeyData {
	const out: IBinaryKeyData = {};
	for (const [key, file] of Object.entries(binary)) {
		const copy = { ...file };
		for (const field of ['fileName', 'fileExtension', 'directory', 'mimeType'] as const) {
			if (typeof copy[field] === 'string') copy[field] = masker.mask(copy[field]);
		}
		out[key] = copy;
	}
	return out;
}

/** An error on its way out: n8n errors masked in place (message, description, context, stack), anything else through the edge. */
export function maskError(ctx: IExecuteFunctions, error: unknown, masker: SecretMasker): Error {
	if (!isOwnNodeError(error)) return asNodeError(ctx.getNode(), error, undefined, masker);
	const originalMessage = error.message;
	error.message = masker.mask(error.message);
	if (error.description) error.description = masker.mask(error.description);
	if (error.context) error.context = masker.maskDeep(error.context as IDataObject);
	if (Array.isArray(error.messages)) error.messages = error.messages.map((text) => masker.mask(text));
	if (error.stack) error.stack = masker.mask(error.stack.replace(originalMessage, error.message));
	return error;
}

const LOG_LEVELS = ['error', 'warn', 'info', 'debug', 'verbose'] as const;

function maskedLogger(logger: Logger, masker: SecretMasker): Logger {
	// A new object: n8n's logger has read-only methods.
	const masked: Record<string, unknown> = {};
	for (const level of LOG_LEVELS) {
		const write = (logger as unknown as Record<string, unknown>)[level];
		if (typeof write !== 'function') continue;
		masked[level] = (message: string, meta?: object) =>
			(write as (message: string, meta?: object) => void).call(logger, masker.mask(message), meta === undefined ? undefined : masker.maskDeep(meta));
	}
	return masked as unknown as Logger;
}

type CustomData = NonNullable<IExecuteFunctions['customData']>;

function maskedCustomData(data: CustomData, masker: SecretMasker): CustomData {
	return {
		...data,
		set: (key: string, value: string) => data.set(key, masker.mask(value)),
		setAll: (values: Record<string, string>) => data.setAll(masker.maskDeep(values)),
		get: (key: string) => data.get(key),
		getAll: () => data.getAll(),
	};
}

type SendChunk = IExecuteFunctions['sendChunk'];

/** n8n's live stream, masked per item across chunks: a secret split over two chunks is masked too. */
function maskedSendChunk(send: SendChunk, masker: SecretMasker): SendChunk {
	const streams = new Map<number, StreamMasker>();
	// n8n's sendChunk returns a promise although it is typed void; so does this one.
	const forward = async (type: Parameters<SendChunk>[0], itemIndex: number, content?: IDataObject | string) => await Promise.resolve(send(type, itemIndex, content));
	const masked = async (type: Parameters<SendChunk>[0], itemIndex: number, content?: IDataObject | string): Promise<void> => {
		if (type === 'item' && typeof content === 'string') {
			const stream = streams.get(itemIndex) ?? new StreamMasker(masker);
			streams.set(itemIndex, stream);
			const shown = stream.push(content);
			if (shown !== '') await forward(type, itemIndex, shown);
			return;
		}
		if (type === 'end' || type === 'error') {
			// What waited for the rest of a possible secret goes out first.
			const rest = streams.get(itemIndex)?.flush() ?? '';
			streams.delete(itemIndex);
			if (rest !== '') await forward('item', itemIndex, rest);
		}
		if (type === 'begin') streams.delete(itemIndex);
		await forward(type, itemIndex, content === undefined ? undefined : masker.maskDeep(content));
	};
	return masked as unknown as SendChunk;
}

/** The node's context with masked exits; everything else is the context itself. */
function maskingContext(ctx: IExecuteFunctions, masker: SecretMasker, credentials: (type: string) => Promise<unknown>): IExecuteFunctions {
	const overrides = new Map<PropertyKey, unknown>();
	overrides.set('getCredentials', credentials);
	if (ctx.logger) overrides.set('logger', maskedLogger(ctx.logger, masker));
	if (ctx.customData) overrides.set('customData', maskedCustomData(ctx.customData, masker));
	if (typeof ctx.sendChunk === 'function') overrides.set('sendChunk', maskedSendChunk(ctx.sendChunk.bind(ctx), masker));
	if (typeof ctx.sendMessageToUI === 'function') {
		const sendMessage = ctx.sendMessageToUI.bind(ctx) as (...messages: unknown[]) => void;
		overrides.set('sendMessageToUI', (...messages: unknown[]) => sendMessage(...messages.map((message) => masker.maskDeep(message))));
	}
	// The proxy's target only inherits from the context: n8n's context has read-only properties
	// (`logger`), which a proxy of the context itself would have to return unchanged.
	return new Proxy(Object.create(ctx) as IExecuteFunctions, {
		get(_target, property) {
			if (overrides.has(property)) return overrides.get(property);
			const value = Reflect.get(ctx, property, ctx) as unknown;
			// n8n's context keeps private state: its methods run on the context itself.
			return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(ctx) : value;
		},
	});
}
