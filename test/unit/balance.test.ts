/** The pure reading and conversion of the two balance answers (nodes/shared/account/balance.ts). */
import { UnreadableBalance, balanceFromDashboard, balanceFromTokenUsage, balanceWords, expiryOf, readMoneyRule, roundMoney } from '../../nodes/shared/account/balance';

const usage = (data: Record<string, unknown>) => ({ total_granted: 25_000_000, total_used: 5_000_000, total_available: 20_000_000, unlimited_quota: false, expires_at: 0, ...data });
const status = (data: Record<string, unknown>) => ({ success: true, data: { quota_per_unit: 500_000, display_in_currency: true, quota_display_type: 'USD', usd_exchange_rate: 7.3, ...data } });

describe('the money rule from /api/status', () => {
	it('reads quota_per_unit and the display unit', () => {
		expect(readMoneyRule(status({}))).toEqual({ quotaPerUnit: 500_000, display: 'USD', usdExchangeRate: 7.3 });
		expect(readMoneyRule(status({ quota_display_type: 'CNY' }))?.display).toBe('CNY');
		expect(readMoneyRule(status({ quota_display_type: 'TOKENS', display_in_currency: false }))?.display).toBe('quota');
		// one-api: no quota_display_type, display_in_currency false means raw units.
		expect(readMoneyRule(status({ quota_display_type: undefined, display_in_currency: false }))?.display).toBe('quota');
	});

	it('no rule from an answer that gives neither a rate nor another display', () => {
		expect(readMoneyRule({ success: true, data: {} })).toBeUndefined();
		expect(readMoneyRule(status({ quota_per_unit: 0 }))).toBeUndefined();
		expect(readMoneyRule(status({ quota_per_unit: 'x' }))).toBeUndefined();
	});
});

describe('/api/usage/token/', () => {
	it('quota ÷ quota_per_unit in USD', () => {
		expect(balanceFromTokenUsage(usage({}), { quotaPerUnit: 500_000, display: 'USD' })).toEqual({
			available: 40,
			used: 10,
			granted: 50,
			unit: 'USD',
			unlimited: false,
			expiresAt: null,
			source: '/api/usage/token/',
		});
	});

	it('raw units, named, without a rate', () => {
		expect(balanceFromTokenUsage(usage({}), undefined)).toMatchObject({ available: 20_000_000, used: 5_000_000, granted: 25_000_000, unit: 'quota' });
	});

	it('rounds to 6 decimals, the unlimited flag and the expiry', () => {
		const balance = balanceFromTokenUsage(usage({ total_available: 1, unlimited_quota: true, expires_at: 1_767_225_600 }), { quotaPerUnit: 3, display: 'USD' });
		expect(balance).toMatchObject({ available: 0.333333, unlimited: true, expiresAt: '2026-01-01T00:00:00.000Z' });
	});

	it('refuses an answer without numbers, never NaN', () => {
		expect(() => balanceFromTokenUsage(usage({ total_used: 'many' }), undefined)).toThrow(UnreadableBalance);
		expect(() => balanceFromTokenUsage(usage({ total_available: undefined }), undefined)).toThrow('"total_available" is missing');
	});
});

describe('the dashboard pair', () => {
	const subscription = (limit: number, until = 0) => ({ object: 'billing_subscription', hard_limit_usd: limit, access_until: until });
	it('granted from hard_limit_usd, used from total_usage in hundredths', () => {
		expect(balanceFromDashboard(subscription(50), { total_usage: 1234 }, undefined)).toEqual({
			available: 37.66,
			used: 12.34,
			granted: 50,
			unit: 'USD',
			unlimited: false,
			expiresAt: null,
			source: '/v1/dashboard/billing/subscription',
		});
	});

	it('CNY back into USD; tokens as raw units', () => {
		expect(balanceFromDashboard(subscription(365), { total_usage: 7300 }, { display: 'CNY', usdExchangeRate: 7.3 })).toMatchObject({ granted: 50, used: 10, available: 40, unit: 'USD' });
		expect(balanceFromDashboard(subscription(25_000_000), { total_usage: 500_000_000 }, { display: 'quota' })).toMatchObject({ granted: 25_000_000, used: 5_000_000, available: 20_000_000, unit: 'quota' });
	});

	it('a site showing tokens that says its rate (quota_per_unit): USD, as from /api/usage/token/', () => {
		const rule = { display: 'quota', quotaPerUnit: 500_000 } as const;
		expect(balanceFromDashboard(subscription(25_000_000), { total_usage: 500_000_000 }, rule)).toMatchObject({ granted: 50, used: 10, available: 40, unit: 'USD', unlimited: false });
	});

	it('only exactly 100,000,000 is the unlimited mark: a larger limit (raw units) is a large limited key', () => {
		expect(balanceFromDashboard(subscription(200_000_000), { total_usage: 0 }, { display: 'quota' })).toMatchObject({ granted: 200_000_000, available: 200_000_000, unlimited: false });
		expect(balanceFromDashboard(subscription(100_000_000.5), { total_usage: 0 }, undefined)).toMatchObject({ unlimited: false });
	});

	it('100,000,000 is an unlimited key; access_until is the expiry', () => {
		expect(balanceFromDashboard(subscription(100_000_000, 1_767_225_600), { total_usage: 0 }, undefined)).toMatchObject({ unlimited: true, expiresAt: '2026-01-01T00:00:00.000Z' });
	});

	it('refuses a pair without its numbers', () => {
		expect(() => balanceFromDashboard({}, { total_usage: 0 }, undefined)).toThrow('"hard_limit_usd" is missing');
		expect(() => balanceFromDashboard(subscription(5), { total_usage: Number.NaN }, undefined)).toThrow('"total_usage" is not a number');
	});
});

describe('helpers', () => {
	it('expiry: 0 and -1 are never', () => {
		expect([expiryOf(0), expiryOf(-1), expiryOf('x'), expiryOf(1)]).toEqual([null, null, null, '1970-01-01T00:00:01.000Z']);
	});
	it('rounding and words', () => {
		expect(roundMoney(0.1 + 0.2)).toBe(0.3);
		expect(balanceWords({ available: 12.344, unit: 'USD', unlimited: false })).toBe('12.34 USD left on this key');
		expect(balanceWords({ available: 1_250_000, unit: 'quota', unlimited: false })).toBe('1,250,000 quota units left on this key');
		expect(balanceWords({ available: 5, unit: 'USD', unlimited: true })).toBe('unlimited quota on this key');
	});
});
