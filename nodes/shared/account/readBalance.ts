/**
 * Reads the key's balance from the gateway: new-api's `GET /api/usage/token/` (with its slash:
 * without it new-api answers a 301), else the OpenAI-style dashboard pair (one-api and others),
 * and `GET /api/status` for how quota converts to money. Promises: every request is a free read
 * through the shared transport (retried like a status check unless the caller says otherwise),
 * all of them inside one deadline; a route the gateway does not serve (a 404, a page or text
 * instead of JSON, an answer without a balance) moves on to the next interface, any other
 * failure (a refused key, a timeout) is reported as it is; a gateway that serves neither gets
 * one error that names both paths. Failures are GatewayErrors: masking happens at the edge.
 */
import type { IDataObject } from 'n8n-workflow';

import { GatewayError } from '../failures/errors';
import type { GatewayCall, GatewayClient } from '../wire/transport';
import {
	DASHBOARD_USAGE_PATH,
	STATUS_PATH,
	SUBSCRIPTION_PATH,
	NEWAPI_USAGE_PATH,
	UnreadableBalance,
	balanceFromDashboard,
	balanceFromTokenUsage,
	readMoneyRule,
} from './balance';
import type { Balance, MoneyRule } from './balance';

export const BALANCE_DEADLINE_MS = 30_000;
export const BALANCE_LIMIT_NAME = `the ${BALANCE_DEADLINE_MS / 1000} s limit for reading the balance`;
const WHAT = "Reading the key's balance";

/** How the requests of one balance read are sent: its deadline, its item, its retry rule. */
export type BalanceCall = Pick<GatewayCall, 'itemIndex' | 'notAfter' | 'limitName' | 'retry' | 'deadlineMs'>;

/** A route this gateway does not serve, as the failure of asking for it shows. */
function isRouteMissing(error: unknown): boolean {
	return error instanceof GatewayError && (error.kind === 'not_found' || error.kind === 'protocol');
}

/** One GET; undefined when the gateway does not serve the path. */
async function getIfServed(client: GatewayClient, path: string, call: BalanceCall): Promise<IDataObject | undefined> {
	const unlessMissing = async (error: unknown) => (isRouteMissing(error) ? undefined : await Promise.reject(error));
	return await client.json<IDataObject>({ ...call, method: 'GET', path, what: `${WHAT} (GET ${path})` }).catch(unlessMissing);
}

async function moneyRule(client: GatewayClient, call: BalanceCall): Promise<MoneyRule | undefined> {
	const status = await getIfServed(client, STATUS_PATH, call);
	return status ? readMoneyRule(status) : undefined;
}

/** An answer that is no balance (an UnreadableBalance from the reader) as a GatewayError; any other error as it is. */
function unreadable(path: string, reason: unknown, call: BalanceCall): unknown {
	if (reason instanceof Error && !(reason instanceof UnreadableBalance)) return reason;
	const why = reason instanceof Error ? reason.message : String(reason);
	return new GatewayError({
		kind: 'protocol',
		headline: `${WHAT} failed: the answer of GET ${path} is not a balance (${why})`,
		hint: 'Check the Base URL of the credential: it must be the gateway itself.',
		itemIndex: call.itemIndex,
	});
}

function neitherServed(call: BalanceCall): GatewayError {
	return new GatewayError({
		kind: 'not_found',
		headline: `${WHAT} failed: the gateway answers neither GET ${NEWAPI_USAGE_PATH} (new-api) nor GET ${SUBSCRIPTION_PATH} (OpenAI-style, one-api)`,
		hint: 'This gateway reports no balance for a key, or the Base URL is not the gateway itself (give its address without /v1). Its own console may show the balance.',
		itemIndex: call.itemIndex,
	});
}

/** new-api's own route; undefined when this gateway does not serve it (or answers it with no balance). */
async function fromTokenUsage(client: GatewayClient, call: BalanceCall): Promise<Balance | undefined> {
	const usage = await getIfServed(client, NEWAPI_USAGE_PATH, call);
	if (!usage || typeof usage.data !== 'object' || usage.data === null || Array.isArray(usage.data)) return undefined;
	const rule = await moneyRule(client, call);
	try {
		return balanceFromTokenUsage(usage.data as IDataObject, rule);
	} catch (error) {
		throw unreadable(NEWAPI_USAGE_PATH, error, call);
	}
}

async function fromDashboard(client: GatewayClient, call: BalanceCall): Promise<Balance | undefined> {
	const subscription = await getIfServed(client, SUBSCRIPTION_PATH, call);
	if (!subscription) return undefined;
	const usage = await getIfServed(client, DASHBOARD_USAGE_PATH, call);
	if (!usage) throw unreadable(DASHBOARD_USAGE_PATH, 'the gateway does not serve it beside the subscription', call);
	const rule = await moneyRule(client, call);
	try {
		return balanceFromDashboard(subscription, usage, rule);
	} catch (error) {
		throw unreadable(`${SUBSCRIPTION_PATH} and ${DASHBOARD_USAGE_PATH}`, error, call);
	}
}

/** The key's balance from whichever interface the gateway serves. */
export async function readBalance(client: GatewayClient, call: BalanceCall): Promise<Balance> {
	const balance = (await fromTokenUsage(client, call)) ?? (await fromDashboard(client, call));
	if (!balance) throw neitherServed(call);
	return balance;
}
