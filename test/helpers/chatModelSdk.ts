/**
 * A stand-in of n8n's AI node SDK for the Gateway Chat Model tests: its BaseChatModel and a
 * supplyModel that returns the model as it is, so every behaviour tested is the model's own.
 */
import type { ChatModel, FunctionTool, Tool } from '@n8n/ai-node-sdk';

import type { AiNodeSdk } from '../../nodes/GatewayChatModel/sdk';

/** The SDK's BaseChatModel as 0.31.1 has it: withTools copies the model with more tools. */
abstract class StandInBaseChatModel {
	constructor(
		public provider: string,
		public modelId: string,
		public defaultConfig?: object,
		protected tools: Tool[] = [],
	) {}

	withTools(tools: Tool[]): this {
		const copy = Object.create(Object.getPrototypeOf(this)) as this;
		Object.assign(copy, this);
		copy.tools = [...this.tools, ...tools];
		return copy;
	}
}

export const standInSdk = {
	BaseChatModel: StandInBaseChatModel,
	supplyModel: (_ctx: unknown, model: ChatModel) => ({ response: model }),
	getParametersJsonSchema: (tool: FunctionTool) => tool.inputSchema,
} as unknown as AiNodeSdk;
