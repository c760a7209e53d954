/**
 * The model catalogue of the gateway's interface document (docs/gateway-interface.md, 2.8 and
 * 8): one entry per model, so a new model is one line here. Used for the model lists (their
 * descriptions, and the list itself when the gateway lists nothing), output-token limits and
 * cost estimates.
 */
export type ModelKind = 'image' | 'video' | 'chat';

export interface CatalogueModel {
	id: string;
	kind: ModelKind;
	description: string;
	contextTokens?: number;
	maxOutputTokens?: number;
	/** USD per image (image models). */
	pricePerImageUsd?: number;
	/** USD per million units of usage (video models). */
	pricePerMillionUsd?: number;
}

export const MODEL_CATALOGUE: readonly CatalogueModel[] = [
	{ id: 'img-image-2', kind: 'image', description: 'Image generation, synchronous', pricePerImageUsd: 0.04 },
	{ id: 'video-2-0-260128', kind: 'video', description: 'Video, quality first', pricePerMillionUsd: 51 },
	{ id: 'video-2-0-fast-260128', kind: 'video', description: 'Video, balance of speed and cost', pricePerMillionUsd: 37 },
	{ id: 'video-2-0-mini-260615', kind: 'video', description: 'Video, lowest price', pricePerMillionUsd: 23 },
	{ id: 'chat-fable-5', kind: 'chat', description: 'Highest capability, long-horizon agents; always thinks', contextTokens: 1_000_000, maxOutputTokens: 128_000 },
	{ id: 'chat-opus-4-8', kind: 'chat', description: 'Flagship for agentic coding and enterprise workflows', contextTokens: 1_000_000, maxOutputTokens: 128_000 },
	{ id: 'chat-sonnet-5', kind: 'chat', description: 'Balance of speed, quality and cost', contextTokens: 1_000_000, maxOutputTokens: 128_000 },
	{ id: 'chat-haiku-4-5', kind: 'chat', description: 'Fast and cheap', contextTokens: 200_000, maxOutputTokens: 64_000 },
	{ id: 'chat-opus-4-7', kind: 'chat', description: 'Older flagship, kept for compatibility' },
	{ id: 'chat-opus-4-6', kind: 'chat', description: 'Older flagship, kept for compatibility' },
];

export const IMAGE_PRICE_USD = 0.04;

export function findModel(id: string): CatalogueModel | undefined {
	return MODEL_CATALOGUE.find((model) => model.id === id);
}

const thousands = (tokens: number) => (tokens >= 1_000_000 ? `${tokens / 1_000_000}M` : `${Math.round(tokens / 1000)}k`);

/** The model's description with its limits and price, as the model lists show it. */
export function describeModel(model: CatalogueModel): string {
	const facts: string[] = [];
	if (model.contextTokens && model.maxOutputTokens) facts.push(`${thousands(model.contextTokens)} context, ${thousands(model.maxOutputTokens)} output`);
	if (model.pricePerImageUsd !== undefined) facts.push(`about ${model.pricePerImageUsd} USD per image`);
	if (model.pricePerMillionUsd !== undefined) facts.push(`${model.pricePerMillionUsd} USD per 1M usage`);
	return facts.length ? `${model.description} (${facts.join('; ')})` : model.description;
}

/** A chat model whose output limit the catalogue knows. */
export type LimitedChatModel = CatalogueModel & { maxOutputTokens: number };

/** The chat models with a known output limit: the ones Max Tokens is checked against. */
export function limitedChatModels(): LimitedChatModel[] {
	return MODEL_CATALOGUE.filter((model): model is LimitedChatModel => model.kind === 'chat' && model.maxOutputTokens !== undefined);
}

/** The notice under Model while this model is picked (the run's check says the same words). */
export function outputLimitHint(model: LimitedChatModel): string {
	return `${model.id} writes at most ${model.maxOutputTokens} tokens per answer`;
}

/**
 * The Max Tokens hint, whatever the model: the limit of a picked model the catalogue knows is a
 * notice under Model (outputLimitNotices); the run checks it, also for a model an expression names.
 */
export const MAX_TOKENS_HINT =
	"Where the node knows the picked model's output limit, a notice under Model shows it; Max Tokens above it is refused when the node runs, also for a model set by an expression";

export function catalogueOf(kind: ModelKind): CatalogueModel[] {
	return MODEL_CATALOGUE.filter((model) => model.kind === kind);
}

/** Not generation models at all: never offered in any list. */
const NOT_GENERATIVE = /embed|rerank|moderation|whisper|tts|transcri|speech|audio/i;

/**
 * The kind of a model id the catalogue does not know, from the hints relays put in ids and in
 * `supported_endpoint_types`; undefined when it is not a model any node here can use.
 */
export function guessKind(id: string, endpointTypes: readonly string[] = []): ModelKind | undefined {
	const known = findModel(id);
	if (known) return known.kind;
	const hints = `${id} ${endpointTypes.join(' ')}`.toLowerCase();
	if (NOT_GENERATIVE.test(id)) return undefined;
	if (/video|sora|veo|kling|hailuo|seedance|wan2/.test(hints)) return 'video';
	if (/image|img|dall-?e|flux|midjourney|imagen|stable-diffusion|sdxl/.test(hints)) return 'image';
	return 'chat';
}
