/**
 * Get Balance: one balance read per input item (one item out per item in, paired), a free read
 * with its own deadline. The numbers are data, so a flow compares them with an If node.
 */
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { runPerItem } from '../shared/items/itemRunner';
import { BALANCE_DEADLINE_MS, BALANCE_LIMIT_NAME, readBalance } from '../shared/account/readBalance';
import { itemDeadline } from '../shared/wire/transport';

export async function getBalance(ctx: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await runPerItem(ctx, {
		prepare: () => undefined,
		run: async (_input, itemIndex, client) => ({
			json: await readBalance(client, { itemIndex, deadlineMs: BALANCE_DEADLINE_MS, ...itemDeadline(BALANCE_DEADLINE_MS, BALANCE_LIMIT_NAME) }),
		}),
	});
}
