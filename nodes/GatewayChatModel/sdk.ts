/**
 * Loads n8n's AI node SDK when the node is used, never when n8n loads the package: n8n 1.x (and
 * 2.x before 2.16) has no `@n8n/ai-node-sdk`, and an import at the top of a file would make n8n
 * refuse the whole package there ("Unrecognized node type" for every node). Loaded here, only
 * this node fails on those versions, with a message that says what it needs.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { INode } from 'n8n-workflow';

export type AiNodeSdk = typeof import('@n8n/ai-node-sdk');

export const SDK_MODULE = '@n8n/ai-node-sdk';
export const NEEDS_N8N = 'Gateway Chat Model needs n8n 2.16 or newer';

function isMissingModule(error: unknown): boolean {
	const { code, message } = (error ?? {}) as { code?: string; message?: string };
	return code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND' || (typeof message === 'string' && message.includes(`Cannot find module '${SDK_MODULE}'`));
}

/** The error on an n8n without the SDK: what the node needs, and what works instead. */
export function sdkMissingError(node: INode): NodeOperationError {
	return new NodeOperationError(node, `${NEEDS_N8N}: this n8n does not provide ${SDK_MODULE}, the AI node SDK the node is built on`, {
		description:
			'n8n ships its AI node SDK from version 2.16 on. Update n8n to use this node with the AI Agent and the chains; on this version, the Gateway Chat and Gateway Messages nodes (also as AI Agent tools) work.',
	});
}

export async function loadAiNodeSdk(node: INode, load: () => Promise<AiNodeSdk> = async () => await import('@n8n/ai-node-sdk')): Promise<AiNodeSdk> {
	let sdk: AiNodeSdk;
	try {
		sdk = await load();
	} catch (error) {
		if (isMissingModule(error)) throw sdkMissingError(node);
		throw new NodeOperationError(node, error as Error, { description: `Loading ${SDK_MODULE} failed.` });
	}
	if (typeof sdk?.supplyModel !== 'function' || typeof sdk?.BaseChatModel !== 'function') throw sdkMissingError(node);
	return sdk;
}
