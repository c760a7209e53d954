/**
 * The output-limit notices under Model, as n8n reads them. A model ID typed with spaces around it:
 * the run trims it (readModelId) and checks Max Tokens against that model's limit; the panel shows
 * no notice for it (never another model's), since an exact rule is what n8n reads cheaply.
 */
import { NodeHelpers } from 'n8n-workflow';
import type { INodeProperties, INodeTypeDescription } from 'n8n-workflow';

import * as fs from 'fs';
import * as path from 'path';

import { GatewayApi } from '../../credentials/GatewayApi.credentials';
import { GatewayChat } from '../../nodes/GatewayChat/GatewayChat.node';
import { GatewayChatModel } from '../../nodes/GatewayChatModel/GatewayChatModel.node';
import { GatewayMessages } from '../../nodes/GatewayMessages/GatewayMessages.node';
import { findModel } from '../../nodes/shared/panel/models';

const NODES: Array<[string, INodeTypeDescription]> = [
	['GatewayChat', new GatewayChat().description],
	['GatewayMessages', new GatewayMessages().description],
	['GatewayChatModel', new GatewayChatModel().description],
];

function shownNotices(description: INodeTypeDescription, value: string): INodeProperties[] {
	const parameters = { model: { __rl: true, mode: 'id', value }, maxTokens: 1000, options: { maxTokens: 1000 } };
	const node = { id: 'n1', name: 'Node', type: `n8n-nodes-model-gateway.${description.name}`, typeVersion: 1, position: [0, 0] as [number, number], parameters };
	return description.properties.filter((field) => field.type === 'notice' && NodeHelpers.displayParameterPath({ parameters }, field, 'parameters', node, description));
}

describe('the output-limit notice under Model', () => {
	it.each(NODES)('%s names the picked model\'s limit, and nothing for an ID typed with spaces, another ID or an expression', (_name, description) => {
		expect(shownNotices(description, 'chat-haiku-4-5').map((field) => field.displayName)).toEqual(['chat-haiku-4-5 writes at most 64000 tokens per answer']);
		const typed = ' chat-haiku-4-5 ';
		expect(findModel(typed.trim())?.maxOutputTokens).toBe(64000);
		expect(shownNotices(description, typed)).toEqual([]);
		expect(shownNotices(description, 'my-own-model')).toEqual([]);
		expect(shownNotices(description, '={{ $json.model }}')).toEqual([]);
		expect(shownNotices(description, '=chat-haiku-4-5')).toEqual([]);
	});
});

/** Every display rule of a description, at any depth. */
function displayRules(fields: INodeProperties[]): unknown[] {
	return fields.flatMap((field) => [
		...Object.values(field.displayOptions?.show ?? {}),
		...Object.values(field.displayOptions?.hide ?? {}),
		...displayRules(((field.options ?? []) as INodeProperties[]).filter((option) => typeof option === 'object' && 'type' in option)),
		...((field.options ?? []) as Array<{ values?: INodeProperties[] }>).flatMap((option) => displayRules(option.values ?? [])),
	]);
}

describe('display rules n8n reads cheaply', () => {
	// Every node in nodes/ (each folder with a <Name>.node.ts) and the credential.
	const nodesDir = path.join(__dirname, '../../nodes');
	const described: Array<[string, INodeProperties[]]> = fs
		.readdirSync(nodesDir)
		.filter((dir) => fs.existsSync(path.join(nodesDir, dir, `${dir}.node.ts`)))
		.map((dir) => {
			const NodeClass = require(path.join(nodesDir, dir, `${dir}.node`))[dir] as new () => { description: INodeTypeDescription };
			return [dir, new NodeClass().description.properties];
		});
	described.push(['GatewayApi credential', new GatewayApi().properties]);

	it('covers every node', () => {
		expect(described.length).toBeGreaterThanOrEqual(7);
	});

	it('no node or credential uses a regex rule: n8n runs each through its guarded regex engine on every read of the parameters (1 ms a read for four of them)', () => {
		const rules = described.flatMap(([name, properties]) => displayRules(properties).flat().map((rule) => [name, rule] as const));
		expect(rules.filter(([, rule]) => typeof rule === 'object' && rule !== null && '_cnd' in rule).length).toBeGreaterThan(0);
		expect(rules.filter(([, rule]) => typeof rule === 'object' && rule !== null && 'regex' in ((rule as { _cnd?: object })._cnd ?? {}))).toEqual([]);
	});
});
