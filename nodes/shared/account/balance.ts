/**
 * The key's balance from the two answers gateways give, as numbers a workflow can compare: pure
 * reading and conversion, no requests. Promises: every output has the same seven fields; an
 * amount is a finite number or the answer is refused as unreadable (never NaN, never a guess);
 * money is shown only when the gateway says how its quota converts, else its raw units, named.
 *
 * Conversion (new-api, one-api): `GET /api/status` gives `quota_per_unit`, the quota units that
 * make 1 USD; an amount in USD is quota ÷ quota_per_unit, rounded to 6 decimals (the precision
 * new-api itself prints quota as money with). The dashboard pair answers in the site's display
 * unit: USD, CNY (USD × `usd_exchange_rate`, turned back into USD here) or, for `TOKENS`, raw quota
 * (in USD here too when `quota_per_unit` says how: the unit follows what the gateway says, not the route).
 */
import type { IDataObject } from 'n8n-workflow';

export const NEWAPI_USAGE_PATH = '/api/usage/token/';
export const STATUS_PATH = '/api/status';
export const SUBSCRIPTION_PATH = '/v1/dashboard/billing/subscription';
export const DASHBOARD_USAGE_PATH = '/v1/dashboard/billing/usage';

/** What the dashboard reports as the limit of an unlimited key (new-api and one-api). */
export const DASHBOARD_UNLIMITED = 100_000_000;

export type BalanceUnit = 'USD' | 'quota';

export interface Balance extends IDataObject {
	available: number;
	used: number;
	granted: number;
	unit: BalanceUnit;
	unlimited: boolean;
	/** ISO 8601, or null for a key that never expires. */
	expiresAt: string | null;
	/** The path that answered. */
	source: string;
}

/** How the gateway shows money, from `/api/status` (absent: it did not say). */
export interface MoneyRule {
	/** Quota units per 1 USD. */
	quotaPerUnit?: number;
	/** The dashboard's display unit. */
	display: 'USD' | 'CNY' | 'quota';
	/** CNY per USD, for a CNY display. */
	usdExchangeRate?: number;
}

/** Why an answer could not be read as a balance (the caller turns it into a GatewayError). */
export class UnreadableBalance extends Error {}

const positive = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined);

function amount(record: IDataObject, name: string): number {
	const value = record[name];
	if (typeof value !== 'number' || !Number.isFinite(value)) throw new UnreadableBalance(`"${name}" is ${value === undefined ? 'missing' : 'not a number'}`);
	return value;
}

/** Rounded to the 6 decimals new-api prints money with, so 0.1 + 0.2 never shows as 0.30000000000000004. */
export function roundMoney(value: number): number {
	return Math.round(value * 1e6) / 1e6;
}

/** `/api/status`'s answer as a money rule; nothing usable in it: no rule (raw units). */
export function readMoneyRule(statusAnswer: IDataObject): MoneyRule | undefined {
	const data = (statusAnswer.data ?? statusAnswer) as IDataObject;
	if (typeof data !== 'object' || data === null) return undefined;
	const quotaPerUnit = positive(data.quota_per_unit);
	const type = typeof data.quota_display_type === 'string' ? data.quota_display_type.toUpperCase() : undefined;
	const inTokens = type === 'TOKENS' || data.display_in_currency === false;
	const usdExchangeRate = positive(data.usd_exchange_rate);
	const display = inTokens ? 'quota' : type === 'CNY' && usdExchangeRate ? 'CNY' : 'USD';
	if (quotaPerUnit === undefined && display === 'USD') return undefined;
	return { quotaPerUnit, display, usdExchangeRate };
}

/** Unix seconds as ISO 8601; 0 and negative (new-api's -1) mean "never". */
export function expiryOf(seconds: unknown): string | null {
	if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0) return null;
	const date = new Date(seconds * 1000);
	return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** How amounts in some unit become the output's: its unit, and the conversion (unrounded). */
interface OutputUnit {
	unit: BalanceUnit;
	convert: (value: number) => number;
}

const AS_IS = (value: number) => value;

/** Quota units in USD when the gateway says how many make one, else as they are (named). */
function fromQuota(rule: MoneyRule | undefined): OutputUnit {
	const perUnit = rule?.quotaPerUnit;
	return perUnit ? { unit: 'USD', convert: (quota) => quota / perUnit } : { unit: 'quota', convert: AS_IS };
}

/** The dashboard pair's amounts, in the site's display unit, in USD wherever the rule says how. */
function fromDisplay(rule: MoneyRule | undefined): OutputUnit {
	if (rule?.display === 'quota') return fromQuota(rule);
	const rate = rule?.display === 'CNY' ? rule.usdExchangeRate : undefined;
	return { unit: 'USD', convert: rate ? (value) => value / rate : AS_IS };
}

/** The `data` object of new-api's `GET /api/usage/token/` answer (quota units), in USD when the rule gives a rate. */
export function balanceFromTokenUsage(usage: IDataObject, rule: MoneyRule | undefined): Balance {
	const { unit, convert } = fromQuota(rule);
	const toUnit = unit === 'USD' ? (quota: number) => roundMoney(convert(quota)) : AS_IS;
	return {
		available: toUnit(amount(usage, 'total_available')),
		used: toUnit(amount(usage, 'total_used')),
		granted: toUnit(amount(usage, 'total_granted')),
		unit,
		unlimited: usage.unlimited_quota === true,
		expiresAt: expiryOf(usage.expires_at),
		source: NEWAPI_USAGE_PATH,
	};
}

/**
 * The OpenAI-style pair: `hard_limit_usd` is what was granted, `total_usage` what was used in
 * hundredths, both in the site's display unit (the rule; without one, USD as the fields are named).
 * An unlimited key's limit is exactly the mark, written after the conversion, so a larger limit
 * (raw units on a site that shows tokens) is a large limited key.
 */
export function balanceFromDashboard(subscription: IDataObject, usage: IDataObject, rule: MoneyRule | undefined): Balance {
	const limit = amount(subscription, 'hard_limit_usd');
	const usedInDisplay = amount(usage, 'total_usage') / 100;
	const unlimited = limit === DASHBOARD_UNLIMITED;
	const { unit, convert } = fromDisplay(rule);
	const granted = unlimited ? limit : convert(limit);
	const used = convert(usedInDisplay);
	// Money as new-api prints it; raw units whole (hundredths divided back can leave float noise).
	const round = unit === 'USD' ? roundMoney : Math.round;
	return {
		available: round(granted - used),
		used: round(used),
		granted: round(granted),
		unit,
		unlimited,
		expiresAt: expiryOf(subscription.access_until),
		source: SUBSCRIPTION_PATH,
	};
}

/** "12.34 USD" / "1,250,000 quota units" / "unlimited": a balance in a sentence. */
export function balanceWords(balance: Pick<Balance, 'available' | 'unit' | 'unlimited'>): string {
	if (balance.unlimited) return 'unlimited quota on this key';
	if (balance.unit === 'USD') return `${balance.available.toFixed(2)} USD left on this key`;
	return `${balance.available.toLocaleString('en-US')} quota units left on this key`;
}
