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

describe("the Max Tokens hint (Gateway Chat, Gateway Messages, Gateway Chat Model)", () => {
	// n8n shows a hint as written, whatever model is picked: so it gives each model's limit, from
	// the catalogue, instead of one number that is wrong for some of them.
	const hints = [maxTokensField('x').hint, (chatModelOptions()?.options as Array<{ name: string; hint?: string }>).find((o) => o.name === 'maxTokens')?.hint];

	it.each(hints.map((hint, index) => [index, hint]))('hint %d names every catalogue chat model with its output limit', (_index, hint) => {
		for (const model of MODEL_CATALOGUE.filter((m) => m.kind === 'chat' && m.maxOutputTokens)) {
			expect(hint).toContain(model.id);
			expect(hint).toContain(String(model.maxOutputTokens));
		}
		expect(hint).toMatch(/not limited here/);
	});

	it('is the same hint in every node', () => {
		expect(hints[0]).toBe(hints[1]);
	});
});
