/**
 * Tool calls whose arguments cannot be run reach the agent as LangChain's `invalid_tool_calls`.
 * The model hands such a call over as an `invalid-tool-call` content part (wire.ts); the AI node
 * SDK's adapter (0.31.1, n8n 2.41.1) turns that into an `invalid_tool_call` content block of the
 * AIMessage but leaves the message's `invalid_tool_calls` empty, and for a streamed answer
 * LangChain rebuilds that list from tool-call pieces only (repairing cut-off arguments). This
 * reads the blocks into `invalid_tool_calls`: on a whole answer, and on every chunk of a streamed
 * one through a subclass of the chunk's own class, which LangChain keeps when it joins chunks
 * (`concat` builds `new this.constructor(...)`). Where n8n's internals look different (a fixed SDK,
 * another version) it changes nothing.
 */

interface InvalidToolCall {
	type: 'invalid_tool_call';
	id?: string;
	name?: string;
	args?: string;
	error?: string;
}

interface MessageLike {
	content?: unknown;
	invalid_tool_calls?: InvalidToolCall[];
}

type MessageClass = new (fields: Record<string, unknown>) => MessageLike;

interface LanguageModelLike {
	_generate?: (...args: unknown[]) => Promise<{ generations?: Array<{ message?: MessageLike }> }>;
	_streamResponseChunks?: (...args: unknown[]) => AsyncGenerator<{ message?: MessageLike }>;
	bindTools?: (...args: unknown[]) => unknown;
	mgwInvalidToolCalls?: true;
}

function invalidBlocks(content: unknown): InvalidToolCall[] {
	if (!Array.isArray(content)) return [];
	return (content as InvalidToolCall[])
		.filter((block) => typeof block === 'object' && block !== null && block.type === 'invalid_tool_call')
		.map(({ id, name, args, error }) => ({ type: 'invalid_tool_call', id, name, args, error }));
}

/** The message's `invalid_tool_calls` with those of its content blocks (each once). */
export function readInvalidToolCalls(message: MessageLike | undefined): void {
	if (!message) return;
	const blocks = invalidBlocks(message.content);
	if (blocks.length === 0) return;
	const listed = Array.isArray(message.invalid_tool_calls) ? message.invalid_tool_calls : [];
	message.invalid_tool_calls = [...listed.filter((call) => !blocks.some((block) => block.id !== undefined && block.id === call.id)), ...blocks];
}

const keepingClasses = new WeakMap<MessageClass, MessageClass>();

/** A subclass of a chunk's class whose every instance (joined chunks included) reads its blocks. */
function keepingClassOf(Base: MessageClass): MessageClass {
	let Keeping = keepingClasses.get(Base);
	if (!Keeping) {
		Keeping = class extends Base {
			constructor(fields: Record<string, unknown>) {
				super(fields);
				readInvalidToolCalls(this);
			}
		};
		keepingClasses.set(Base, Keeping);
		keepingClasses.set(Keeping, Keeping);
	}
	return Keeping;
}

/** The same chunk as an instance of the keeping subclass of its class. */
function keepingChunk(message: MessageLike): MessageLike {
	const Base = (message as { constructor?: unknown }).constructor;
	if (typeof Base !== 'function') return message;
	const Keeping = keepingClassOf(Base as MessageClass);
	// Not instanceof: LangChain's message classes answer it by the message's type, not its class.
	if (Base === Keeping) return message;
	const fields: Record<string, unknown> = {};
	for (const key of ['content', 'additional_kwargs', 'response_metadata', 'tool_call_chunks', 'usage_metadata', 'id', 'name']) {
		const value = (message as Record<string, unknown>)[key];
		if (value !== undefined) fields[key] = value;
	}
	return new Keeping(fields);
}

/** The language model n8n gets, with invalid tool calls where the agent looks for them (also after bindTools). */
export function keepInvalidToolCalls<T>(languageModel: T): T {
	const model = languageModel as unknown as LanguageModelLike;
	if (typeof model !== 'object' || model === null || model.mgwInvalidToolCalls) return languageModel;
	const generate = model._generate;
	// Only LangChain models (the adapter) have these; anything else is left as it is.
	if (typeof generate !== 'function' && typeof model._streamResponseChunks !== 'function') return languageModel;
	if (typeof generate === 'function') {
		model._generate = async (...args: unknown[]) => {
			const result = await generate.apply(model, args);
			for (const generation of result?.generations ?? []) readInvalidToolCalls(generation.message);
			return result;
		};
	}
	const stream = model._streamResponseChunks;
	if (typeof stream === 'function') {
		model._streamResponseChunks = async function* (...args: unknown[]) {
			for await (const chunk of stream.apply(model, args)) {
				if (chunk?.message) chunk.message = keepingChunk(chunk.message);
				yield chunk;
			}
		};
	}
	const bindTools = model.bindTools;
	if (typeof bindTools === 'function') model.bindTools = (...args: unknown[]) => keepInvalidToolCalls(bindTools.apply(model, args));
	model.mgwInvalidToolCalls = true;
	return languageModel;
}
