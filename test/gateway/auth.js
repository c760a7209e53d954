'use strict';
// Bearer-key check done before any /v1 or /plants handler runs. Key prefixes pick the outcome
// so tests can provoke each answer without configuring anything:
//   sk-invalid...  -> 401 invalid_api_key      sk-noquota... -> 403 insufficient_user_quota
//   any other sk-<secret> is accepted. Only `Authorization: Bearer` counts: the interface
//   document names no other header, so a client sending x-api-key alone is refused (401).
const { relayError } = require('./errors');

const BEARER = /^bearer\s+(\S+)$/i;

/** Throws a GatewayError unless the request carries an acceptable key. */
function authenticate(ctx) {
	const header = (ctx.req.headers.authorization ?? '').trim();
	if (!header) {
		throw relayError(ctx, 401, 'Token not provided', { nativeType: 'authentication_error', withRequestId: true });
	}
	const key = BEARER.exec(header)?.[1] ?? '';
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
}

module.exports = { authenticate };
