/**
 * How n8n shows the nodes: subtitles evaluated the way the editor's canvas does (with the real
 * n8n-workflow, no input data), and the codex files (`*.node.json`) that place each node in the
 * node panel and link its documentation.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NodeHelpers, Workflow } from 'n8n-workflow';
import type { INodeParameters, INodeProperties, INodeType, INodeTypes } from 'n8n-workflow';

import { GatewayChat } from '../../nodes/GatewayChat/GatewayChat.node';
import { GatewayChatModel } from '../../nodes/GatewayChatModel/GatewayChatModel.node';
import { GatewayImageGenerate } from '../../nodes/GatewayImageGenerate/GatewayImageGenerate.node';
import { GatewayMessages } from '../../nodes/GatewayMessages/GatewayMessages.node';
import { GatewayAccount } from '../../nodes/GatewayAccount/GatewayAccount.node';
import { GatewayPlantCreate } from '../../nodes/GatewayPlantCreate/GatewayPlantCreate.node';
import { GatewayVideoGenerate } from '../../nodes/GatewayVideoGenerate/GatewayVideoGenerate.node';
import { limitedChatModels, MAX_TOKENS_HINT, MODEL_CATALOGUE } from '../../nodes/shared/panel/models';
import { defaultDir, TESTED_VERSIONS } from '../../scripts/n8n/runtime';

const ROOT = path.resolve(__dirname, '..', '..');
const NODES: Record<string, INodeType> = {
	GatewayChat: new GatewayChat(),
	GatewayChatModel: new GatewayChatModel(),
	GatewayImageGenerate: new GatewayImageGenerate(),
	GatewayMessages: new GatewayMessages(),
	GatewayAccount: new GatewayAccount(),
	GatewayPlantCreate: new GatewayPlantCreate(),
	GatewayVideoGenerate: new GatewayVideoGenerate(),
};

/** The subtitle as the canvas shows it: n8n fills in defaults, then evaluates without input data. */
function subtitle(type: INodeType, parameters: INodeParameters = {}): unknown {
	const node = { id: 'n1', name: 'Node', type: `n8n-nodes-model-gateway.${type.description.name}`, typeVersion: 1, position: [0, 0] as [number, number], parameters: {} };
	node.parameters = NodeHelpers.getNodeParameters(type.description.properties, parameters, true, false, node, type.description) ?? {};
	const nodeTypes = { getByName: () => type, getByNameAndVersion: () => type, getKnownTypes: () => ({}) } as unknown as INodeTypes;
	const workflow = new Workflow({ nodes: [node], connections: {}, active: false, nodeTypes });
	return workflow.expression.getSimpleParameterValue(node, type.description.subtitle as string, 'internal', {});
}

const byId = (value: string) => ({ __rl: true, mode: 'id', value });

describe('subtitles on the canvas', () => {
	it('show the operation and the model', () => {
		expect(subtitle(NODES.GatewayChat)).toBe('Chat: chat-sonnet-5');
		expect(subtitle(NODES.GatewayChatModel)).toBe('Model: chat-sonnet-5');
		expect(subtitle(NODES.GatewayMessages, { model: byId('chat-opus-4-8') })).toBe('Message: chat-opus-4-8');
		expect(subtitle(NODES.GatewayImageGenerate)).toBe('Generate: img-image-2');
		expect(subtitle(NODES.GatewayVideoGenerate)).toBe('Generate: video-2-0-fast-260128');
		expect(subtitle(NODES.GatewayVideoGenerate, { operation: 'submit', model: byId('video-2-0-mini-260615') })).toBe('Submit: video-2-0-mini-260615');
	});

	it('leave the model out where the operation sends none', () => {
		expect(subtitle(NODES.GatewayVideoGenerate, { operation: 'getStatus', model: byId('video-2-0-260128') })).toBe('Get Status');
		expect(subtitle(NODES.GatewayVideoGenerate, { operation: 'download' })).toBe('Download');
		expect(subtitle(NODES.GatewayAccount)).toBe('Get Balance');
	});

	it("name every operation as the node's Operation field does (read from it, never written twice)", () => {
		for (const type of Object.values(NODES)) {
			const field = type.description.properties.find(({ name }) => name === 'operation');
			for (const option of field?.options ?? []) {
				if (!('value' in option)) continue;
				expect([type.description.name, String(subtitle(type, { operation: option.value })).split(':')[0]]).toEqual([type.description.name, option.name]);
			}
		}
	});

	it('show the plant name when it is typed in', () => {
		expect(subtitle(NODES.GatewayPlantCreate, { id: '1', name: 'Monstera' })).toBe('Create plant: Monstera');
		expect(subtitle(NODES.GatewayPlantCreate)).toBe('Create plant');
	});

	it('still show the operation when an expression sets the field (resolving it would throw: no input data)', () => {
		expect(subtitle(NODES.GatewayPlantCreate, { id: '={{ $json.id }}', name: '={{ $json.name }}' })).toBe('Create plant');
		expect(subtitle(NODES.GatewayChat, { model: byId('={{ $json.model }}') })).toBe('Chat');
	});
});

describe('codex files', () => {
	// n8n's node-panel categories, and the AI subcategories its editor groups by.
	const CATEGORIES = ['AI', 'Analytics', 'Communication', 'Data & Storage', 'Development', 'Finance & Accounting', 'Marketing', 'Miscellaneous', 'Productivity', 'Sales', 'Utility'];
	const AI_SUBCATEGORIES = ['Agents', 'Chains', 'Miscellaneous', 'Root Nodes', 'Tools'];
	// A chat-model sub-node is filed as n8n files its own chat models (its OpenAI Chat Model's codex).
	const CHAT_MODEL_CODEX = { categories: ['AI'], subcategories: { AI: ['Language Models', 'Root Nodes'], 'Language Models': ['Chat Models (Recommended)'] } };

	describe.each(Object.keys(NODES))('%s', (name) => {
		const codex = JSON.parse(fs.readFileSync(path.join(ROOT, 'nodes', name, `${name}.node.json`), 'utf8'));
		const { description } = NODES[name];

		it('names the node as n8n registers it, version 1', () => {
			expect(codex.node).toBe(`n8n-nodes-model-gateway.${description.name}`);
			expect(codex).toMatchObject({ nodeVersion: '1.0', codexVersion: '1.0' });
		});

		it("uses n8n's categories; AI nodes are root nodes, not sub-nodes", () => {
			expect(codex.categories.length).toBeGreaterThan(0);
			for (const category of codex.categories) expect(CATEGORIES).toContain(category);
			if ((description.outputs as string[]).includes('ai_languageModel')) {
				expect(codex).toMatchObject(CHAT_MODEL_CODEX);
				return;
			}
			for (const key of Object.keys(codex.subcategories ?? {})) expect(codex.categories).toContain(key);
			if (codex.categories.includes('AI')) {
				// Without "Root Nodes" the editor lists a node under "<subcategory> (sub-nodes)".
				expect(codex.subcategories.AI).toContain('Root Nodes');
				for (const sub of codex.subcategories.AI) expect(AI_SUBCATEGORIES).toContain(sub);
			}
		});

		it('leaves its documentation links to the build, which makes them from package.json (see docsLinks.test.ts)', () => {
			expect(codex.resources).toBeUndefined();
		});

		it('has a light and a dark icon', () => {
			const icon = description.icon as { light: string; dark: string };
			for (const file of [icon.light, icon.dark]) {
				expect(file).toMatch(/^file:.+\.svg$/);
				expect(fs.existsSync(path.join(ROOT, 'nodes', name, file.slice('file:'.length)))).toBe(true);
			}
			expect(icon.light).not.toBe(icon.dark);
		});
	});
});

// n8n's display rules from both lines the package supports: the devDependency (2.x), and the
// n8n-workflow of the n8n 1.x the e2e suite installs, where that is on this machine.
const N8N1_WORKFLOW = path.join(defaultDir(TESTED_VERSIONS.n8n1), 'node_modules', 'n8n-workflow');
const DISPLAY_RULES: Array<[string, typeof NodeHelpers]> = [
	[`n8n-workflow ${(require('n8n-workflow/package.json') as { version: string }).version}`, NodeHelpers],
	...(fs.existsSync(N8N1_WORKFLOW)
		? [[`n8n ${TESTED_VERSIONS.n8n1}'s n8n-workflow`, (require(N8N1_WORKFLOW) as { NodeHelpers: typeof NodeHelpers }).NodeHelpers] as [string, typeof NodeHelpers]]
		: []),
];

describe.each(DISPLAY_RULES)("the picked model's output limit is a notice under Model (%s)", (_rules, helpers) => {
	// Where each node keeps Max Tokens: at the top, or in the Options collection (the Chat Model).
	const HOMES: Array<[string, string]> = [
		['GatewayChat', ''],
		['GatewayMessages', ''],
		['GatewayChatModel', 'options'],
	];
	const chatModels = MODEL_CATALOGUE.filter((model) => model.kind === 'chat');
	const limited = limitedChatModels();
	const allLimits = [...new Set(limited.map((model) => String(model.maxOutputTokens)))];

	/**
	 * The fields the editor shows for this Model value, decided by n8n-workflow's own
	 * displayParameterPath, called as the editor's parameter list calls it: the node's parameters
	 * under `parameters`, and the path of the level the field is on.
	 */
	function shown(name: string, home: string, model: unknown): { notices: INodeProperties[]; maxTokens: INodeProperties[] } {
		const type = NODES[name];
		const parameters: INodeParameters = { model: model as INodeParameters['model'], maxTokens: 4096, options: { maxTokens: 4096 } };
		const node = { id: 'n1', name: 'Node', type: `n8n-nodes-model-gateway.${type.description.name}`, typeVersion: 1, position: [0, 0] as [number, number], parameters };
		const displayed = (fields: INodeProperties[], at: string) => fields.filter((field) => helpers.displayParameterPath({ parameters }, field, at, node, type.description));
		const top = type.description.properties;
		const maxTokensLevel = home ? ((top.find((p) => p.name === home)?.options ?? []) as INodeProperties[]) : top;
		return {
			notices: displayed(top.filter((field) => field.type === 'notice'), 'parameters'),
			maxTokens: displayed(maxTokensLevel.filter((field) => field.name === 'maxTokens'), home ? `parameters.${home}` : 'parameters'),
		};
	}

	describe.each(HOMES)('%s', (name, home) => {
		it.each(limited.map((model) => [model.id, model.maxOutputTokens] as const))('shows the one notice naming the limit of %s (%d), picked from the list or by ID', (id, limit) => {
			for (const [mode, value] of [['list', id], ['id', id]]) {
				const { notices, maxTokens } = shown(name, home, { __rl: true, mode, value });
				expect(notices).toHaveLength(1);
				expect(notices[0].displayName).toBe(`${id} writes at most ${limit} tokens per answer`);
				expect(maxTokens).toHaveLength(1);
				expect(maxTokens[0].hint).toBe(MAX_TOKENS_HINT);
			}
		});

		it.each([
			['a catalogue model without a known limit', chatModels.find((model) => model.maxOutputTokens === undefined)?.id],
			['a model ID typed by hand', 'my-own-model'],
			['a known ID inside a longer one', 'chat-haiku-4-5-preview'],
			['a known ID with other words', 'chat-haiku-4-5 chat-sonnet-5'],
			['a known ID typed with spaces around it (the run trims it; an exact rule is what n8n reads cheaply)', ' chat-haiku-4-5 '],
			['an expression', '={{ $json.model }}'],
			['an expression naming a known model', "={{ 'chat-haiku-4-5' }}"],
			['no model yet', ''],
		])('shows no limit notice for %s, and Max Tokens with its general hint', (_what, value) => {
			const { notices, maxTokens } = shown(name, home, { __rl: true, mode: 'id', value });
			expect(notices).toEqual([]);
			expect(maxTokens).toHaveLength(1);
			expect(maxTokens[0].hint).toBe(MAX_TOKENS_HINT);
			for (const limit of allLimits) expect(maxTokens[0].hint).not.toContain(limit);
		});

		it('keeps a Max Tokens value whichever model is picked, and saves nothing for the notices', () => {
			const type = NODES[name];
			for (const value of [...limited.map((model) => model.id), 'my-own-model', '={{ $json.model }}']) {
				const given = home ? { model: byId(value), options: { maxTokens: 1000 } } : { model: byId(value), maxTokens: 1000 };
				// As a run reads a saved workflow (no defaults added), and as the editor does (defaults added).
				for (const returnDefaults of [false, true]) {
					const kept = helpers.getNodeParameters(type.description.properties, given, returnDefaults, false, null, type.description) ?? {};
					expect(home ? (kept[home] as INodeParameters).maxTokens : kept.maxTokens).toBe(1000);
					if (!returnDefaults) expect(Object.keys(kept).filter((key) => key.startsWith('outputLimit'))).toEqual([]);
				}
			}
		});
	});
});

describe.each(DISPLAY_RULES)('Idle Timeout is shown where it applies (%s)', (_rules, helpers) => {
	function idleTimeoutShown(name: string, parameters: INodeParameters): boolean {
		const type = NODES[name];
		const node = { id: 'n1', name: 'Node', type: `n8n-nodes-model-gateway.${type.description.name}`, typeVersion: 1, position: [0, 0] as [number, number], parameters };
		const options = (type.description.properties.find((p) => p.name === 'options')?.options ?? []) as INodeProperties[];
		const field = options.find((option) => option.name === 'idleTimeoutSeconds');
		expect(field).toBeDefined();
		return helpers.displayParameterPath({ parameters }, field as INodeProperties, 'parameters.options', node, type.description);
	}

	it.each(['GatewayChat', 'GatewayMessages'])('%s: with Stream on only (a whole answer has no idle limit)', (name) => {
		expect(idleTimeoutShown(name, { stream: true, options: {} })).toBe(true);
		expect(idleTimeoutShown(name, { stream: false, options: {} })).toBe(false);
	});

	it('the Chat Model: always (it streams whenever its AI node does)', () => {
		expect(idleTimeoutShown('GatewayChatModel', { options: {} })).toBe(true);
	});
});

describe('Gateway Account', () => {
	it('shows its operation only: one balance read serves the whole run, so a Concurrency option would do nothing', () => {
		expect(NODES.GatewayAccount.description.properties.map((property) => property.name)).toEqual(['operation']);
	});
});
