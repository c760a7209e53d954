/**
 * The edge: where a failure leaves our code. Any error (a GatewayError, an input check's n8n
 * error, anything unexpected) becomes an n8n error or a Continue On Fail item here, and every
 * text in it is masked here, once, before n8n logs it or stores it in the execution. What a run
 * adds to the error of the item that failed it (the other items' paid work) comes in as input: the
 * n8n error is complete when it leaves here, never edited afterwards.
 */
import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import type { IDataObject, INode, INodeExecutionData, JsonObject } from 'n8n-workflow';

import { GatewayError, itemFieldsOf } from './errors';
import { quoteStart } from './errorBody';
import { SecretMasker, noSecretsMasker } from '../credential/secrets';

export type NodeError = NodeApiError | NodeOperationError;

/** What a run adds to the error of the item that failed it: words after the error's own, and data beside its fields. */
export interface RunAddendum {
	text?: string;
	fields?: IDataObject;
}

/** n8n errors, which our code builds itself (input checks): no gateway text, already in final words. */
export function isOwnNodeError(error: unknown): error is NodeError {
	return error instanceof NodeApiError || error instanceof NodeOperationError;
}

/** The structured data n8n keeps with the error (and the error item shows), masked. */
function errorData(error: GatewayError, masker: SecretMasker, added: IDataObject = {}): JsonObject {
	return masker.maskDeep({
		kind: error.kind,
		httpCode: error.status ?? null,
		// Masked whole, then shortened: a cut never leaves part of a secret.
		gatewayMessage: error.gatewayMessage === undefined ? null : quoteStart(masker.mask(error.gatewayMessage)),
		gatewayCode: error.gatewayCode ?? null,
		mayHaveActed: error.mayHaveActed,
		...error.fields,
		...added,
	}) as JsonObject;
}

/** Texts joined by a space, or undefined when there is none. */
const joined = (...texts: Array<string | undefined>) => texts.filter(Boolean).join(' ') || undefined;

/**
 * The description: the hint, the item's task id whole when neither the message nor the hint holds
 * it (a headline shortens a long id): a paid task is always findable in its error; then what the
 * run adds.
 */
function descriptionOf(error: GatewayError, message: string, masker: SecretMasker, added: string | undefined): string | undefined {
	const hint = error.hint ? masker.mask(error.hint) : undefined;
	const taskId = error.fields.task_id;
	const shownId = typeof taskId === 'string' && taskId !== '' ? masker.mask(taskId) : undefined;
	const wholeId = shownId === undefined || message.includes(shownId) || hint?.includes(shownId) ? undefined : `Task ID in full: ${shownId}`;
	return joined(hint, wholeId, added === undefined ? undefined : masker.mask(added));
}

/** Turns any error into the n8n error the node throws, masked, with what the run adds to it. */
export function asNodeError(node: INode, error: unknown, itemIndex: number | undefined, masker: SecretMasker = noSecretsMasker, added: RunAddendum = {}): NodeError {
	if (error instanceof GatewayError) {
		const index = error.itemIndex ?? itemIndex;
		const message = error.shownMessage((text) => masker.mask(text));
		const description = descriptionOf(error, message, masker, added.text);
		const data = errorData(error, masker, added.fields);
		const nodeError =
			error.status !== undefined
				? new NodeApiError(node, data, { message, description, httpCode: String(error.status), itemIndex: index })
				: new NodeOperationError(node, message, { description, itemIndex: index });
		// n8n shows `context` in the error panel and keeps it in the execution.
		nodeError.context = { ...(nodeError.context ?? {}), itemFields: data };
		return nodeError;
	}
	if (isOwnNodeError(error)) {
		const fields = { ...itemFieldsOf(error), ...added.fields };
		if (Object.keys(fields).length) error.context = { ...error.context, itemFields: masker.maskDeep(fields) };
		if (added.text !== undefined) error.description = joined(error.description ?? undefined, masker.mask(added.text));
		return error;
	}
	// Anything else (a bug, a runtime error): its message may hold anything, so only the masked text goes on.
	const raw = error as { message?: unknown; name?: string };
	const text = masker.mask(typeof raw?.message === 'string' ? raw.message : String(error));
	const description = added.text === undefined ? undefined : masker.mask(added.text);
	const nodeError = new NodeOperationError(node, text, { itemIndex, description });
	if (added.fields) nodeError.context = { ...nodeError.context, itemFields: masker.maskDeep(added.fields) };
	return nodeError;
}

/** The Continue On Fail item of a failed input item: the message, the hint and the error's fields. */
export function errorItem(node: INode, error: unknown, itemIndex: number, masker: SecretMasker = noSecretsMasker): INodeExecutionData {
	const nodeError = asNodeError(node, error, itemIndex, masker);
	const json: IDataObject = { error: nodeError.message };
	if (nodeError.description) json.errorDescription = nodeError.description;
	const fields = (nodeError.context?.itemFields ?? {}) as IDataObject;
	for (const [key, value] of Object.entries(fields)) if (value !== null && value !== undefined && !(key in json)) json[key] = value;
	return { json, pairedItem: { item: itemIndex } };
}
