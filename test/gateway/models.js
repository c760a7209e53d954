'use strict';
// The model catalogue of the interface document (section 2.8) plus two gateway-only ids, so
// that a client's model list can show models the built-in catalogue does not know.
const { sendJson } = require('./http');
const { GatewayError, invalidRequest, modelNotFound, notFound } = require('./errors');
const { hasNoModelList } = require('./auth');
const { admit, isNewApi } = require('./newapi');

const ENDPOINT_TYPES = { image: ['image-generation'], video: ['openai-video'], chat: ['openai', 'anthropic'] };

const MODELS = [
	{ id: 'img-image-2', kind: 'image', created: 1767225600 },
	{ id: 'video-2-0-260128', kind: 'video', created: 1769558400 },
	{ id: 'video-2-0-fast-260128', kind: 'video', created: 1769558400 },
	{ id: 'video-2-0-mini-260615', kind: 'video', created: 1781481600 },
	{ id: 'chat-fable-5', kind: 'chat', created: 1780272000, maxOutput: 128000, alwaysThinks: true },
	{ id: 'chat-opus-4-8', kind: 'chat', created: 1777593600, maxOutput: 128000 },
	{ id: 'chat-sonnet-5', kind: 'chat', created: 1777593600, maxOutput: 128000 },
	{ id: 'chat-haiku-4-5', kind: 'chat', created: 1760400000, maxOutput: 64000 },
	{ id: 'chat-opus-4-7', kind: 'chat', created: 1773100800, maxOutput: 128000 },
	{ id: 'chat-opus-4-6', kind: 'chat', created: 1770249600, maxOutput: 128000 },
	// Gateway-only: not in the interface document's table.
	{ id: 'chat-sonnet-5-20260501', kind: 'chat', created: 1777593600, maxOutput: 128000, gatewayOnly: true },
	{ id: 'img-image-2-mini', kind: 'image', created: 1772323200, gatewayOnly: true },
];

const byId = new Map(MODELS.map((m) => [m.id, m]));

const KIND_NAMES = { image: 'an image', video: 'a video', chat: 'a chat' };

/**
 * new-api's channel choice for a request without a model: images are routed as `dall-e` (which
 * no channel here serves), every other route is refused with a 400.
 */
function missingModelFacts(ctx, kind) {
	if (kind === 'image') return modelNotFound(ctx, 'dall-e').facts;
	return { layer: 'middleware', message: 'Model name not specified, model name cannot be empty', code: '' };
}

/**
 * Returns the catalogue entry of `model`, throwing the answer a relay gives otherwise:
 * 400 when the field is missing or names a model of another kind, 503 when it is unknown.
 * Then the new-api mode's wallet check runs, as new-api's relay does once a channel is chosen.
 */
function requireModel(ctx, model, kind) {
	if (typeof model !== 'string' || model === '') {
		throw invalidRequest(ctx, 'model is required', { param: 'model', code: 'missing_required_parameter', newApi: missingModelFacts(ctx, kind) });
	}
	const entry = byId.get(model);
	if (!entry) throw modelNotFound(ctx, model);
	admit(ctx);
	if (entry.kind !== kind) {
		throw invalidRequest(ctx, `model ${model} is not ${KIND_NAMES[kind]} model and cannot be used on ${ctx.path}`, {
			param: 'model',
			code: 'model_not_supported',
		});
	}
	return entry;
}

const describe = (m) => ({
	id: m.id,
	object: 'model',
	created: m.created,
	owned_by: 'custom',
	supported_endpoint_types: ENDPOINT_TYPES[m.kind],
});

function list(ctx) {
	// `sk-nomodels…`: a server without a model list, as many relays and mock servers are.
	if (hasNoModelList(ctx)) throw notFound(ctx);
	sendJson(ctx.res, 200, { object: 'list', data: MODELS.map(describe), success: true });
}

function retrieve(ctx) {
	if (hasNoModelList(ctx)) throw notFound(ctx);
	const entry = byId.get(ctx.params[0]);
	if (!entry) {
		// new-api answers an unknown id with this body and HTTP 200 (controller/model.go RetrieveModel).
		throw new GatewayError(isNewApi(ctx.gw) ? 200 : 404, {
			error: {
				message: `The model '${ctx.params[0]}' does not exist`,
				type: 'invalid_request_error',
				param: 'model',
				code: 'model_not_found',
			},
		});
	}
	sendJson(ctx.res, 200, describe(entry));
}

module.exports = { MODELS, requireModel, list, retrieve };
