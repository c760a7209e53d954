/**
 * The model picker shows each model's purpose, not only its id: n8n's list shows an entry's name
 * (the description is not shown there), so the purpose from the catalogue is part of the name,
 * while the value stays the bare id the gateway takes.
 */
import { GatewayChatModel } from '../../nodes/GatewayChatModel/GatewayChatModel.node';
import { maxTokensField } from '../../nodes/shared/chat/chatDescriptions';
import { MODEL_CATALOGUE } from '../../nodes/shared/panel/models';
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

describe('the Max Tokens hints (Gateway Chat, Gateway Messages, Gateway Chat Model)', () => {
	// One copy of the field per catalogue chat model with a limit, and one general: which one the
	// editor shows is tested in nodeDescriptions.test.ts, with n8n's own display rules.
	const hints = [
		maxTokensField('x').map((field) => field.hint),
		(chatModelOptions()?.options as Array<{ name: string; hint?: string }>).filter((o) => o.name === 'maxTokens').map((o) => o.hint),
	];

	it('are made from the catalogue: one per chat model with an output limit, and the general one', () => {
		const limited = MODEL_CATALOGUE.filter((m) => m.kind === 'chat' && m.maxOutputTokens);
		expect(hints[0]).toHaveLength(limited.length + 1);
		for (const model of limited) expect(hints[0]).toContain(`${model.id} writes at most ${model.maxOutputTokens} tokens per answer`);
	});

	it('are the same in every node', () => {
		expect(hints[0]).toEqual(hints[1]);
	});
});
