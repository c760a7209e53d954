'use strict';
// The plant store (test/fixtures/plant-store.openapi.yaml). Bodies are parsed from their raw
// text so that an int64 id beyond 2^53 is validated and echoed with its exact digits.
const { sendJson, sendEmpty } = require('./http');
const { GatewayError, invalidRequest } = require('./errors');
const { has, rateLimitOnce } = require('./magic');
const { parseExactJson, JsonNumber } = require('./json-exact');

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INTEGER = /^-?(?:0|[1-9]\d*)$/;

const storeError = (code, message) => new GatewayError(400, { error: code, message });

const typeName = (value) => (value instanceof JsonNumber ? 'number' : value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** Canonical decimal digits of an int64 given as JSON number text; throws a 400 otherwise. */
function int64Digits(ctx, raw, what) {
	if (!INTEGER.test(raw)) throw invalidRequest(ctx, `${what} must be an integer (int64), got ${raw}`);
	const value = BigInt(raw);
	if (value < INT64_MIN || value > INT64_MAX) {
		throw invalidRequest(ctx, `${what} ${raw} is out of the int64 range`);
	}
	return value.toString();
}

function readNewPlant(ctx) {
	let body;
	try {
		body = parseExactJson(ctx.rawBody);
	} catch (error) {
		throw invalidRequest(ctx, `request body is not valid JSON: ${error.message}`);
	}
	if (typeName(body) !== 'object') throw invalidRequest(ctx, 'request body must be a JSON object (NewPlant)');
	if (body.id === undefined) throw invalidRequest(ctx, 'id is required');
	if (!(body.id instanceof JsonNumber)) {
		throw invalidRequest(ctx, `id must be an integer (int64), got a ${typeName(body.id)}`);
	}
	const id = int64Digits(ctx, body.id.raw, 'id');
	if (body.name === undefined) throw invalidRequest(ctx, 'name is required');
	if (typeof body.name !== 'string') throw invalidRequest(ctx, `name must be a string, got a ${typeName(body.name)}`);
	if (body.tag !== undefined && typeof body.tag !== 'string') {
		throw invalidRequest(ctx, `tag must be a string, got a ${typeName(body.tag)}`);
	}
	return { id, name: body.name, tag: body.tag };
}

/** The Plant as exact JSON text, id digits included verbatim. */
const plantJson = ({ id, name, tag }) =>
	`{"id":${id},"name":${JSON.stringify(name)}${tag === undefined ? '' : `,"tag":${JSON.stringify(tag)}`}}`;

function create(ctx) {
	const plant = readNewPlant(ctx);
	if (rateLimitOnce(ctx, plant.name)) return;
	if (has(plant.name, 'reject')) throw storeError(4001, 'plant name rejected by the store');
	if (ctx.gw.plants.has(plant.id)) throw storeError(409, `plant with id ${plant.id} already exists`);
	ctx.gw.plants.set(plant.id, plant);
	sendJson(ctx.res, 200, plantJson(plant));
}

function list(ctx) {
	const { limit } = ctx.query;
	if (limit !== undefined && (!/^\d{1,9}$/.test(limit) || Number(limit) > 2 ** 31 - 1)) {
		throw invalidRequest(ctx, 'limit must be a non-negative int32');
	}
	const plants = [...ctx.gw.plants.values()].slice(0, limit === undefined ? undefined : Number(limit));
	sendJson(ctx.res, 200, `[${plants.map(plantJson).join(',')}]`);
}

function remove(ctx) {
	const id = int64Digits(ctx, ctx.params[0], 'id');
	if (!ctx.gw.plants.delete(id)) throw storeError(404, `plant with id ${id} not found`);
	sendEmpty(ctx.res, 204);
}

module.exports = { create, list, remove };
