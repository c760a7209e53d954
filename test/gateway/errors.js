'use strict';
// Error bodies, in the three formats the gateway speaks:
//  - 'openai': new-api / OpenAI `{"error":{"message","type","param","code"}}` (most endpoints)
//  - 'native': the messages format `{"type":"error","error":{"type","message"}}` (/v1/messages)
//  - 'store' : the plant store's `Error` schema `{"error":<int>,"message"}` (/plants)
// Handlers throw a GatewayError; the router turns it into the answer.
// Each error also names the layer of a new-api relay that would have written it (`facts`), so
// the new-api mode (newapi-errors.js) can answer in that layer's own shape; the default mode
// sends `status` and `body` as they are.

class GatewayError extends Error {
	constructor(status, body, headers = {}, facts = null) {
		super(`gateway answered ${status}`);
		this.status = status;
		this.body = body;
		this.headers = headers;
		/** `{ layer: 'middleware'|'relay'|'upstream'|'route'|'task', message, code?, status? }` */
		this.facts = facts;
	}
}

function flavourFor(path) {
	if (path.startsWith('/v1/messages')) return 'native';
	if (path.startsWith('/plants')) return 'store';
	return 'openai';
}

/** An error body in ctx's format; `type` is the OpenAI-format type, `nativeType` the native one. */
function errorBody(ctx, status, message, { type, nativeType = type, param, code }) {
	switch (ctx.flavour) {
		case 'native':
			return { type: 'error', error: { type: nativeType, message } };
		case 'store':
			return { error: status, message };
		default:
			return { error: { message, type, param, code } };
	}
}

/**
 * A 4xx/5xx that the relay itself produces (auth, quota, routing, internal failures).
 * `withRequestId` appends " (request id: ...)" as new-api does to some of its messages.
 */
function relayError(ctx, status, message, { code = '', nativeType = 'api_error', withRequestId = false, layer = 'middleware' } = {}) {
	const text = withRequestId ? `${message} (request id: ${ctx.requestId})` : message;
	return new GatewayError(status, errorBody(ctx, status, text, { type: 'new_api_error', nativeType, code }), {}, { layer, message, code, status });
}

/**
 * A 400 about the request body, worded as the upstream API would word it. `newApi` gives the
 * facts of new-api's own answer where new-api refuses the request before the upstream sees it.
 */
function invalidRequest(ctx, message, { param = null, code = null, newApi = { layer: 'upstream', message } } = {}) {
	return new GatewayError(400, errorBody(ctx, 400, message, { type: 'invalid_request_error', param, code }), {}, newApi);
}

/** What new-api's distributor answers when no channel serves the model: 503, not 404. */
function modelNotFound(ctx, model) {
	return relayError(ctx, 503, `No available channel for model ${model} under group default (distributor)`, {
		code: 'model_not_found',
		nativeType: 'new_api_error',
	});
}

function internalError(ctx) {
	return relayError(ctx, 500, 'bad response status code 500', {
		code: 'bad_response_status_code',
		nativeType: 'new_api_error',
		withRequestId: true,
		layer: 'relay',
	});
}

/** Unknown route: 404 in the endpoint family's own error format. */
function notFound(ctx) {
	const message = `Invalid URL (${ctx.method} ${ctx.path})`;
	return new GatewayError(
		404,
		errorBody(ctx, 404, message, { type: 'invalid_request_error', nativeType: 'not_found_error', param: null, code: null }),
		{},
		{ layer: 'route', message },
	);
}

module.exports = { GatewayError, flavourFor, relayError, invalidRequest, modelNotFound, internalError, notFound };
