'use strict';
// Request handling for both origins: logging, faults, delay, authentication and routing.
const { readBody, sendJson, isGone, dropConnection } = require('./http');
const { GatewayError, flavourFor, invalidRequest, internalError, notFound } = require('./errors');
const { authenticate } = require('./auth');
const { FaultQueues, serveFault } = require('./faults');
const { handleFileRequest } = require('./files');
const { BoundedMap, newRequestId, sleep } = require('./util');
const models = require('./models');
const images = require('./images');
const video = require('./video');
const chat = require('./chat');
const messages = require('./messages');
const plants = require('./plants');
const newapi = require('./newapi');
const { newApiAnswer } = require('./newapi-errors');

// Bounds so that long benchmark runs cannot grow memory without limit.
const MAX_LOGGED_REQUESTS = 20000;
const STORE_LIMIT = 20000;

const ROUTES = [
	['GET', /^\/v1\/models$/, models.list],
	['GET', /^\/v1\/models\/([^/]+)$/, models.retrieve],
	['POST', /^\/v1\/images\/generations$/, images.generate],
	['POST', /^\/v1\/images\/edits$/, images.edit],
	['POST', /^\/v1\/video\/generations$/, video.submit],
	['GET', /^\/v1\/video\/generations\/([^/]+)$/, video.status],
	['GET', /^\/v1\/videos\/([^/]+)\/content$/, video.content],
	['POST', /^\/v1\/chat\/completions$/, chat.complete],
	['POST', /^\/v1\/messages$/, messages.create],
	['GET', /^\/plants$/, plants.list],
	['POST', /^\/plants$/, plants.create],
	['DELETE', /^\/plants\/([^/]+)$/, plants.remove],
].map(([method, pattern, handler]) => ({ method, pattern, handler, auth: 'token' }));

// The new-api mode serves these too (its balance and status routes), before the shared ones.
const NEWAPI_ROUTES = newapi.NEWAPI_ROUTES.map(([method, pattern, handler, auth]) => ({ method, pattern, handler, auth }));

const FLAVORS = ['default', 'newapi'];
const QUOTA_DISPLAY_TYPES = ['USD', 'CNY', 'TOKENS', 'CUSTOM'];

const OPTION_RULES = {
	delayMs: (v) => typeof v === 'number' && v >= 0 && v <= 600000,
	videoPollsToFinish: (v) => Number.isInteger(v) && v >= 1 && v <= 1000,
	log: (v) => typeof v === 'boolean',
	acceptXApiKey: (v) => typeof v === 'boolean',
	flavor: (v) => FLAVORS.includes(v),
	keyQuota: (v) => Number.isSafeInteger(v) && v >= 0,
	quotaPerUnit: (v) => typeof v === 'number' && v > 0 && Number.isFinite(v),
	quotaDisplayType: (v) => QUOTA_DISPLAY_TYPES.includes(v),
	usdExchangeRate: (v) => typeof v === 'number' && v > 0 && Number.isFinite(v),
	usageTokenRoute: (v) => typeof v === 'boolean',
	criticalRateLimit: (v) => Number.isSafeInteger(v) && v >= 0,
};

/** The new-api mode's settings, when a start does not name them. */
const NEWAPI_DEFAULTS = { keyQuota: 25000000, quotaPerUnit: 500000, quotaDisplayType: 'USD', usdExchangeRate: 7.3, usageTokenRoute: true, criticalRateLimit: 0 };

function createState(options) {
	const gw = {
		initialOptions: {},
		options: {},
		baseUrl: '',
		fileBaseUrl: '',
		requests: [],
		faults: new FaultQueues(),
		tasks: new BoundedMap(STORE_LIMIT),
		images: new BoundedMap(STORE_LIMIT),
		plants: new BoundedMap(STORE_LIMIT),
		onceSeen: new BoundedMap(STORE_LIMIT),
		accounts: new BoundedMap(STORE_LIMIT), // new-api mode: each key's ledger
		criticalHits: [], // new-api mode: when the requests its critical rate limit counts came
		taskCount: 0, // new-api mode: the record number of the next task
		startTime: Math.floor(Date.now() / 1000),
	};
	setOptions(gw, { flavor: 'default', ...NEWAPI_DEFAULTS, ...options });
	gw.initialOptions = { ...gw.options };
	return gw;
}

/** Validates and applies a partial set of options; throws a TypeError naming a bad one. */
function setOptions(gw, partial) {
	for (const [name, value] of Object.entries(partial ?? {})) {
		if (!OPTION_RULES[name]) throw new TypeError(`unknown gateway option ${name}`);
		if (!OPTION_RULES[name](value)) throw new TypeError(`invalid value for gateway option ${name}: ${JSON.stringify(value)}`);
	}
	Object.assign(gw.options, partial);
}

/** Forgets everything a test did: log, faults, tasks, images, plants, options. */
function resetState(gw) {
	gw.requests.length = 0; // in place: callers hold a reference to this array
	gw.faults.clear();
	for (const store of [gw.tasks, gw.images, gw.plants, gw.onceSeen, gw.accounts]) store.clear();
	gw.taskCount = 0;
	gw.criticalHits.length = 0;
	gw.options = { ...gw.initialOptions };
}

/** Logs the request; its entry is `ctx.entry` (an edit adds the form it read, `form`). */
function record(ctx) {
	const { gw } = ctx;
	if (gw.requests.length >= MAX_LOGGED_REQUESTS) gw.requests.splice(0, MAX_LOGGED_REQUESTS / 10);
	ctx.entry = {
		server: ctx.server,
		method: ctx.method,
		path: ctx.path,
		query: ctx.query,
		headers: { ...ctx.req.headers },
		rawBody: ctx.rawBody,
		time: Date.now(),
	};
	gw.requests.push(ctx.entry);
}

/** new-api's channel choice reads the model from the body first: a body it cannot read is its 400. */
const unreadableBody = (reason) => ({ layer: 'middleware', message: `Invalid request: Invalid request: ${reason}`, code: '' });

/** Parses the body as a JSON object, or throws the endpoint's own 400. */
function jsonBody(ctx) {
	let body;
	try {
		body = JSON.parse(ctx.rawBody);
	} catch (error) {
		throw invalidRequest(ctx, `the request body is not valid JSON: ${error.message}`, { code: 'invalid_json', newApi: unreadableBody(error.message) });
	}
	if (!body || typeof body !== 'object' || Array.isArray(body)) {
		const reason = 'the request body must be a JSON object';
		throw invalidRequest(ctx, reason, { code: 'invalid_json', newApi: unreadableBody(reason) });
	}
	return body;
}

const isUsageTokenRoute = (route) => route.pattern.test('/api/usage/token/') || route.pattern.test('/api/usage/token');
/** The balance routes one-api serves too (the dashboard pair and /api/status): the default mode answers them as one-api does. */
const ONE_API_ROUTES = NEWAPI_ROUTES.filter((route) => !isUsageTokenRoute(route));

/** The routes this gateway serves now: the new-api mode adds its own (one-api-like without /api/usage/token); the default mode is one-api-like. */
function routesOf(gw) {
	if (!newapi.isNewApi(gw)) return [...ONE_API_ROUTES, ...ROUTES];
	const own = gw.options.usageTokenRoute ? NEWAPI_ROUTES : ONE_API_ROUTES;
	return [...own, ...ROUTES];
}

async function routeApi(ctx) {
	const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
	for (const route of routesOf(ctx.gw)) {
		const m = route.method === method || route.method === '*' ? route.pattern.exec(ctx.path) : null;
		if (!m) continue;
		try {
			ctx.params = m.slice(1).map(decodeURIComponent);
		} catch {
			throw notFound(ctx); // malformed %-escape in the path
		}
		if (route.auth === 'token') authenticate(ctx);
		return route.handler(ctx);
	}
	if (newapi.isNewApi(ctx.gw) && newapi.servesPage(ctx.req.url)) return newapi.sendIndexPage(ctx);
	throw notFound(ctx);
}

async function handleControl(ctx) {
	const { gw } = ctx;
	const body = ctx.method === 'POST' && ctx.rawBody ? JSON.parse(ctx.rawBody) : {};
	switch (`${ctx.method} ${ctx.path}`) {
		case 'POST /__control/faults':
			return sendJson(ctx.res, 200, { ok: true, queued: gw.faults.add(body.path, body.faults) });
		case 'POST /__control/reset':
			resetState(gw);
			return sendJson(ctx.res, 200, { ok: true });
		case 'POST /__control/options':
			setOptions(gw, body);
			return sendJson(ctx.res, 200, { ok: true, options: gw.options });
		case 'GET /__control/requests':
			return sendJson(ctx.res, 200, gw.requests);
		default:
			return sendJson(ctx.res, 404, { error: `no control endpoint ${ctx.method} ${ctx.path}` });
	}
}

function answerError(ctx, error) {
	if (isGone(ctx.res)) return; // the client hung up (or a fault dropped it): nobody to tell
	if (ctx.res.headersSent) return dropConnection(ctx.res); // too late for a clean answer
	if (ctx.control) return sendJson(ctx.res, 400, { error: error.message });
	if (!(error instanceof GatewayError)) {
		console.error('[gateway] handler failed:', error);
		error = internalError(ctx);
	}
	const { status, body } = newapi.isNewApi(ctx.gw) ? newApiAnswer(ctx, error) : error;
	sendJson(ctx.res, status, body, error.headers);
}

function logLine(ctx, started) {
	ctx.res.on('close', () => {
		const status = ctx.res.writableFinished ? ctx.res.statusCode : 'dropped';
		console.error(`[gateway] ${ctx.server} ${ctx.method} ${ctx.path} -> ${status} (${Date.now() - started} ms)`);
	});
}

/** Handles one request on either server (`server` is 'api' or 'files'). */
async function handleRequest(gw, server, req, res) {
	const url = new URL(req.url, 'http://gateway.invalid');
	const ctx = {
		gw, server, req, res,
		method: req.method,
		path: url.pathname,
		query: Object.fromEntries(url.searchParams),
		params: [],
		rawBody: '',
		rawBytes: Buffer.alloc(0),
		requestId: newRequestId(),
		flavour: flavourFor(url.pathname),
		control: server === 'api' && url.pathname.startsWith('/__control/'),
		json: () => jsonBody(ctx),
	};
	if (gw.options.log) logLine(ctx, Date.now());
	try {
		const body = await readBody(req);
		ctx.rawBody = body ? body.toString('utf8') : '';
		ctx.rawBytes = body ?? Buffer.alloc(0);
		if (ctx.control) return await handleControl(ctx); // harness traffic: not logged, delayed or faulted
		record(ctx);
		if (body === null) throw new GatewayError(413, { error: { message: 'request body too large', type: 'invalid_request_error' } });
		if (server === 'files') {
			const fault = gw.faults.take(ctx.path);
			if (fault && (await serveFault(ctx, fault))) return;
			return handleFileRequest(ctx);
		}
		res.setHeader('x-oneapi-request-id', ctx.requestId);
		const fault = gw.faults.take(ctx.path);
		// No timer at all for 0: even setTimeout(0) waits a timer tick (about a millisecond) per request.
		if (gw.options.delayMs > 0) await sleep(gw.options.delayMs);
		if (fault && (await serveFault(ctx, fault))) return;
		if (!isGone(res)) await routeApi(ctx);
	} catch (error) {
		answerError(ctx, error);
	}
}

module.exports = { createState, setOptions, resetState, handleRequest };
