/**
 * POST /plants: the plant store's NewPlant. The body is written as JSON text by hand so that an
 * int64 id keeps every digit (a JS number would round ids beyond 2^53).
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { runPerItem } from '../shared/itemRunner';
import { parseJsonKeepingBigIntegers, toInt64Literal } from '../shared/json';
import { fieldError, requireText } from '../shared/validate';

export interface NewPlantInput {
	idDigits: string;
	name: string;
	tag?: string;
}

/** The NewPlant JSON body, with the id's exact digits. */
export function newPlantBody(input: NewPlantInput): string {
	const fields = [`"id":${input.idDigits}`, `"name":${JSON.stringify(input.name)}`];
	if (input.tag !== undefined) fields.push(`"tag":${JSON.stringify(input.tag)}`);
	return `{${fields.join(',')}}`;
}

export function readNewPlant(ctx: IExecuteFunctions, itemIndex: number): NewPlantInput {
	const { digits, problem } = toInt64Literal(ctx.getNodeParameter('id', itemIndex, '') as unknown);
	if (problem || digits === undefined) throw fieldError(ctx, itemIndex, 'ID', problem ?? 'is invalid', 'The plant store takes an int64 whole number.');
	const name = requireText(ctx, itemIndex, 'name', 'Name', 'Every plant needs a name.');
	const tag = String(ctx.getNodeParameter('tag', itemIndex, '') ?? '').trim();
	return { idDigits: digits, name, tag: tag === '' ? undefined : tag };
}

export async function createPlant(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await runPerItem(this, {
		prepare: (itemIndex) => readNewPlant(this, itemIndex),
		run: async (input, itemIndex, client) => {
			const response = await client.text({
				method: 'POST',
				path: '/plants',
				body: newPlantBody(input),
				itemIndex,
				timeoutMs: 30_000,
				what: 'Creating the plant',
			});
			const plant = response.body.trim() === '' ? {} : parseJsonKeepingBigIntegers<IDataObject>(response.body);
			return { json: plant };
		},
	});
}
