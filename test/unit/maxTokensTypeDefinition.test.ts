/**
 * What n8n 2.x's AI builders are told about Max Tokens (found in review, 847373f). n8n 2.41.1
 * describes a community node to them (instance AI, MCP `get_node_types`) with a type definition it
 * synthesises from the node description (@n8n/workflow-sdk generateNodeTypeFile), which keeps the
 * first field of each name and turns its display rules into `@displayOptions` lines. So the
 * description itself must say it plainly: one `maxTokens` per node, with no display rules, and the
 * per-model limits only in notices, which hold no value and sit at the top level.
 */
import type { INodeProperties, INodeTypeDescription } from 'n8n-workflow';

import { GatewayChat } from '../../nodes/GatewayChat/GatewayChat.node';
import { GatewayChatModel } from '../../nodes/GatewayChatModel/GatewayChatModel.node';
import { GatewayMessages } from '../../nodes/GatewayMessages/GatewayMessages.node';
import { limitedChatModels } from '../../nodes/shared/panel/models';

const NODES: Array<[string, INodeTypeDescription, string]> = [
	['GatewayChat', new GatewayChat().description, ''],
	['GatewayMessages', new GatewayMessages().description, ''],
	['GatewayChatModel', new GatewayChatModel().description, 'options'],
];

/** Every field of the description, at the top and inside collections, with where it is. */
function allFields(fields: INodeProperties[], at = ''): Array<[string, INodeProperties]> {
	return fields.flatMap((field) => [
		[at, field] as [string, INodeProperties],
		...allFields(((field.type === 'collection' ? field.options : []) ?? []) as INodeProperties[], at ? `${at}.${field.name}` : field.name),
	]);
}

describe('Max Tokens, as the node description gives it to n8n (and to its AI builders)', () => {
	it.each(NODES)('%s declares maxTokens once, where the contract has it, with no display rules', (_name, description, home) => {
		const maxTokens = allFields(description.properties).filter(([, field]) => field.name === 'maxTokens');
		expect(maxTokens).toHaveLength(1);
		const [at, field] = maxTokens[0];
		expect(at).toBe(home);
		expect(field).toMatchObject({ type: 'number', default: 4096 });
		expect(field.displayOptions).toBeUndefined();
	});

	it.each(NODES)('%s: its limit notices are display-only, at the top level, and only Model decides them', (_name, description) => {
		const notices = allFields(description.properties).filter(([, field]) => field.type === 'notice');
		expect(notices.length).toBeGreaterThan(0);
		for (const [at, notice] of notices) {
			expect(at).toBe('');
			expect(notice.default).toBe('');
			expect(notice.displayOptions?.show).toBeUndefined();
			expect(Object.keys(notice.displayOptions?.hide ?? {})).toEqual(['model']);
			// hidden unless Model is exactly one catalogue model's ID
			const conditions = notice.displayOptions?.hide?.model as Array<{ _cnd: { not: string } }>;
			expect(conditions).toHaveLength(1);
			expect(limitedChatModels().map((model) => model.id)).toContain(conditions[0]._cnd.not);
		}
		expect(new Set(notices.map(([, notice]) => notice.name)).size).toBe(notices.length);
		// No field name is declared twice at one level (a duplicate member in the type definition).
		for (const level of [description.properties, ...description.properties.filter((p) => p.type === 'collection').map((p) => p.options as INodeProperties[])]) {
			expect(new Set(level.map((field) => field.name)).size).toBe(level.length);
		}
	});
});
