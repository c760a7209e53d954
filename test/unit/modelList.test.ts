/**
 * The model picker shows each model's purpose, not only its id: n8n's list shows an entry's name
 * (the description is not shown there), so the purpose from the catalogue is part of the name,
 * while the value stays the bare id the gateway takes.
 */
import { GatewayChat } from '../../nodes/GatewayChat/GatewayChat.node';
import { GatewayChatModel } from '../../nodes/GatewayChatModel/GatewayChatModel.node';
import { GatewayMessages } from '../../nodes/GatewayMessages/GatewayMessages.node';
import { maxTokensField } from '../../nodes/shared/chat/chatDescriptions';
import { MAX_TOKENS_HINT, MODEL_CATALOGUE } from '../../nodes/shared/panel/models';
import { modelListEntries } from '../../nodes/shared/panel/modelSearch';

const chatModelOptions = () => new GatewayChatModel().description.properties.find((p) => p.name === 'options');

describe('the model list', () => {
	it("names each catalogue model with what it is for, and keeps the bare id as the value", () => {
		const entries = modelListEntries('video', []);
		expect(entries.map((entry) => [entry.value, entry.name])).toEqual([
			['video-2-0-260128', 'video-2-0-260128 — Video, quality first'],
			['video-2-0-fast-260128', 'video-2-0-fast-260128 — Video, balance of speed and cost'],
			['video-2-0-mini-260615', 'video-2-0-mini-260615 — Video, lowest price'],
		]);
	});

	it('names a model only the gateway lists by its id', () => {
		const entries = modelListEntries('chat', [{ id: 'zeta-chat-1' }, { id: 'chat-haiku-4-5' }]);
		expect(entries.map((entry) => entry.name)).toEqual(['chat-haiku-4-5 — Fast and cheap', 'zeta-chat-1']);
	});

	it('finds a model by the words of its purpose too', () => {
		expect(modelListEntries('chat', [], 'cheap').map((entry) => entry.value)).toEqual(['chat-haiku-4-5']);
		expect(modelListEntries('video', [], 'lowest price').map((entry) => entry.value)).toEqual(['video-2-0-mini-260615']);
	});
});

describe("the Max Tokens hint and the output-limit notices (Gateway Chat, Gateway Messages, Gateway Chat Model)", () => {
	// Which notice the editor shows is tested in nodeDescriptions.test.ts, with n8n's own display rules.
	const nodes = [new GatewayChat(), new GatewayMessages(), new GatewayChatModel()];
	const notices = nodes.map((node) => node.description.properties.filter((p) => p.type === 'notice').map((p) => p.displayName));

	it('are made from the catalogue: one notice per chat model with an output limit, in the words of the run', () => {
		const limited = MODEL_CATALOGUE.filter((m) => m.kind === 'chat' && m.maxOutputTokens);
		expect(notices[0]).toEqual(limited.map((model) => `${model.id} writes at most ${model.maxOutputTokens} tokens per answer`));
	});

	it('are the same in every node', () => {
		expect(notices[1]).toEqual(notices[0]);
		expect(notices[2]).toEqual(notices[0]);
		const chatModelMaxTokens = (chatModelOptions()?.options as Array<{ name: string; hint?: string }>).find((o) => o.name === 'maxTokens');
		expect(maxTokensField('x').hint).toBe(MAX_TOKENS_HINT);
		expect(chatModelMaxTokens?.hint).toBe(MAX_TOKENS_HINT);
	});
});
