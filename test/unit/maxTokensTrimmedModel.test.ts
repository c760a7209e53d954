/**
 * A model ID typed with spaces around it: the run trims it (readModelId) and checks Max Tokens
 * against that model's limit, so the panel names the same limit (found in review, f8be86a).
 */
import { NodeHelpers } from 'n8n-workflow';
import type { INodeTypeDescription } from 'n8n-workflow';

import { GatewayChat } from '../../nodes/GatewayChat/GatewayChat.node';
import { GatewayChatModel } from '../../nodes/GatewayChatModel/GatewayChatModel.node';
import { GatewayMessages } from '../../nodes/GatewayMessages/GatewayMessages.node';
import { findModel } from '../../nodes/shared/panel/models';

const NODES: Array<[string, INodeTypeDescription]> = [
	['GatewayChat', new GatewayChat().description],
	['GatewayMessages', new GatewayMessages().description],
	['GatewayChatModel', new GatewayChatModel().description],
];

describe('the output limit for a model ID typed with spaces around it', () => {
	it.each(NODES)('%s names the limit the run will enforce', (_name, description) => {
		const typed = ' chat-haiku-4-5 ';
		expect(findModel(typed.trim())?.maxOutputTokens).toBe(64000);
		const parameters = { model: { __rl: true, mode: 'id', value: typed }, maxTokens: 1000, options: { maxTokens: 1000 } };
		const node = { id: 'n1', name: 'Node', type: `n8n-nodes-model-gateway.${description.name}`, typeVersion: 1, position: [0, 0] as [number, number], parameters };
		const shown = description.properties.filter((field) => field.type === 'notice' && NodeHelpers.displayParameterPath({ parameters }, field, 'parameters', node, description));
		expect(shown).toHaveLength(1);
		expect(shown[0].displayName).toContain('64000');
	});
});
