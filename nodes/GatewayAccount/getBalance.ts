/**
 * Get Balance: one balance read per run, shared by every item (one item out per item in, paired):
 * the balance is the key's, and no item changes it. A free read with its own deadline. The numbers
 * are data, so a flow compares them with an If node.
 */
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { Balance } from '../shared/account/balance';
import { runPerItem } from '../shared/items/itemRunner';
import { BALANCE_DEADLINE_MS, BALANCE_LIMIT_NAME, readBalance } from '../shared/account/readBalance';
import { itemDeadline } from '../shared/wire/transport';

export async function getBalance(ctx: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	// Once per run: new-api allows 20 reads of its balance route per 20 minutes from one address.
	let read: Promise<Balance> | undefined;
	return await runPerItem(ctx, {
		prepare: () => undefined,
		run: async (_input, itemIndex, client) => {
			read ??= readBalance(client, { itemIndex, deadlineMs: BALANCE_DEADLINE_MS, ...itemDeadline(BALANCE_DEADLINE_MS, BALANCE_LIMIT_NAME) });
			return { json: { ...(await read) } };
		},
	});
}
