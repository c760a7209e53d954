/**
 * The model lists of the resource locators: what `GET /v1/models` reports of the right kind,
 * described from the catalogue where we know the model, and the catalogue itself when the
 * gateway lists none of that kind (or cannot be reached while the user edits).
 */
import type { ILoadOptionsFunctions, INodeListSearchItems, INodeListSearchResult } from 'n8n-workflow';

import { catalogueOf, describeModel, findModel, guessKind } from './models';
import type { ModelKind } from './models';
import { GatewayClient } from '../wire/transport';

interface GatewayModel {
	id?: unknown;
	supported_endpoint_types?: unknown;
}

/** Pure: the list entries of one kind from the gateway's model records, filtered by text. */
export function modelListEntries(kind: ModelKind, gatewayModels: readonly GatewayModel[], filter = ''): INodeListSearchItems[] {
	const listed = new Set<string>();
	for (const model of gatewayModels) {
		if (typeof model?.id !== 'string' || model.id === '') continue;
		const types = Array.isArray(model.supported_endpoint_types) ? model.supported_endpoint_types.map(String) : [];
		if (guessKind(model.id, types) === kind) listed.add(model.id);
	}
	// The catalogue's models first, in its order, then what only the gateway offers.
	const ids =
		listed.size === 0
			? catalogueOf(kind).map((model) => model.id)
			: [...catalogueOf(kind).map((model) => model.id).filter((id) => listed.has(id)), ...[...listed].filter((id) => !findModel(id)).sort()];
	const needle = filter.trim().toLowerCase();
	return ids
		.map((id) => {
			const known = findModel(id);
			// n8n's list shows the name only: the catalogue's purpose goes into it, the value stays the id.
			const name = known ? `${id} — ${known.description}` : id;
			return { name, value: id, description: known ? describeModel(known) : listed.has(id) ? 'Listed by the gateway' : undefined };
		})
		.filter((entry) => needle === '' || entry.name.toLowerCase().includes(needle));
}

/** The list search of one kind, as n8n calls it: with the editor's context as `this`. */
function searchOf(kind: ModelKind) {
	return async function (this: ILoadOptionsFunctions, filter?: string): Promise<INodeListSearchResult> {
		let gatewayModels: GatewayModel[] = [];
		try {
			const client = await GatewayClient.create(this);
			const answer = await client.json<{ data?: GatewayModel[] }>({ path: '/v1/models', deadlineMs: 15_000, retry: { maxRetries: 1 }, what: 'Listing the models' });
			gatewayModels = Array.isArray(answer?.data) ? answer.data : [];
		} catch {
			// While editing, an unreachable gateway should not leave the picker empty: the catalogue.
		}
		return { results: modelListEntries(kind, gatewayModels, filter) };
	};
}

export const modelSearch = { searchImageModels: searchOf('image'), searchVideoModels: searchOf('video'), searchChatModels: searchOf('chat') };
