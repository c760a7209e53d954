/**
 * What n8n gets from the node: the Gateway Chat Model (model.ts) handed to the AI node SDK's
 * `supplyModel`, which wraps it for the AI Agent, the chains and n8n's tracing of tokens.
 */
import type { IDataObject, IExecuteFunctions, ISupplyDataFunctions, SupplyData } from 'n8n-workflow';

import { checkedMaxTokens, readChatLimits, readEffort, readOptionalNumber } from '../shared/chat/chatInput';
import { GatewayClient } from '../shared/wire/transport';
import { readModelId } from '../shared/items/validate';
import { gatewayChatModelClass } from './model';
import type { ModelInput } from './model';
import { loadAiNodeSdk } from './sdk';
import type { AiNodeSdk } from './sdk';
import { keepStreamedTokenUsage } from './usage';
import type { ModelSettings } from './wire';

/**
 * The panel's values, checked before anything is sent. The shared readers take the functions of
 * a regular node; of those they use only getNodeParameter and getNode, which a sub-node has too.
 */
export function readModelInput(ctx: ISupplyDataFunctions, itemIndex: number): ModelInput {
	const fns = ctx as unknown as IExecuteFunctions;
	const model = readModelId(fns, itemIndex);
	const options = (ctx.getNodeParameter('options', itemIndex, {}) ?? {}) as IDataObject;
	// Max Tokens sent always (4096 unless set), as Gateway Chat does: relays into the native format require it.
	const maxTokens = checkedMaxTokens(fns, itemIndex, model, options.maxTokens);
	const temperature = readOptionalNumber(fns, itemIndex, options.temperature, 'Temperature', { min: 0, max: 2 });
	const settings: ModelSettings = { model, maxTokens, temperature, effort: readEffort(fns, itemIndex, options.effort) };
	return { settings, ...readChatLimits(fns, itemIndex, options) };
}

/**
 * A client stopped by `signal` as well as by the execution's cancel signal. The transport takes
 * its cancel signal from the context, so this one sees a context whose cancel signal is both.
 * n8n's AI Agent passes the execution's own signal: then the execution's client serves, with the
 * backoff it shares with every other call of the run.
 */
async function clientWithSignal(ctx: ISupplyDataFunctions, client: GatewayClient, signal: AbortSignal | undefined): Promise<GatewayClient> {
	const execution = client.cancelSignal;
	if (!signal || signal === execution) return client;
	const both = execution ? AbortSignal.any([execution, signal]) : signal;
	const scoped = {
		getCredentials: async (type: string) => await ctx.getCredentials(type),
		getNode: () => ctx.getNode(),
		getExecutionCancelSignal: () => both,
		helpers: ctx.helpers,
	};
	return await GatewayClient.create(scoped as unknown as IExecuteFunctions);
}

/** `load` is for tests: n8n's own SDK is what the node uses. */
export async function supplyGatewayChatModel(ctx: ISupplyDataFunctions, itemIndex: number, load?: () => Promise<AiNodeSdk>): Promise<SupplyData> {
	const sdk = await loadAiNodeSdk(ctx.getNode(), load);
	const input = readModelInput(ctx, itemIndex);
	// The transport needs what every n8n context has: the credential, the node, httpRequest and the cancel signal.
	const client = await GatewayClient.create(ctx as unknown as IExecuteFunctions);
	const GatewayChatModel = gatewayChatModelClass(sdk.BaseChatModel);
	const model = new GatewayChatModel({
		...input,
		client,
		clientFor: async (signal) => await clientWithSignal(ctx, client, signal),
		node: ctx.getNode(),
		schemaOf: (tool) => sdk.getParametersJsonSchema(tool),
	});
	const supplied = sdk.supplyModel(ctx, model);
	return { ...supplied, response: keepStreamedTokenUsage(supplied.response) };
}
