/**
 * POST /plants: the plant store's NewPlant. The body is written as JSON text by hand so that an
 * int64 id keeps every digit (a JS number would round ids beyond 2^53).
 */
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { GatewayError, missingResultError } from '../shared/failures/errors';
import { runPerItem } from '../shared/items/itemRunner';
import { parseJsonKeepingBigIntegers, toInt64Literal } from '../shared/items/json';
import type { GatewayClient } from '../shared/wire/transport';
import { fieldError, readText, requireText } from '../shared/items/validate';

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
	const rawId = ctx.getNodeParameter('id', itemIndex, '') as unknown;
	if (typeof rawId === 'object' && rawId !== null) throw fieldError(ctx, itemIndex, 'ID', 'must be a whole number, but the expression gave an object', 'Map a number field, e.g. {{ $json.id }}.');
	const { digits, problem } = toInt64Literal(rawId);
	if (problem || digits === undefined) throw fieldError(ctx, itemIndex, 'ID', problem ?? 'is invalid', 'The plant store takes an int64 whole number.');
	const name = requireText(ctx, itemIndex, 'name', 'Name', 'Every plant needs a name.');
	const tag = readText(ctx, itemIndex, 'tag', 'Tag');
	return { idDigits: digits, name, tag: tag === '' ? undefined : tag };
}

const CREATE_DEADLINE_MS = 30_000;
/** The item's deadline (the request with its retries and waits), as messages name it. */
const CREATE_LIMIT = `the ${CREATE_DEADLINE_MS / 1000} s limit for creating a plant`;

/**
 * Creating a plant changes the store, so the request is never re-sent after an answer that leaves
 * open whether the store acted (a 502, a dropped connection): the error says so instead.
 */
async function sendNewPlant(client: GatewayClient, input: NewPlantInput, itemIndex: number): Promise<IDataObject> {
	const what = 'Creating the plant';
	const plant = await client
		.json<IDataObject>(
			{ method: 'POST', path: '/plants', body: newPlantBody(input), itemIndex, deadlineMs: CREATE_DEADLINE_MS, limitName: CREATE_LIMIT, retry: { idempotent: false }, ifActed: ifCreated(input), what },
			parseJsonKeepingBigIntegers,
		)
		.catch((error: unknown) => {
			throw explainPlantFailure(error, input);
		});
	if (typeof plant.name !== 'string') throw missingResultError(what, 'plant (no "name")', plant, { itemIndex });
	return plant;
}

/** What a create that may have acted says: the plant may exist. */
function ifCreated(input: NewPlantInput): string {
	return `The request may have gone through even so: it was not sent again, so as not to create plant ${input.idDigits} twice. Check the store before running this item again.`;
}

function explainPlantFailure(error: unknown, input: NewPlantInput): unknown {
	if (!(error instanceof GatewayError)) return error;
	if (error.kind === 'bad_request' && /already exists|duplicate|exists/i.test(error.gatewayMessage ?? '')) {
		return error.with({ hint: `If an earlier run failed with a connection error, a timeout or a 5xx answer, it probably created plant ${input.idDigits}: check the store, and do not create it again.` });
	}
	return error;
}

export async function createPlant(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await runPerItem(this, {
		prepare: (itemIndex) => readNewPlant(this, itemIndex),
		run: async (input, itemIndex, client) => ({ json: await sendNewPlant(client, input, itemIndex) }),
	});
}
