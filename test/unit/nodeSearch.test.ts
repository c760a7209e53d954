/**
 * Findable in the editor: our nodes searched for the way n8n 2.41.1's node panel searches, among
 * all of n8n's own nodes.
 *
 * How the panel ranks (n8n's nodeCreator.utils `searchNodes` and useViewStacks): `sublimeSearch`
 * of @n8n/utils (the same 1.48.0 n8n 2.41.1 ships, here through n8n-core) over each node's
 * display name (weight 1.3) and codex aliases (weight 1), a fuzzy match (the letters of the query
 * in order, anywhere); then `reRankSearchResults` adds the node's popularity x 100 (n8n's
 * node-popularity.json: built-in nodes only). With an empty canvas, AI nodes that are not root
 * nodes (chat models, tools) are left out; once the canvas has an AI node they are searched too.
 * The node's description is not searched by the panel.
 *
 * n8n's nodes come from fixtures/n8n-node-search-2.41.1.json, written from an installed n8n by
 * fixtures/make-n8n-node-search.js. Ours are read from dist/ (display name from the built node
 * class, aliases from the built codex file), as n8n loads them: `npm run build` first.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { INodeTypeDescription } from 'n8n-workflow';

const { sublimeSearch } = require('@n8n/utils/search/sublime-search') as {
	sublimeSearch: <T>(filter: string, items: T[]) => Array<{ score: number; item: T }>;
};
const { reRankSearchResults } = require('@n8n/utils/search/re-rank-search-results') as {
	reRankSearchResults: <T>(results: Array<{ score: number; item: T }>, factors: Record<string, Record<string, number>>) => Array<{ score: number; item: T }>;
};

const ROOT = path.resolve(__dirname, '..', '..');
const PACKAGE = 'n8n-nodes-model-gateway';
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { n8n: { nodes: string[] } };

interface Entry {
	key: string;
	displayName: string;
	alias?: string[];
	categories?: string[];
	ai?: string[];
	popularity?: number;
}
/** What the panel's search sees of a node (an INodeCreateElement, trimmed). */
interface SearchItem {
	key: string;
	properties: { displayName: string; codex: { alias?: string[]; categories?: string[]; subcategories?: { AI?: string[] } } };
}

const fixture = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', 'n8n-node-search-2.41.1.json'), 'utf8')) as { n8n: string; nodes: Entry[] };

function ourNodes(): Array<Entry & { description: INodeTypeDescription }> {
	return manifest.n8n.nodes.map((file) => {
		const built = path.join(ROOT, file);
		if (!fs.existsSync(built)) throw new Error(`${file} is not built: run \`npm run build\` first`);
		const exported = require(built) as Record<string, new () => { description: INodeTypeDescription }>;
		const { description } = new (Object.values(exported)[0])();
		const codex = JSON.parse(fs.readFileSync(built.replace(/\.js$/, '.json'), 'utf8'));
		return { key: `${PACKAGE}.${description.name}`, displayName: description.displayName, alias: codex.alias, categories: codex.categories, ai: codex.subcategories?.AI, description };
	});
}

const OURS = ourNodes();
const byName = (name: string) => {
	const node = OURS.find((n) => n.description.name === name);
	if (!node) throw new Error(`no node ${name} in package.json`);
	return node;
};

const toItem = (n: Entry): SearchItem => ({ key: n.key, properties: { displayName: n.displayName, codex: { alias: n.alias, categories: n.categories, subcategories: n.ai ? { AI: n.ai } : undefined } } });
/** useViewStacks' filterOutAiNodes: with no AI node on the canvas, only AI root nodes stay. */
const rootView = (n: Entry) => !n.categories?.includes('AI') || (n.ai ?? []).includes('Root Nodes');
const popularity = Object.fromEntries(fixture.nodes.filter((n) => n.popularity).map((n) => [n.key, n.popularity! * 100]));

/** The panel's result list for `query`, best first, with each node's score. */
function scoredSearch(query: string, { aiCanvas = false } = {}): Array<{ key: string; score: number }> {
	const nodes = [...fixture.nodes, ...OURS].filter((n) => aiCanvas || rootView(n));
	return reRankSearchResults(sublimeSearch(query.toLowerCase(), nodes.map(toItem)) ?? [], { popularity }).map(({ score, item }) => ({ key: item.key, score }));
}
/** The panel's result list for `query`: node keys, best first. */
function search(query: string, options?: { aiCanvas?: boolean }): string[] {
	return scoredSearch(query, options).map(({ key }) => key);
}
/** The best score a codex alias can give a node for `query` without popularity: the query itself. */
const exactAliasScore = (query: string) => sublimeSearch(query.toLowerCase(), [toItem({ key: 'x', displayName: '', alias: [query] })])[0].score;
const rankOf = (query: string, name: string, options?: { aiCanvas?: boolean }) => search(query, options).indexOf(`${PACKAGE}.${name}`) + 1;

describe("n8n's node search", () => {
	it('is the one of n8n 2.41.1, with its nodes', () => {
		expect(fixture.n8n).toBe('2.41.1');
		expect(fixture.nodes.length).toBeGreaterThan(400);
		// Sanity of the port: n8n's own nodes are found as in the editor.
		expect(search('http')[0]).toBe('n8n-nodes-base.httpRequest');
		expect(search('openai')).toContain('@n8n/n8n-nodes-langchain.openAi');
	});

	it('"claude", "anthropic" and "messages" find Gateway Messages', () => {
		for (const query of ['claude', 'anthropic', 'messages']) expect(rankOf(query, 'gatewayMessages')).toBeGreaterThan(0);
		expect(rankOf('messages', 'gatewayMessages')).toBe(1);
	});

	it('"model gateway", "relay" and "new-api" find every node of ours, first', () => {
		for (const query of ['model gateway', 'relay', 'new-api']) {
			const results = search(query, { aiCanvas: true });
			const ours = OURS.map((n) => n.key);
			expect(results.slice(0, ours.length).sort()).toEqual([...ours].sort());
		}
	});

	// Built-in nodes get up to +100 for popularity; ours match as exactly as a match can (the word
	// is an alias), so only n8n's popular nodes with the same word, and ties, come before them.
	it.each([
		['video', ['gatewayVideoGenerate'], 5],
		['image', ['gatewayImageGenerate'], 10],
		['chat', ['gatewayChat', 'gatewayMessages'], 12],
	])('"%s" ranks %j near the top (within %d)', (query, names, within) => {
		for (const name of names) {
			const rank = rankOf(query, name);
			expect(rank).toBeGreaterThan(0);
			expect(rank).toBeLessThanOrEqual(within);
		}
	});

	// What decides these ranks: our display names are fixed (saved workflows and the contract name
	// them), and for a one-word query an exact alias is the best match a codex alias can be. So a node
	// of n8n's ranks above ours only by its popularity bonus, or by an equal score (the panel then keeps
	// its list order): issue 20's "image" 8th, "video" 4th and "chat model" 13th are such ties.
	it.each([
		['image', 'gatewayImageGenerate', false],
		['video', 'gatewayVideoGenerate', false],
		['chat', 'gatewayChat', false],
		['chat', 'gatewayMessages', false],
		['chat model', 'gatewayChatModel', true],
	] as const)('"%s": %s has the best score an alias gives, and only popular or tied nodes come first', (query, name, aiCanvas) => {
		const results = scoredSearch(query, { aiCanvas });
		const rank = results.findIndex(({ key }) => key === `${PACKAGE}.${name}`);
		expect(rank).toBeGreaterThanOrEqual(0);
		const ours = results[rank].score;
		expect(ours).toBeGreaterThanOrEqual(exactAliasScore(query));
		for (const before of results.slice(0, rank)) {
			if (before.key.startsWith(`${PACKAGE}.`)) continue;
			expect({ key: before.key, popular: popularity[before.key] !== undefined || before.score === ours }).toEqual({ key: before.key, popular: true });
		}
	});

	it('the chat model is found by "chat" where n8n shows sub-nodes (an AI node on the canvas)', () => {
		const model = OURS.find((n) => n.description.name === 'gatewayChatModel');
		if (!model) return; // not in package.json yet
		expect(rankOf('chat model', 'gatewayChatModel', { aiCanvas: true })).toBeGreaterThan(0);
		expect(rankOf('model gateway', 'gatewayChatModel', { aiCanvas: true })).toBeGreaterThan(0);
	});

	// The words people type for what each node does. A model family's name only where the gateway
	// serves it: its catalogue (docs/gateway-interface.md) has the opus, sonnet and haiku chat family;
	// "gpt" names the chat-completions format Gateway Chat and the Chat Model speak, not a model.
	it.each([
		['gpt', ['gatewayChat', 'gatewayChatModel']],
		['llm', ['gatewayChat', 'gatewayMessages', 'gatewayChatModel']],
		['claude', ['gatewayMessages', 'gatewayChat', 'gatewayChatModel']],
		['sonnet', ['gatewayChat', 'gatewayMessages', 'gatewayChatModel']],
		['text to image', ['gatewayImageGenerate']],
		['image generation', ['gatewayImageGenerate']],
		['ai image', ['gatewayImageGenerate']],
		['text to video', ['gatewayVideoGenerate']],
		['image to video', ['gatewayVideoGenerate']],
		['video generation', ['gatewayVideoGenerate']],
		['ai video', ['gatewayVideoGenerate']],
	])('"%s" finds %j, before any other node of ours', (query, names) => {
		const ours = search(query, { aiCanvas: true }).filter((key) => key.startsWith(`${PACKAGE}.`)).map((key) => key.slice(PACKAGE.length + 1));
		expect(ours.slice(0, names.length).sort()).toEqual([...names].sort());
	});

	it('"openai" no longer finds Gateway Plant Create', () => {
		expect(rankOf('openai', 'gatewayPlantCreate')).toBe(0);
		expect(rankOf('openai', 'gatewayPlantCreate', { aiCanvas: true })).toBe(0);
	});
});

describe('node descriptions (the text under the name in the panel and the node details)', () => {
	it.each(OURS.map((n) => [n.description.name, n.description.description] as const))('%s: says what it does, without HTTP paths or wire fields', (_name, text) => {
		expect(text.length).toBeGreaterThan(20);
		expect(text).not.toMatch(/\/v1|\/plants|\b(POST|GET)\b|https?:|[a-z]_[a-z]/);
	});

	it('Gateway Video Generate lists its main action first, then the steps in the order they run', () => {
		const operation = byName('gatewayVideoGenerate').description.properties.find((p) => p.name === 'operation');
		const options = (operation?.options ?? []) as Array<{ value: string; action?: string }>;
		expect(options.map((o) => o.value)).toEqual(['generate', 'submit', 'getStatus', 'download']);
		expect(options[0].action).toBe('Generate a video and wait for it');
		expect(operation?.default).toBe('generate');
	});

	it("Gateway Image Generate's Size is a list of the common sizes that still takes any other size", () => {
		const options = byName('gatewayImageGenerate').description.properties.find((p) => p.name === 'options');
		const size = (options?.options as Array<{ name: string; type?: string; allowArbitraryValues?: boolean; options?: Array<{ value: string }>; hint?: string }>).find((o) => o.name === 'size');
		expect(size?.type).toBe('options');
		expect(size?.options?.map((o) => o.value).sort()).toEqual(['1024x1024', '1024x1536', '1536x1024', 'auto']);
		// A size of another model (e.g. 1792x1024) stays valid: typed as an expression, or kept from an older workflow.
		expect(size?.allowArbitraryValues).toBe(true);
		expect(size?.hint).toMatch(/Expression/);
	});

	it("each Task ID field's hint speaks about its own operation", () => {
		const taskIds = byName('gatewayVideoGenerate').description.properties.filter((p) => p.name === 'taskId');
		const hintFor = (operation: string) => taskIds.find((p) => (p.displayOptions?.show?.operation as string[] | undefined)?.includes(operation))?.hint ?? '';
		expect(hintFor('getStatus')).toMatch(/once/);
		expect(hintFor('getStatus')).not.toMatch(/Download/);
		expect(hintFor('download')).toMatch(/Download/);
		for (const field of taskIds) expect(field.placeholder).toMatch(/^e\.g\. /);
	});
});
