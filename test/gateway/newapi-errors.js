'use strict';
// The new-api mode's error answers. In new-api the shape of an error body is decided by the layer
// that writes it, not by the endpoint alone (read from QuantumNous/new-api, see README.md):
//  - 'middleware' (token check, channel choice, body without a model): always
//    `{"error":{"message":"<m> (request id: …)","type":"new_api_error","code":"…"}}`, no `param`,
//    even on /v1/messages and the video routes;
//  - 'relay' (its own checks and quota): chat/images `{"error":{message+id,type:"new_api_error",
//    param:"",code}}`, /v1/messages `{"type":"error","error":{"type":"new_api_error",message+id}}`,
//    the video submit `{"code","message","data":null}`;
//  - 'upstream' (the model API behind it refused): passed through, `param` a string; on the video
//    submit wrapped as `{"code":"fail_to_fetch_task","message":"<upstream body>","data":null}`;
//  - 'route': `{"error":{"message":"Invalid URL (…)","type":"invalid_request_error","param":"","code":""}}`;
//  - 'task': a task error as the task routes write it, `{"code","message","data":null}`.
// The plant store is not new-api's: its errors keep their own shape.

const withRequestId = (ctx, message) => `${message} (request id: ${ctx.requestId})`;

/** The wire format new-api's relay answers in on this path. */
function relayFormat(ctx) {
	if (ctx.path === '/v1/messages') return 'claude';
	if (ctx.method === 'POST' && ctx.path === '/v1/video/generations') return 'task';
	return 'openai';
}

function relayAnswer(ctx, status, { message, code = '' }) {
	switch (relayFormat(ctx)) {
		case 'claude':
			return { status, body: { type: 'error', error: { type: 'new_api_error', message: withRequestId(ctx, message) } } };
		case 'task':
			return { status, body: { code, message, data: null } };
		default:
			return { status, body: { error: { message: withRequestId(ctx, message), type: 'new_api_error', param: '', code } } };
	}
}

function upstreamAnswer(ctx, error) {
	const format = relayFormat(ctx);
	if (format === 'task') {
		return { status: error.status, body: { code: 'fail_to_fetch_task', message: JSON.stringify(error.body), data: null } };
	}
	if (format === 'claude' || !error.body?.error) return { status: error.status, body: error.body };
	const { message, type, param, code } = error.body.error;
	return { status: error.status, body: { error: { message, type, param: param ?? '', code: code ?? null } } };
}

/** `{ status, body }` of `error` as new-api would send it on ctx's path. */
function newApiAnswer(ctx, error) {
	const facts = error.facts;
	if (!facts || ctx.flavour === 'store') return { status: error.status, body: error.body };
	const status = facts.status ?? error.status;
	switch (facts.layer) {
		case 'middleware':
			return { status, body: { error: { message: withRequestId(ctx, facts.message), type: 'new_api_error', code: facts.code ?? '' } } };
		case 'relay':
			return relayAnswer(ctx, status, facts);
		case 'upstream':
			return upstreamAnswer(ctx, error);
		case 'route':
			return { status: 404, body: { error: { message: facts.message, type: 'invalid_request_error', param: '', code: '' } } };
		case 'task':
			return { status, body: { code: facts.code, message: facts.message, data: null } };
		default:
			return { status: error.status, body: error.body };
	}
}

module.exports = { newApiAnswer, relayFormat };
