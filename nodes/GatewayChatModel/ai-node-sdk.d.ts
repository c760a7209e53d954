/**
 * The part of n8n's `@n8n/ai-node-sdk` (0.31.1, inside n8n 2.16 and later) this node uses,
 * declared here instead of installed: the SDK is under n8n's Sustainable Use License, so it is
 * neither bundled nor a development dependency of this MIT package. n8n provides it at run time
 * (its own node_modules are on NODE_PATH for community packages); the node loads it only inside
 * `supplyData` (see sdk.ts), so n8n 1.x, which has no SDK, still loads the rest of the package.
 * Shapes follow the SDK's published typings (dist/esm/index.d.ts of 0.31.1).
 */
declare module '@n8n/ai-node-sdk' {
	import type { ISupplyDataFunctions, SupplyData } from 'n8n-workflow';

	export type MessageRole = 'system' | 'user' | 'assistant' | 'tool';

	interface ContentMetadata {
		providerMetadata?: Record<string, unknown>;
	}
	export type ContentText = ContentMetadata & { type: 'text'; text: string };
	export type ContentReasoning = ContentMetadata & { type: 'reasoning'; text: string };
	export type ContentFile = ContentMetadata & { type: 'file'; mediaType?: string; data: string | Uint8Array };
	export type ContentToolCall = ContentMetadata & { type: 'tool-call'; toolCallId?: string; toolName: string; input: string };
	export type ContentToolResult = ContentMetadata & { type: 'tool-result'; toolCallId: string; result: unknown; isError?: boolean };
	export type ContentInvalidToolCall = ContentMetadata & { type: 'invalid-tool-call'; toolCallId?: string; error?: string; args?: string; name?: string };
	export type ContentCitation = ContentMetadata & { type: 'citation'; text?: string };
	export type ContentProvider = ContentMetadata & { type: 'provider'; value: Record<string, unknown> };
	export type MessageContent =
		| ContentText
		| ContentToolCall
		| ContentInvalidToolCall
		| ContentToolResult
		| ContentReasoning
		| ContentFile
		| ContentCitation
		| ContentProvider;

	export interface Message {
		role: MessageRole;
		content: MessageContent[];
		name?: string;
		id?: string;
	}

	export type FinishReason = 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other';

	export interface TokenUsage {
		promptTokens: number;
		completionTokens: number;
		totalTokens: number;
		inputTokenDetails?: { cacheRead?: number };
		outputTokenDetails?: { reasoning?: number };
	}

	export interface GenerateResult {
		id?: string;
		finishReason?: FinishReason;
		usage?: TokenUsage;
		message: Message;
		providerMetadata?: Record<string, unknown>;
		rawResponse?: unknown;
	}

	export type StreamChunk = ContentMetadata &
		(
			| { type: 'text-delta'; id?: string; delta: string }
			| { type: 'reasoning-delta'; id?: string; delta: string }
			| { type: 'tool-call-delta'; id?: string; name?: string; argumentsDelta?: string }
			| { type: 'finish'; finishReason: FinishReason; usage?: TokenUsage }
			| { type: 'error'; error: unknown }
			| { type: 'content'; content: MessageContent; id?: string }
		);

	export interface FunctionTool {
		type: 'function';
		name: string;
		description?: string;
		/** A JSON schema or a zod schema; `getParametersJsonSchema` gives the JSON schema of either. */
		inputSchema: unknown;
		strict?: boolean;
	}
	export interface ProviderTool {
		type: 'provider';
		name: string;
		args?: Record<string, unknown>;
	}
	export type Tool = FunctionTool | ProviderTool;

	export interface ChatModelConfig {
		maxTokens?: number;
		temperature?: number;
		topP?: number;
		stopSequences?: string[];
		maxRetries?: number;
		timeout?: number;
		abortSignal?: AbortSignal;
		headers?: Record<string, string | undefined>;
	}

	export interface ChatModel<TConfig extends ChatModelConfig = ChatModelConfig> {
		provider: string;
		modelId: string;
		defaultConfig?: TConfig;
		generate(messages: Message[], config?: TConfig): Promise<GenerateResult>;
		stream(messages: Message[], config?: TConfig): AsyncIterable<StreamChunk>;
		withTools(tools: Tool[]): ChatModel<TConfig>;
	}

	export abstract class BaseChatModel<TConfig extends ChatModelConfig = ChatModelConfig> implements ChatModel<TConfig> {
		provider: string;
		modelId: string;
		defaultConfig?: TConfig;
		protected tools: Tool[];
		constructor(provider: string, modelId: string, defaultConfig?: TConfig, tools?: Tool[]);
		abstract generate(messages: Message[], config?: TConfig): Promise<GenerateResult>;
		abstract stream(messages: Message[], config?: TConfig): AsyncIterable<StreamChunk>;
		withTools(tools: Tool[]): ChatModel<TConfig>;
		protected mergeConfig(config?: TConfig): ChatModelConfig;
	}

	export function getParametersJsonSchema(tool: FunctionTool): Record<string, unknown>;

	export function supplyModel(ctx: ISupplyDataFunctions, model: ChatModel): SupplyData;
}
