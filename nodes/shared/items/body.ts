/**
 * The one way every node builds a request body: Extra Body Fields first, the node's own fields on
 * top (a field the node leaves unset is not sent). The objects named in `mergedObjects` (e.g.
 * `output_config`) are merged key by key instead, so extra keys inside them survive.
 */
import type { IDataObject } from 'n8n-workflow';

function isPlainObject(value: unknown): value is IDataObject {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function requestBody(extraBody: IDataObject, fields: IDataObject, mergedObjects: readonly string[] = []): IDataObject {
	const body: IDataObject = { ...extraBody };
	for (const [key, value] of Object.entries(fields)) {
		if (value === undefined) continue;
		const extra = body[key];
		body[key] = mergedObjects.includes(key) && isPlainObject(value) && isPlainObject(extra) ? { ...extra, ...value } : value;
	}
	return body;
}
