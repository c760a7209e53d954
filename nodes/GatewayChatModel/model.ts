/**
 * The Gateway Chat Model as the AI node SDK sees it: a `BaseChatModel` whose `generate` and
 * `stream` go through the package's own transport (GatewayClient), so an AI Agent or chain gets
 * what every other node here gives: a bare 429 retried with the execution's shared backoff, 5xx
 * and dropped connections retried as the official SDKs do, one hard deadline per request, errors
 * in plain words, and the key masked out of every message.
 *
 * Decision: this, not the SDK's OpenAI-compatible path (`supplyModel(ctx, { type: 'openai', … })`,
 * n8n's own LangChain OpenAI client): measured in n8n 2.41.1 with an AI Agent, that path failed a
 * bare 429 at once, waited on keep-alive comments past its timeout, printed the key a 401 quoted
 * and garbled errors inside a 200, at no gain in speed or tool calls (the measurements:
 * docs/nodes/gatewayChatModel.md, "Why its own client").
 *
 * The SDK's adapter for a model of one's own (0.31.1) has three gaps, closed here and measured
 * with a naive variant (streamed calls forwarded piece by piece, no usage correction): it garbled
 * two streamed parallel calls (a call came back changed, and the gateway refused it); it
 * showed estimates instead of the token counts of streamed answers; and it passes LangChain's call
 * options, whose abort signal is `signal`, not the SDK's `abortSignal`. So:
 * - streamed tool calls are handed over whole, one chunk per call under its own id (closingChunks
 *   in wire.ts): the adapter puts every streamed tool-call piece at index 0, and LangChain joins
 *   pieces at the same index unless their ids differ;
 * - usage.ts makes n8n read a streamed answer's usage under LangChain's names too;
 * - both signals are honoured (supply.ts, clientWithSignal), besides the execution's own cancel
 *   signal in the transport.
 */
import type { INode } from 'n8n-workflow';

import type { BaseChatModel, ChatModel, ChatModelConfig, FunctionTool, GenerateResult, Message, StreamChunk, Tool } from '@n8n/ai-node-sdk';

import { CHAT_LIMIT, chatIdle, checkedReply, replyTexts, streamFailure, wholeAnswerOf } from '../shared/chat/chatCall';
import { StreamMasker } from '../shared/credential/secrets';
import { asNodeError } from '../shared/failures/edge';
import type { GatewayClient } from '../shared/wire/transport';
import { CHAT_COMPLETIONS, ChatCompletionStream } from '../shared/chat/completions';
import type { ChatCompletion } from '../shared/chat/completions';
import { CHAT_MODEL_WHAT, closingChunks, generateResultOf, requestBody, toWireMessages, toWireTools } from './wire';
import type { ModelSettings, WireTool } from './wire';

const STREAM_HINT = 'The partial answer was discarded. Try again; if it keeps happening, turn off streaming in the AI node.';

/** What the panel sets (supply.ts reads it, checked). */
export interface ModelInput {
	settings: ModelSettings;
	/** The hard limit for one answer, streamed or not. */
	deadlineMs: number;
	/** A streamed answer's idle limit (Idle Timeout): silence this long ends it. */
	idleMs: number;
}

export interface GatewayModelDeps extends ModelInput {
	/** The execution's client: its credential, backoff and cancel signal. */
	client: GatewayClient;
	/**
	 * The client for a call with a signal of its own (LangChain's `signal`): the same credential,
	 * stopped by that signal as well as by the execution's. The execution's client when there is
	 * none, or when it is the execution's own (what n8n's AI Agent passes).
	 */
	clientFor: (signal: AbortSignal | undefined) => Promise<GatewayClient>;
	node: INode;
	/** A tool's parameters as JSON schema (the SDK's getParametersJsonSchema: zod or JSON schema). */
	schemaOf: (tool: FunctionTool) => unknown;
}

/** What the adapter passes as `config`: LangChain's call options, with `signal` and `stop`. */
type CallConfig = ChatModelConfig & { signal?: AbortSignal; stop?: unknown };

function signalOf(config: CallConfig | undefined): AbortSignal | undefined {
	const signals = [config?.signal, config?.abortSignal].filter((signal): signal is AbortSignal => signal instanceof AbortSignal);
	if (signals.length <= 1) return signals[0];
	return AbortSignal.any(signals);
}

function stopOf(config: CallConfig | undefined): string[] | undefined {
	const stop = config?.stop ?? config?.stopSequences;
	if (typeof stop === 'string') return [stop];
	return Array.isArray(stop) ? stop.filter((entry): entry is string => typeof entry === 'string' && entry !== '') : undefined;
}

const checkedCompletion = (completion: ChatCompletion) => checkedReply({ what: CHAT_MODEL_WHAT, replyProblem: CHAT_COMPLETIONS.replyProblem }, completion);

type SdkBaseChatModel = typeof BaseChatModel;

const wireToolCache = new WeakMap<Tool, WireTool[]>();

/** The Gateway Chat Model: the SDK's ChatModel, made from what supplyData read and built. */
export type GatewayChatModelClass = new (deps: GatewayModelDeps) => ChatModel & { readonly deps: GatewayModelDeps };

const classes = new WeakMap<SdkBaseChatModel, GatewayChatModelClass>();

/**
 * The model class on top of the SDK's BaseChatModel, which n8n provides at run time (the SDK is
 * loaded inside supplyData, never at the top of a file: see sdk.ts). One class per SDK instance.
 */
export function gatewayChatModelClass(Base: SdkBaseChatModel): GatewayChatModelClass {
	let defined = classes.get(Base);
	if (!defined) {
		defined = defineModel(Base);
		classes.set(Base, defined);
	}
	return defined;
}

/** The tools in the wire format, converted once per tool (a zod schema's conversion costs time on every turn). */
function wireToolsOf(tools: readonly Tool[], schemaOf: GatewayModelDeps['schemaOf']): WireTool[] {
	return tools.flatMap((tool) => {
		let wire = wireToolCache.get(tool);
		if (!wire) {
			wire = toWireTools([tool], schemaOf);
			wireToolCache.set(tool, wire);
		}
		return wire;
	});
}

/** A relay that answered a streamed request with one JSON object: its text and closing chunks, masked. */
function wholeAnswerChunks(completion: ChatCompletion, masker: GatewayClient['masker']): StreamChunk[] {
	const whole = generateResultOf(completion).message.content.find((part) => part.type === 'text');
	const text: StreamChunk[] = whole && whole.type === 'text' && whole.text !== '' ? [{ type: 'text-delta', delta: masker.mask(whole.text) }] : [];
	return [...text, ...masker.maskDeep(closingChunks(completion))];
}

function defineModel(Base: SdkBaseChatModel): GatewayChatModelClass {
	return class GatewayChatModel extends Base {
		constructor(readonly deps: GatewayModelDeps) {
			super('model-gateway', deps.settings.model);
		}

		/** The transport ends a call at the deadline or when a signal aborts. */
		private request(messages: Message[], config: CallConfig | undefined, stream: boolean) {
			const body = requestBody(this.deps.settings, toWireMessages(messages), wireToolsOf(this.tools, this.deps.schemaOf), { stream, stop: stopOf(config) });
			return { path: CHAT_COMPLETIONS.path, body, deadlineMs: this.deps.deadlineMs, limitName: CHAT_LIMIT, what: CHAT_MODEL_WHAT };
		}

		/** Any failure as the n8n error the agent shows: our words, the gateway's quoted, the key masked. */
		private nodeError(error: unknown) {
			return asNodeError(this.deps.node, error, undefined, this.deps.client.masker);
		}

		/**
		 * A streamed run's failure: n8n shows a chat only the error's description, so it carries the
		 * whole message too, not only the hint.
		 */
		private streamError(error: unknown) {
			const nodeError = this.nodeError(error);
			nodeError.description = [nodeError.message, nodeError.description].filter(Boolean).join('. ');
			return nodeError;
		}

		async generate(messages: Message[], config?: CallConfig): Promise<GenerateResult> {
			try {
				const client = await this.deps.clientFor(signalOf(config));
				const completion = await client.json<ChatCompletion>(this.request(messages, config, false));
				// What the agent, its tools and n8n's run data and event log get: masked.
				return client.masker.maskDeep(generateResultOf(checkedCompletion(completion)));
			} catch (error) {
				throw this.nodeError(error);
			}
		}

		async *stream(messages: Message[], config?: CallConfig): AsyncGenerator<StreamChunk, void, undefined> {
			let response: Awaited<ReturnType<GatewayClient['stream']>>;
			try {
				const client = await this.deps.clientFor(signalOf(config));
				response = await client.stream({ ...this.request(messages, config, true), idle: chatIdle(this.deps.idleMs) });
			} catch (error) {
				throw this.streamError(error);
			}
			const body = response.body;
			// Everything handed to LangChain is masked; a secret split over two deltas too.
			const masker = this.deps.client.masker;
			const shown = new StreamMasker(masker);
			const text = (delta: string): StreamChunk[] => (delta === '' ? [] : [{ type: 'text-delta', delta }]);
			const reader = new ChatCompletionStream();
			try {
				const whole = await wholeAnswerOf<ChatCompletion>(response, CHAT_MODEL_WHAT);
				if (whole !== undefined) {
					yield* wholeAnswerChunks(checkedCompletion(whole), masker);
					return;
				}
				for await (const deltas of replyTexts(response, reader)) for (const delta of deltas) yield* text(shown.push(delta));
				const reply = checkedCompletion(reader.reply());
				yield* text(shown.flush());
				yield* masker.maskDeep(closingChunks(reply));
			} catch (error) {
				throw this.streamError(streamFailure(CHAT_MODEL_WHAT, error, response.failure, { hint: STREAM_HINT, arrived: reader.arrived }));
			} finally {
				if (!body.readableEnded && !body.destroyed) body.destroy();
			}
		}
	};
}
