'use strict';
// Key check done before any /v1 or /plants handler runs. Key prefixes pick the outcome so tests
// can provoke each answer without configuring anything:
//   sk-invalid...   -> 401 invalid_api_key      sk-noquota... -> 403 insufficient_user_quota
//   sk-nomodels...  -> accepted, but this gateway has no model list (GET /v1/models answers 404)
//   any other sk-<secret> is accepted. `Authorization: Bearer` is the header the interface
//   document names; `x-api-key` alone counts only on /v1/messages and only with the gateway's
//   `acceptXApiKey` option (native-format servers take it), otherwise it is refused (401).
// The new-api mode checks keys as new-api's token check does: see authenticateNewApi.
const { relayError } = require('./errors');
const { isNewApi, tokenRefused } = require('./newapi');

const BEARER = /^bearer\s+(\S+)$/i;

/** The key the request presents, and the header it came in; '' when there is none. */
function presentedKey(ctx) {
	const header = (ctx.req.headers.authorization ?? '').trim();
	if (header) return { key: BEARER.exec(header)?.[1] ?? '', via: 'authorization' };
	const apiKey = ctx.req.headers['x-api-key'];
	const text = typeof apiKey === 'string' ? apiKey.trim() : '';
	if (text && ctx.gw.options.acceptXApiKey && ctx.path === '/v1/messages') return { key: text, via: 'x-api-key' };
	return { key: '', via: '' };
}

/**
 * new-api's token check: `x-api-key` takes the place of Authorization on paths naming
 * /v1/messages or /v1/models; only `Bearer `/`bearer ` is stripped; a missing, unknown, used-up
 * (`sk-exhausted…`) or expired (`sk-expired…`) key is one 401 "Invalid token". `sk-noquota…` passes
 * here: its user's empty wallet is refused after the channel is chosen (newapi.js admit).
 */
function authenticateNewApi(ctx) {
	const apiKey = ctx.req.headers['x-api-key'];
	const header = /\/v1\/(messages|models)/.test(ctx.path) && typeof apiKey === 'string' && apiKey !== '' ? `Bearer ${apiKey}` : ctx.req.headers.authorization ?? '';
	const key = header.startsWith('Bearer ') || header.startsWith('bearer ') ? header.slice(7).trim() : header;
	if (!/^sk-\S+$/.test(key) || key.startsWith('sk-invalid') || tokenRefused(ctx.gw, key)) {
		throw relayError(ctx, 401, 'Invalid token', { code: '', withRequestId: true });
	}
	ctx.key = key;
}

/** Throws a GatewayError unless the request carries an acceptable key. */
function authenticate(ctx) {
	if (isNewApi(ctx.gw)) return authenticateNewApi(ctx);
	const { key, via } = presentedKey(ctx);
	if (!via) {
		throw relayError(ctx, 401, 'Token not provided', { nativeType: 'authentication_error', withRequestId: true });
	}
	if (!/^sk-\S+$/.test(key) || key.startsWith('sk-invalid')) {
		throw relayError(ctx, 401, 'Invalid token', {
			code: 'invalid_api_key',
			nativeType: 'authentication_error',
			withRequestId: true,
		});
	}
	if (key.startsWith('sk-noquota')) {
		throw relayError(ctx, 403, 'user quota is not enough', {
			code: 'insufficient_user_quota',
			nativeType: 'permission_error',
		});
	}
	ctx.key = key;
}

/** Whether the authenticated key is one whose gateway has no model list (`sk-nomodels…`). */
const hasNoModelList = (ctx) => typeof ctx.key === 'string' && ctx.key.startsWith('sk-nomodels');

module.exports = { authenticate, hasNoModelList };
