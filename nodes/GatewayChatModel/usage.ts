/**
 * Real token counts for streamed answers. The AI node SDK's adapter (0.31.1, n8n 2.41.1) reports
 * a model's token usage to n8n through a tracing callback that reads `llmOutput.tokenUsage.
 * input_tokens / output_tokens`. That is where the adapter itself puts them for a whole answer;
 * for a streamed one LangChain builds `llmOutput.tokenUsage` as `promptTokens / completionTokens`,
 * so n8n finds no usage and shows an estimate (`tokenUsageEstimate`) instead of the gateway's
 * counts, whenever an agent streams into a chat.
 *
 * This reads both spellings. It wraps the parser of the tracing callbacks on the language model
 * n8n gets, and on every copy the agent makes of it with `bindTools` (each copy gets callbacks
 * of its own). Where n8n's internals look different (a fixed SDK, another version) it changes
 * nothing.
 */
import type { TokenUsage } from '@n8n/ai-node-sdk';

import { count, tokenUsage } from './wire';

type UsageParser = (output: unknown) => TokenUsage;

interface TracingHandler {
	options?: { tokensUsageParser?: UsageParser & { mgwBothSpellings?: true } };
}

interface LanguageModelLike {
	callbacks?: unknown;
	bindTools?: (...args: unknown[]) => unknown;
}

/** Usage in LangChain's streamed spelling, or undefined when the output carries it otherwise (or not at all). */
export function streamedUsage(output: unknown): TokenUsage | undefined {
	const usage = (output as { llmOutput?: { tokenUsage?: Record<string, unknown> } } | undefined)?.llmOutput?.tokenUsage;
	if (!usage || usage.output_tokens !== undefined || usage.input_tokens !== undefined) return undefined;
	return tokenUsage(count(usage.promptTokens), count(usage.completionTokens), count(usage.totalTokens));
}

function readBothSpellings(handler: unknown): void {
	const options = (handler as TracingHandler | undefined)?.options;
	const parse = options?.tokensUsageParser;
	if (typeof parse !== 'function' || parse.mgwBothSpellings) return;
	const parser: UsageParser & { mgwBothSpellings?: true } = (output) => streamedUsage(output) ?? parse(output);
	parser.mgwBothSpellings = true;
	options!.tokensUsageParser = parser;
}

/** The language model n8n gets, with its token usage read in both spellings (also after bindTools). */
export function keepStreamedTokenUsage<T>(languageModel: T): T {
	const model = languageModel as unknown as LanguageModelLike;
	if (typeof model !== 'object' || model === null) return languageModel;
	if (Array.isArray(model.callbacks)) for (const handler of model.callbacks) readBothSpellings(handler);
	const bindTools = model.bindTools;
	if (typeof bindTools === 'function' && !Object.prototype.hasOwnProperty.call(model, 'bindTools')) {
		model.bindTools = (...args: unknown[]) => keepStreamedTokenUsage(bindTools.apply(model, args));
	}
	return languageModel;
}
