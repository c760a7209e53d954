'use strict';
// The new-api mode (`flavor: 'newapi'`): what a new-api relay answers where the interface document
// is silent, learned from its public source (README.md names the files). Promises:
//  - every key has a ledger (granted = used + available, in quota units) that paid work moves:
//    images and video submits are charged when accepted, a failed video is refunded once;
//  - a charge above the key's remaining quota is refused before any work, as new-api's pre-charge;
//  - the key's own balance answers on /api/usage/token/ and the OpenAI-style dashboard pair, and
//    /api/status says how many quota units make one unit of money and how the site shows them;
//  - a path it does not serve outside /v1, /api and /assets answers its web page with 200.
const { sendJson, sendText } = require('./http');
const { GatewayError, relayError } = require('./errors');
const { unixNow } = require('./util');

/** A past expiry for `sk-expired…` keys (2026-01-01T00:00:00Z). */
const EXPIRED_AT = 1767225600;
/** What new-api's dashboard reports as the limit of an unlimited key. */
const UNLIMITED_AMOUNT = 100000000;
const IMAGE_PRICE_USD = 0.04;
/** Loopback video prices per second (new-api multiplies a per-call price by the seconds, 4 by default). */
const VIDEO_PRICE_USD_PER_SECOND = { 'video-2-0-260128': 0.1, 'video-2-0-fast-260128': 0.07, 'video-2-0-mini-260615': 0.04 };
const DEFAULT_VIDEO_SECONDS = 4;
const CURRENCY_SYMBOL = { USD: '＄', CNY: '¥', CUSTOM: '¤' };
/** new-api's default top-up price setting, reported by /api/status. */
const PAYMENT_PRICE = 7.3;

const isNewApi = (gw) => gw.options.flavor === 'newapi';

/** The ledger of the request's key, made on first use from its prefix (see README.md). */
function accountOf(gw, key) {
	let account = gw.accounts.get(key);
	if (!account) {
		const granted = gw.options.keyQuota;
		const exhausted = key.startsWith('sk-exhausted');
		account = {
			remain: exhausted ? 0 : granted,
			used: exhausted ? granted : 0,
			unlimited: key.startsWith('sk-unlimited'),
			expiresAt: key.startsWith('sk-expired') ? EXPIRED_AT : -1,
		};
		gw.accounts.set(key, account);
	}
	return account;
}

/** Whether new-api's token check refuses this key on the relay routes (used up or expired). */
function tokenRefused(gw, key) {
	const account = accountOf(gw, key);
	return (!account.unlimited && account.remain <= 0) || (account.expiresAt !== -1 && account.expiresAt < unixNow());
}

/** logger.FormatQuota: quota units in the site's display currency. */
function formatQuota(gw, quota) {
	const { quotaDisplayType: type, quotaPerUnit, usdExchangeRate } = gw.options;
	if (type === 'TOKENS') return String(quota);
	const money = (quota / quotaPerUnit) * (type === 'CNY' ? usdExchangeRate : 1);
	return `${CURRENCY_SYMBOL[type]}${money.toFixed(6)}`;
}

/** Quota units of an amount of US dollars. */
const quotaOfUsd = (gw, usd) => Math.round(usd * gw.options.quotaPerUnit);

/**
 * After the channel is chosen: a key whose user has no quota left is refused (new-api's wallet
 * check, 403), before the request's own fields are read.
 */
function admit(ctx) {
	if (!isNewApi(ctx.gw) || !ctx.key?.startsWith('sk-noquota')) return;
	throw relayError(ctx, 403, `用户额度不足, 剩余额度: ${formatQuota(ctx.gw, 0)}`, { code: 'insufficient_user_quota', layer: 'relay' });
}

/** Charges `quota` to the request's key, or throws new-api's pre-charge refusal. Returns the quota. */
function charge(ctx, quota) {
	if (!isNewApi(ctx.gw)) return 0;
	const account = accountOf(ctx.gw, ctx.key);
	if (!account.unlimited && account.remain < quota) {
		const message = `token quota is not enough, token remain quota: ${formatQuota(ctx.gw, account.remain)}, need quota: ${formatQuota(ctx.gw, quota)}`;
		throw relayError(ctx, 403, message, { code: 'pre_consume_token_quota_failed', layer: 'relay' });
	}
	account.remain -= quota;
	account.used += quota;
	return quota;
}

const imageQuota = (ctx, n) => (isNewApi(ctx.gw) ? n * quotaOfUsd(ctx.gw, IMAGE_PRICE_USD) : 0);

function videoQuota(ctx, model, seconds) {
	if (!isNewApi(ctx.gw)) return 0;
	return quotaOfUsd(ctx.gw, VIDEO_PRICE_USD_PER_SECOND[model] * (Number(seconds) || DEFAULT_VIDEO_SECONDS));
}

/** Gives a failed task's charge back to the key that paid it (once). */
function refund(gw, task) {
	if (!task.quota || task.refunded) return;
	const account = accountOf(gw, task.key);
	account.remain += task.quota;
	account.used -= task.quota;
	task.refunded = true;
}

// ---------------------------------------------------------------------------------------------
// Balance routes

/** An amount of quota in the unit the dashboard pair answers in (controller/billing.go). */
function dashboardAmount(gw, quota) {
	const { quotaDisplayType: type, quotaPerUnit, usdExchangeRate } = gw.options;
	if (type === 'TOKENS') return quota;
	return (quota / quotaPerUnit) * (type === 'CNY' ? usdExchangeRate : 1);
}

function subscription(ctx) {
	const account = accountOf(ctx.gw, ctx.key);
	const amount = account.unlimited ? UNLIMITED_AMOUNT : dashboardAmount(ctx.gw, account.remain + account.used);
	sendJson(ctx.res, 200, {
		object: 'billing_subscription',
		has_payment_method: true,
		soft_limit_usd: amount,
		hard_limit_usd: amount,
		system_hard_limit_usd: amount,
		access_until: Math.max(0, account.expiresAt),
	});
}

function usage(ctx) {
	const account = accountOf(ctx.gw, ctx.key);
	sendJson(ctx.res, 200, { object: 'list', total_usage: dashboardAmount(ctx.gw, account.used) * 100 });
}

/** The read-only key check of /api/usage/token/: it lets used-up and expired keys read their balance. */
function readOnlyKey(ctx) {
	const header = ctx.req.headers.authorization ?? '';
	const refuse = (message) => new GatewayError(401, { success: false, message });
	if (header === '') throw refuse('Token not provided');
	const key = header.startsWith('Bearer ') || header.startsWith('bearer ') ? header.slice(7).trim() : header;
	const parts = header.split(' ');
	if (!/^sk-\S+$/.test(key) || key.startsWith('sk-invalid')) throw refuse('Invalid token');
	if (parts.length !== 2 || parts[0].toLowerCase() !== 'bearer') throw refuse('Invalid Bearer token');
	return key;
}

/** new-api's CRITICAL_RATE_LIMIT_DURATION: the window of its critical rate limit (20 minutes). */
const CRITICAL_WINDOW_MS = 20 * 60 * 1000;

/**
 * middleware/rate-limit.go CriticalRateLimit, before the key check: at most `criticalRateLimit`
 * requests per 20 minutes from one address (the loopback has one), else a bare 429 with no body.
 * 0 (the default here; new-api's is 20) lets every request through. Whether it refused.
 */
function criticallyLimited(ctx) {
	const limit = ctx.gw.options.criticalRateLimit;
	if (!limit) return false;
	const now = Date.now();
	const hits = ctx.gw.criticalHits;
	while (hits.length > 0 && now - hits[0] >= CRITICAL_WINDOW_MS) hits.shift();
	if (hits.length >= limit) {
		ctx.res.writeHead(429, { 'content-length': '0' }).end();
		return true;
	}
	hits.push(now);
	return false;
}

function tokenUsage(ctx) {
	if (criticallyLimited(ctx)) return;
	const account = accountOf(ctx.gw, readOnlyKey(ctx));
	sendJson(ctx.res, 200, {
		code: true,
		message: 'ok',
		data: {
			object: 'token_usage',
			name: 'loopback',
			total_granted: account.remain + account.used,
			total_used: account.used,
			total_available: account.remain,
			unlimited_quota: account.unlimited,
			model_limits: {},
			model_limits_enabled: false,
			expires_at: Math.max(0, account.expiresAt),
		},
	});
}

/** gin's answer to a route asked for without its trailing slash: a redirect to it. */
function trailingSlash(ctx) {
	const search = new URL(ctx.req.url, 'http://gateway.invalid').search;
	const location = `${ctx.path}/${search}`;
	const status = ctx.method === 'GET' ? 301 : 307;
	sendText(ctx.res, status, 'text/html; charset=utf-8', `<a href="${location}">Moved Permanently</a>.\n\n`, { location });
}

function status(ctx) {
	const { gw } = ctx;
	const { quotaDisplayType, quotaPerUnit, usdExchangeRate } = gw.options;
	sendJson(ctx.res, 200, {
		success: true,
		message: '',
		data: {
			version: 'loopback',
			start_time: gw.startTime,
			system_name: 'New API',
			server_address: gw.baseUrl,
			top_up_link: '',
			quota_per_unit: quotaPerUnit,
			display_in_currency: quotaDisplayType !== 'TOKENS',
			quota_display_type: quotaDisplayType,
			custom_currency_symbol: '¤',
			custom_currency_exchange_rate: 1,
			usd_exchange_rate: usdExchangeRate,
			price: PAYMENT_PRICE,
			enable_task: true,
			enable_drawing: true,
			setup: true,
		},
	});
}

/**
 * Routes only the new-api mode serves: `[method, pattern, handler, auth]`, auth `'token'` for
 * new-api's relay token check, `'none'` where the handler checks (or needs) no key.
 */
const NEWAPI_ROUTES = [
	['GET', /^\/api\/status$/, status, 'none'],
	['GET', /^\/api\/usage\/token\/$/, tokenUsage, 'none'],
	['*', /^\/api\/usage\/token$/, trailingSlash, 'none'],
	['GET', /^(?:\/v1)?\/dashboard\/billing\/subscription$/, subscription, 'token'],
	['GET', /^(?:\/v1)?\/dashboard\/billing\/usage$/, usage, 'token'],
];

// ---------------------------------------------------------------------------------------------
// Paths it does not serve

const INDEX_PAGE =
	'<!doctype html>\n<html lang="zh">\n<head>\n<meta charset="utf-8" />\n<meta name="generator" content="new-api" />\n' +
	'<title>New API</title>\n</head>\n<body>\n<noscript>You need to enable JavaScript to run this app.</noscript>\n' +
	'<div id="root"></div>\n</body>\n</html>\n';

/** new-api answers its own API prefixes with a JSON 404; everything else is its web app's page. */
const servesPage = (rawUrl) => !/^\/(?:v1|api|assets)/.test(rawUrl);

function sendIndexPage(ctx) {
	sendText(ctx.res, 200, 'text/html; charset=utf-8', INDEX_PAGE, { 'cache-control': 'no-cache' });
}

module.exports = {
	isNewApi,
	accountOf,
	tokenRefused,
	formatQuota,
	admit,
	charge,
	imageQuota,
	videoQuota,
	refund,
	NEWAPI_ROUTES,
	servesPage,
	sendIndexPage,
	EXPIRED_AT,
	UNLIMITED_AMOUNT,
};
