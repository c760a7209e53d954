'use strict';
// A hostile "new-api style" model gateway for tests: normal answers by default, and a
// misbehaviour chosen per request by the magic word `[hostile:<scenario>]`. See README.md.
// Plain CommonJS, Node built-ins only, listening on 127.0.0.1 only. Requiring this file also
// loads dns-preload.js, so `*.example.test` names resolve to 127.0.0.1 in this process.
require('./dns-preload');
const http = require('node:http');
const path = require('node:path');
const S = require('./scenarios');
const media = require('./media');

const GATEWAY_HOST = 'gw.example.test';
const SIBLING_HOST = 'files.gw.example.test';
const MOVED_ORIGIN = 'https://new.example.test';
const SLOW_HEADERS_MS = 10 * 60 * 1000;
const MAX_BODY_BYTES = 32 * 1024 * 1024;
const DNS_PRELOAD = path.join(__dirname, 'dns-preload.js');

const DEFAULTS = { dripIntervalMs: 5000, keepAliveIntervalMs: 10000, videoPollsToFinish: 2, log: false };
const MODELS = ['img-image-2', 'img-image-2-mini', 'video-veo-3', 'chat-gpt-5', 'chat-sonnet-5', 'chat-haiku-4-5'];

function checkOptions(options) {
	const opts = { ...DEFAULTS, ...options };
	for (const key of ['dripIntervalMs', 'keepAliveIntervalMs']) {
		if (!Number.isFinite(opts[key]) || opts[key] < 1) throw new TypeError(`${key} must be a number >= 1`);
	}
	if (!Number.isInteger(opts.videoPollsToFinish) || opts.videoPollsToFinish < 0) {
		throw new TypeError('videoPollsToFinish must be an integer >= 0');
	}
	return opts;
}

// ---------- answers ----------
// An answer is { status, headers, body } (string | Buffer), { status, headers, stream(ctx) }
// (headers first, then stream writes), or { drop: true } (destroy the socket, no answer).

const json = (status, value, headers = {}) => ({
	status,
	headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
	body: JSON.stringify(value),
});
const text = (status, contentType, body, headers = {}) => ({ status, headers: { 'content-type': contentType, ...headers }, body });
const redirect = (status, location) => ({ status, headers: { location, 'content-type': 'text/html' }, body: '' });

const flavourOf = (kind) => (kind === 'messages' ? 'native' : kind === 'plants' ? 'store' : 'openai');

/** An error body in the endpoint's own format. */
function errorAnswer(kind, status, message, type = 'invalid_request_error', code = null) {
	switch (flavourOf(kind)) {
		case 'native':
			return json(status, { type: 'error', error: { type, message } });
		case 'store':
			return json(status, { error: status, message });
		default:
			return json(status, { error: { message, type, param: null, code } });
	}
}

const isGone = (res) => res.destroyed || res.writableEnded || res.socket?.destroyed === true;

const sseData = (payload) => `data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`;
const sseEvent = (type, payload) => `event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`;
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' };

/** Writes frames one by one (each its own write, yielding between them), then ends unless told not to. */
async function writeFrames(ctx, frames, end = true) {
	const { res } = ctx;
	res.socket?.setNoDelay(true);
	for (const frame of frames) {
		if (isGone(res)) return;
		await new Promise((resolve) => res.write(frame, () => setImmediate(resolve)));
	}
	if (end && !isGone(res)) res.end();
}

const streamAnswer = (frames, end = true) => ({ status: 200, headers: SSE_HEADERS, stream: (ctx) => writeFrames(ctx, frames, end) });

// ---------- request helpers ----------

function parseJson(ctx) {
	if (ctx.rec.body.trim() === '') return { ok: true, value: {} };
	try {
		return { ok: true, value: JSON.parse(ctx.rec.body) };
	} catch {
		return { ok: false };
	}
}

const authOf = (ctx) => ctx.req.headers.authorization ?? '';

const ECHO_SECRETS = '[hostile:echo-secrets-200]';
/**
 * `echo-secrets-200`: a SUCCESS answer whose text quotes the request's secrets where the magic
 * word stood: the Authorization header, the key's base64, and the `x-relay-token` header value.
 */
function echoSecrets(ctx, text) {
	if (typeof text !== 'string' || !text.includes(ECHO_SECRETS)) return text;
	const auth = authOf(ctx);
	const key = auth.replace(/^Bearer\s+/i, '');
	const quote = `you sent ${auth} (base64 ${Buffer.from(key).toString('base64')}) and relay token ${ctx.req.headers['x-relay-token'] ?? ''}`;
	return text.split(ECHO_SECRETS).join(quote);
}
/** A streamed reply in pieces; an echo of secrets in small pieces, so a key is split over several. */
const pieces = (reply, echoed) => (echoed ? reply.match(/[\s\S]{1,7}/g) ?? [] : reply.split(/(?<= )/));

/** The part of the key after `sk-` (or after `Bearer `). */
function secretPart(auth) {
	const sk = /sk-(.*)$/s.exec(auth);
	return sk ? sk[1] : auth.replace(/^Bearer\s+/i, '');
}

function contentText(content) {
	if (typeof content === 'string') return content;
	if (Array.isArray(content)) {
		return content
			.map((part) => (typeof part === 'string' ? part : typeof part?.text === 'string' ? part.text : ''))
			.filter(Boolean)
			.join(' ');
	}
	return '';
}

function lastUserText(body) {
	const messages = Array.isArray(body?.messages) ? body.messages : [];
	const last = [...messages].reverse().find((m) => m?.role === 'user');
	return contentText(last?.content);
}

function firstToolName(body, format) {
	const tool = Array.isArray(body?.tools) ? body.tools[0] : undefined;
	const name = format === 'chat' ? tool?.function?.name : tool?.name;
	return typeof name === 'string' && name ? name : 'lookup';
}

const unixNow = () => Math.floor(Date.now() / 1000);

// ---------- the server ----------

/**
 * Starts the hostile gateway. Options: dripIntervalMs (5000), keepAliveIntervalMs (10000),
 * videoPollsToFinish (2), log (false: one line per request on stderr when true).
 */
async function startHostileGateway(options = {}) {
	const opts = checkOptions(options);
	const requests = [];
	const plants = new Map();
	const tasks = new Map();
	const counters = { posts: 0, imageGenerations: 0, videoTasks: 0, plantsStored: 0, chatCompletions: 0, messages: 0 };
	const timers = new Set();
	const sockets = new Set();
	let seq = 0;
	let closing = false;
	const urls = { baseUrl: '', siblingUrl: '', otherPortUrl: '' };

	// ----- timers tied to one response -----

	function track(ctx, timer) {
		timers.add(timer);
		ctx.timers.add(timer);
	}

	function clearTimers(ctx) {
		for (const timer of ctx.timers) {
			clearTimeout(timer);
			clearInterval(timer);
			timers.delete(timer);
		}
		ctx.timers.clear();
	}

	// ----- delivering answers -----

	function deliver(ctx, answer) {
		const { res, req } = ctx;
		if (isGone(res)) return;
		if (answer.drop) {
			ctx.rec.dropped = true;
			res.socket?.destroy();
			res.destroy();
			return;
		}
		if (answer.stream) {
			res.writeHead(answer.status, answer.headers);
			res.flushHeaders();
			answer.stream(ctx);
			return;
		}
		const payload = answer.body === undefined ? Buffer.alloc(0) : Buffer.from(answer.body);
		res.writeHead(answer.status, { ...answer.headers, 'content-length': payload.length });
		res.end(req.method === 'HEAD' ? undefined : payload);
	}

	/** 200 headers, then `piece` every `intervalMs`, forever. */
	function trickle(ctx, headers, piece, intervalMs) {
		const { res } = ctx;
		res.writeHead(200, headers);
		res.flushHeaders();
		const timer = setInterval(() => {
			if (isGone(res)) clearTimers(ctx);
			else res.write(piece);
		}, intervalMs);
		track(ctx, timer);
	}

	// ----- links and tasks -----

	const linkBase = (scenario) =>
		S.REDIRECTS.has(scenario) || S.REDIRECTS.has(S.innerOf(scenario, 'file')) ? urls.baseUrl : urls.siblingUrl;
	const linkUrl = (scenario, name) => `${linkBase(scenario)}/files/${scenario ?? 'plain'}/${name}`;

	function findTask(id) {
		if (tasks.has(id)) return tasks.get(id);
		const m = /^task_(.+)_(\d+)$/.exec(id);
		if (!m || !S.isKnown(m[1])) return null;
		const task = { id, scenario: m[1], model: 'unknown', polls: 0, authorization: '' };
		tasks.set(id, task);
		return task;
	}

	// ----- normal endpoint answers -----

	function needsAuth(ctx, kind) {
		if (ctx.landing || ctx.origin !== 'gateway') return null;
		if (/^Bearer\s+\S/i.test(authOf(ctx))) return null;
		return errorAnswer(kind, 401, 'Token not provided', kind === 'messages' ? 'authentication_error' : 'new_api_error', '');
	}

	function badJson(kind) {
		return errorAnswer(kind, 400, 'invalid JSON body');
	}

	function modelsAnswer() {
		return json(200, { object: 'list', data: MODELS.map((id) => ({ id, object: 'model', created: 1767225600, owned_by: 'custom' })), success: true });
	}

	function imagesAnswer(ctx, scenario) {
		const parsed = parseJson(ctx);
		if (!parsed.ok) return badJson('images');
		const body = parsed.value ?? {};
		const n = body.n === undefined ? 1 : body.n;
		if (!Number.isInteger(n) || n < 1 || n > 10) return errorAnswer('images', 400, 'n must be an integer from 1 to 10');
		const format = body.response_format ?? 'url';
		if (format !== 'url' && format !== 'b64_json') return errorAnswer('images', 400, "response_format must be 'url' or 'b64_json'");
		counters.imageGenerations += 1;
		const generation = ++seq;
		const revised = typeof body.prompt === 'string' && body.prompt.includes(ECHO_SECRETS) ? { revised_prompt: echoSecrets(ctx, body.prompt) } : {};
		const data = Array.from({ length: n }, (_, i) => ({
			...(format === 'b64_json' ? { b64_json: media.pngBytes(i).toString('base64') } : { url: linkUrl(scenario, `img_${generation}_${i}.png`) }),
			...revised,
		}));
		return json(200, { created: unixNow(), data });
	}

	function videoSubmitAnswer(ctx, scenario) {
		const parsed = parseJson(ctx);
		if (!parsed.ok) return badJson('video');
		const body = parsed.value ?? {};
		const n = ++seq;
		const id = scenario ? `task_${scenario}_${n}` : `task_${n}`;
		const model = typeof body.model === 'string' ? body.model : 'unknown';
		tasks.set(id, { id, scenario, model, polls: 0, authorization: authOf(ctx) });
		counters.videoTasks += 1;
		return json(200, { id, task_id: id, object: 'video', model, status: 'queued', progress: 0, created_at: unixNow() });
	}

	function pollAnswer(ctx, task) {
		const denied = needsAuth(ctx, 'video');
		if (denied) return denied;
		task.polls += 1;
		const k = task.polls;
		const N = opts.videoPollsToFinish;
		const data = { task_id: task.id, status: '', progress: '0%' };
		const word = S.stateWord(task.scenario);
		if (word && S.NEVER_ENDING_STATES.has(word)) {
			data.status = word;
		} else if (k <= N) {
			data.status = k === 1 ? 'QUEUED' : 'IN_PROGRESS';
			data.progress = `${Math.floor((100 * (k - 1)) / N)}%`;
		} else if (task.scenario === 'video-fail') {
			Object.assign(data, { status: 'FAILURE', progress: '100%', fail_reason: 'content policy' });
		} else if (task.scenario === 'fail-reason-key') {
			const auth = authOf(ctx) || task.authorization;
			Object.assign(data, { status: 'FAILURE', progress: '100%', fail_reason: `upstream rejected request with header Authorization: ${auth}` });
		} else if (word) {
			Object.assign(data, { status: word, progress: '100%', fail_reason: `task ended: ${word}` });
		} else {
			Object.assign(data, { status: 'SUCCESS', progress: '100%', result_url: linkUrl(task.scenario, `${task.id}.mp4`) });
		}
		return json(200, { code: 'success', message: '', data });
	}

	function chatAnswer(ctx) {
		const parsed = parseJson(ctx);
		if (!parsed.ok) return badJson('chat');
		const body = parsed.value ?? {};
		counters.chatCompletions += 1;
		const model = typeof body.model === 'string' ? body.model : 'unknown';
		const echoed = lastUserText(body).includes(ECHO_SECRETS);
		const reply = echoSecrets(ctx, `Echo: ${lastUserText(body)}`);
		const head = { id: `chatcmpl-${++seq}`, created: unixNow(), model };
		const usage = { prompt_tokens: 5, completion_tokens: reply.split(/\s+/).length, total_tokens: 5 + reply.split(/\s+/).length };
		if (body.stream === true) {
			const chunk = (delta, finish = null) =>
				sseData({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });
			return streamAnswer([
				chunk({ role: 'assistant', content: '' }),
				...pieces(reply, echoed).map((piece) => chunk({ content: piece })),
				chunk({}, 'stop'),
				sseData('[DONE]'),
			]);
		}
		return json(200, {
			...head,
			object: 'chat.completion',
			choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }],
			usage,
		});
	}

	function messagesHead(model) {
		return { id: `msg_${++seq}`, type: 'message', role: 'assistant', model };
	}

	function messagesAnswer(ctx) {
		const parsed = parseJson(ctx);
		if (!parsed.ok) return badJson('messages');
		const body = parsed.value ?? {};
		counters.messages += 1;
		const model = typeof body.model === 'string' ? body.model : 'unknown';
		const echoed = lastUserText(body).includes(ECHO_SECRETS);
		const reply = echoSecrets(ctx, `Echo: ${lastUserText(body)}`);
		const head = messagesHead(model);
		const outputTokens = reply.split(/\s+/).length;
		if (body.stream === true) {
			return streamAnswer([
				sseEvent('message_start', {
					type: 'message_start',
					message: { ...head, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } },
				}),
				sseEvent('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
				sseEvent('ping', { type: 'ping' }),
				...pieces(reply, echoed).map((piece) =>
					sseEvent('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: piece } }),
				),
				sseEvent('content_block_stop', { type: 'content_block_stop', index: 0 }),
				sseEvent('message_delta', {
					type: 'message_delta',
					delta: { stop_reason: 'end_turn', stop_sequence: null },
					usage: { output_tokens: outputTokens },
				}),
				sseEvent('message_stop', { type: 'message_stop' }),
			]);
		}
		return json(200, {
			...head,
			content: [{ type: 'text', text: reply }],
			stop_reason: 'end_turn',
			stop_sequence: null,
			usage: { input_tokens: 5, output_tokens: outputTokens },
		});
	}

	function plantsAnswer(ctx) {
		const parsed = parseJson(ctx);
		if (!parsed.ok) return errorAnswer('plants', 400, 'invalid JSON body');
		const body = parsed.value;
		if (body === null || typeof body !== 'object' || Array.isArray(body)) return errorAnswer('plants', 400, 'body must be a JSON object');
		if (!Number.isInteger(body.id)) return errorAnswer('plants', 400, 'id is required and must be an integer');
		if (typeof body.name !== 'string' || body.name === '') return errorAnswer('plants', 400, 'name is required and must be a string');
		if (body.tag !== undefined && typeof body.tag !== 'string') return errorAnswer('plants', 400, 'tag must be a string');
		// The id's digits as sent, so int64 ids beyond 2^53 keep every digit.
		const rawId = /"id"\s*:\s*(-?\d+)(?![\d.eE])/.exec(ctx.rec.body)?.[1] ?? String(body.id);
		if (plants.has(rawId)) return errorAnswer('plants', 400, `plant ${rawId} already exists`);
		const plant = { id: rawId, name: body.name, ...(body.tag !== undefined ? { tag: echoSecrets(ctx, body.tag) } : {}) };
		plants.set(rawId, plant);
		counters.plantsStored += 1;
		const tag = body.tag !== undefined ? `,"tag":${JSON.stringify(plant.tag)}` : '';
		return text(200, 'application/json; charset=utf-8', `{"id":${rawId},"name":${JSON.stringify(body.name)}${tag}}`);
	}

	function fileAnswer(name) {
		if (name.endsWith('.png')) {
			const index = Number(/_(\d+)\.png$/.exec(name)?.[1] ?? 0);
			return { status: 200, headers: { 'content-type': 'image/png' }, body: media.pngBytes(index) };
		}
		if (name.endsWith('.mp4')) return { status: 200, headers: { 'content-type': 'video/mp4' }, body: media.smallMp4() };
		return noSuchKey();
	}

	const noSuchKey = () =>
		text(404, 'application/xml', '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>');

	/** The normal answer of an API endpoint; `scenario` only shapes links and task ids. */
	function normalAnswer(ctx, kind, scenario) {
		const denied = needsAuth(ctx, kind);
		if (denied) return denied;
		switch (kind) {
			case 'models':
				return modelsAnswer();
			case 'images':
				return imagesAnswer(ctx, scenario);
			case 'video':
				return videoSubmitAnswer(ctx, scenario);
			case 'chat':
				return chatAnswer(ctx);
			case 'messages':
				return messagesAnswer(ctx);
			case 'plants':
				return plantsAnswer(ctx);
			default:
				return errorAnswer(kind, 404, `Invalid URL (${ctx.req.method} ${ctx.path})`);
		}
	}

	// ----- misbehaviour -----

	function streamErrorMessage(ctx) {
		return `upstream error: request rejected, Authorization: ${authOf(ctx)}`;
	}

	function badToolJson(ctx) {
		return [`{"query": weather, `, `Authorization=${authOf(ctx)}}`];
	}

	/** Chat-only scenarios (chat-completions and messages). */
	function chatScenario(ctx, kind, name) {
		const parsed = parseJson(ctx);
		const body = parsed.ok && parsed.value && typeof parsed.value === 'object' ? parsed.value : {};
		const stream = body.stream === true;
		const model = typeof body.model === 'string' ? body.model : 'unknown';
		if (name === 'keepalive-stream') {
			return trickle(ctx, SSE_HEADERS, ': keep-alive\n\n', opts.keepAliveIntervalMs);
		}
		if (name === 'echo-then-stall') return deliver(ctx, stalledEcho(ctx, kind, model));
		if (kind === 'chat') {
			const head = { id: `chatcmpl-${++seq}`, created: unixNow(), model };
			const chunk = (delta, finish = null) =>
				sseData({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });
			if (name === 'bad-tool-json-key') {
				const pieces = badToolJson(ctx);
				const toolName = firstToolName(body, 'chat');
				if (!stream) {
					const call = { id: 'call_hostile_1', type: 'function', function: { name: toolName, arguments: pieces.join('') } };
					return deliver(ctx, json(200, {
						...head,
						object: 'chat.completion',
						choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }],
					}));
				}
				return deliver(ctx, streamAnswer([
					chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_hostile_1', type: 'function', function: { name: toolName, arguments: '' } }] }),
					...pieces.map((piece) => chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] })),
					chunk({}, 'tool_calls'),
					sseData('[DONE]'),
				]));
			}
			// stream-error-key
			const error = { error: { message: streamErrorMessage(ctx), type: 'upstream_error', param: null, code: 'bad_response' } };
			if (!stream) return deliver(ctx, json(500, error));
			return deliver(ctx, streamAnswer([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hello' }), sseData(error)]));
		}
		// messages
		const head = messagesHead(model);
		const start = sseEvent('message_start', {
			type: 'message_start',
			message: { ...head, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } },
		});
		if (name === 'bad-tool-json-key') {
			const pieces = badToolJson(ctx);
			const toolName = firstToolName(body, 'messages');
			if (!stream) {
				return deliver(ctx, json(200, {
					...head,
					content: [{ type: 'tool_use', id: 'toolu_hostile_1', name: toolName, input: pieces.join('') }],
					stop_reason: 'tool_use',
					stop_sequence: null,
					usage: { input_tokens: 5, output_tokens: 9 },
				}));
			}
			return deliver(ctx, streamAnswer([
				start,
				sseEvent('content_block_start', {
					type: 'content_block_start',
					index: 0,
					content_block: { type: 'tool_use', id: 'toolu_hostile_1', name: toolName, input: {} },
				}),
				sseEvent('ping', { type: 'ping' }),
				...pieces.map((partial_json) =>
					sseEvent('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json } }),
				),
				sseEvent('content_block_stop', { type: 'content_block_stop', index: 0 }),
				sseEvent('message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } }),
				sseEvent('message_stop', { type: 'message_stop' }),
			]));
		}
		// stream-error-key
		const error = { type: 'error', error: { type: 'api_error', message: streamErrorMessage(ctx) } };
		if (!stream) return deliver(ctx, json(500, error));
		return deliver(ctx, streamAnswer([
			start,
			sseEvent('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
			sseEvent('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } }),
			sseEvent('error', error),
		]));
	}

	/**
	 * `echo-then-stall`: a streamed answer that starts by quoting the request's secrets in small
	 * pieces (as `echo-secrets-200` does), then sends nothing more and never ends.
	 */
	function stalledEcho(ctx, kind, model) {
		const quote = pieces(echoSecrets(ctx, `Partial answer: ${ECHO_SECRETS}`), true);
		if (kind === 'chat') {
			const head = { id: `chatcmpl-${++seq}`, created: unixNow(), model, object: 'chat.completion.chunk' };
			const chunk = (delta) => sseData({ ...head, choices: [{ index: 0, delta, finish_reason: null }] });
			return streamAnswer([chunk({ role: 'assistant', content: '' }), ...quote.map((content) => chunk({ content }))], false);
		}
		const head = messagesHead(model);
		return streamAnswer([
			sseEvent('message_start', { type: 'message_start', message: { ...head, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } }),
			sseEvent('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
			...quote.map((text) => sseEvent('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })),
		], false);
	}

	/**
	 * The key's balance routes (Gateway Account) refuse every key, quoting it as new-api's token
	 * check does when a key is unknown; no magic word, since these are GETs without a body.
	 */
	function balanceRefusal(ctx) {
		return json(401, { success: false, message: `无效的令牌 token=${secretPart(authOf(ctx))}`, error: { message: `invalid token ${authOf(ctx)}`, type: 'new_api_error' } });
	}

	const contentTypeOf = (kind, name) => {
		if (kind !== 'file') return 'application/json';
		return name.endsWith('.mp4') ? 'video/mp4' : name.endsWith('.png') ? 'image/png' : 'application/octet-stream';
	};

	/**
	 * Applies a scenario that acts on this very request. `normal()` computes the normal answer
	 * (with its side effects). kind: models | images | video | video-status | chat | messages | plants | file.
	 */
	function applyHere(ctx, kind, name, normal, fileName = '') {
		const auth = authOf(ctx);
		if (S.REDIRECTS.has(name)) {
			const target = name === 'redirect-port-302' ? urls.otherPortUrl : urls.siblingUrl;
			return deliver(ctx, redirect(name.endsWith('307') ? 307 : 302, `${target}/landing${ctx.req.url}`));
		}
		if (name in S.BODIES_200) {
			const value = name === '200-empty-choices' && kind === 'chat' ? { id: 'x', object: 'chat.completion', choices: [] } : S.BODIES_200[name];
			return deliver(ctx, json(200, value));
		}
		switch (name) {
			case 'moved-301':
				return deliver(ctx, redirect(301, `${MOVED_ORIGIN}${ctx.req.url}`));
			case 'slow-headers':
				return track(ctx, setTimeout(() => deliver(ctx, normal()), SLOW_HEADERS_MS));
			case 'drip-body':
				return trickle(ctx, { 'content-type': contentTypeOf(kind, fileName) }, ' ', opts.dripIntervalMs);
			case 'token-in-200':
				return deliver(ctx, json(200, { code: 'invalid_token', message: `invalid token ${auth}` }));
			case '401-secret-part':
				return deliver(ctx, json(401, { error: { message: `无效的令牌 token=${secretPart(auth)}`, type: 'new_api_error' } }));
			case 'plant-200-error':
				return deliver(ctx, kind === 'plants' ? json(200, { error: 400, message: 'name taken' }) : normal());
			case 'acted-then-502':
			case 'acted-then-504':
			case 'acted-then-reset': {
				const answer = normal();
				if (answer.drop || answer.status >= 400) return deliver(ctx, answer);
				if (name === 'acted-then-reset') return deliver(ctx, { drop: true });
				const status = name === 'acted-then-502' ? 502 : 504;
				return deliver(ctx, text(status, 'text/html', S.nginxPage(status, status === 502 ? 'Bad Gateway' : 'Gateway Time-out')));
			}
			case 'keepalive-stream':
			case 'bad-tool-json-key':
			case 'stream-error-key':
			case 'echo-then-stall':
				if (kind === 'chat' || kind === 'messages') return chatScenario(ctx, kind, name);
				return deliver(ctx, normal());
			default:
				return deliver(ctx, normal());
		}
	}

	// ----- routes -----

	function apiRoute(ctx, kind, scenario) {
		const normal = () => normalAnswer(ctx, kind, ctx.landing ? null : scenario);
		if (ctx.landing || !scenario) return deliver(ctx, normal());
		const where = S.kindOf(scenario);
		const linkFlow = kind === 'images' || kind === 'video';
		if (where === 'here' || (S.REDIRECTS.has(scenario) && !linkFlow)) return applyHere(ctx, kind, scenario, normal);
		return deliver(ctx, normal());
	}

	function statusRoute(ctx, taskId) {
		const task = findTask(taskId);
		if (!task) {
			const denied = needsAuth(ctx, 'video');
			return deliver(ctx, denied ?? json(404, { code: 'task_not_exist', message: 'task_not_exist', data: null }));
		}
		const normal = () => pollAnswer(ctx, task);
		if (ctx.landing) return deliver(ctx, normal());
		if (task.scenario === 'drip-status') return applyHere(ctx, 'video-status', 'drip-body', normal);
		const inner = S.innerOf(task.scenario, 'poll');
		if (inner) return applyHere(ctx, 'video-status', inner, normal);
		return deliver(ctx, normal());
	}

	function fileRoute(ctx, segment, name) {
		const normal = () => fileAnswer(name);
		const scenario = segment === 'plain' ? null : segment;
		if (ctx.landing || !scenario) return deliver(ctx, normal());
		if (!S.isKnown(scenario)) return deliver(ctx, noSuchKey());
		if (S.REDIRECTS.has(scenario)) return applyHere(ctx, 'file', scenario, normal, name);
		const inner = S.innerOf(scenario, 'file');
		if (inner) return applyHere(ctx, 'file', inner, normal, name);
		const mediaType = contentTypeOf('file', name);
		switch (scenario) {
			case 'image-one-403':
				return deliver(ctx, /_1\.png$/.test(name) ? text(403, 'application/xml', S.EXPIRED_XML) : normal());
			case 'link-json-error':
				return deliver(ctx, json(200, { error: 'link expired' }));
			case 'link-forbidden-text':
				return deliver(ctx, text(200, 'text/plain', 'Forbidden'));
			case 'link-tiny-text-as-mp4':
				return deliver(ctx, text(200, name.endsWith('.png') ? mediaType : 'video/mp4', 'Forbidden'));
			case 'link-html':
				return deliver(ctx, text(200, 'text/html; charset=utf-8', S.HTML_ERROR_PAGE));
			default: {
				const mib = S.bigVideoMib(scenario);
				if (mib !== null && name.endsWith('.mp4')) return media.streamBigMp4(ctx.res, mib);
				return deliver(ctx, normal());
			}
		}
	}

	/** Scenario named by the path: a magic word, a /files/<scenario>/ segment, or a task id. */
	function scenarioOfPath(pathname) {
		let decoded = pathname;
		try {
			decoded = decodeURIComponent(pathname);
		} catch {
			// keep the raw path
		}
		const magic = S.scenarioInText(decoded);
		if (magic !== null) return magic;
		const file = /^\/files\/([^/]+)\//.exec(pathname);
		if (file) return file[1] === 'plain' ? null : file[1];
		const task = /^\/v1\/video\/generations\/task_(.+)_\d+$/.exec(pathname);
		return task ? task[1] : null;
	}

	function dispatch(ctx) {
		const { req, rec } = ctx;
		const pathname = new URL(req.url, 'http://localhost').pathname;
		ctx.landing = pathname.startsWith('/landing/');
		const routePath = ctx.landing ? pathname.slice('/landing'.length) : pathname;
		ctx.path = routePath;
		const scenario = S.scenarioInText(rec.body) ?? scenarioOfPath(routePath);
		rec.scenario = scenario;
		if (scenario !== null && !ctx.landing && !S.isKnown(scenario)) {
			return deliver(ctx, json(400, { error: { message: `hostile gateway: unknown scenario "${scenario}"`, type: 'hostile_unknown_scenario' } }));
		}

		const file = /^\/files\/([^/]+)\/([^/]+)$/.exec(routePath);
		if (file && (req.method === 'GET' || req.method === 'HEAD')) return fileRoute(ctx, file[1], file[2]);
		if (ctx.origin !== 'gateway' && !ctx.landing) return deliver(ctx, noSuchKey());

		if (req.method === 'GET' && /^\/(api\/usage\/token\/?|v1\/dashboard\/billing\/(subscription|usage))$/.test(routePath)) {
			return deliver(ctx, balanceRefusal(ctx));
		}
		const status = /^\/v1\/video\/generations\/([^/]+)$/.exec(routePath);
		if (status && req.method === 'GET') return statusRoute(ctx, status[1]);
		const routes = {
			'GET /v1/models': 'models',
			'POST /v1/images/generations': 'images',
			// A multipart body: only scenarios that answer without reading it (e.g. 401-secret-part) apply.
			'POST /v1/images/edits': 'images',
			'POST /v1/video/generations': 'video',
			'POST /v1/chat/completions': 'chat',
			'POST /v1/messages': 'messages',
			'POST /plants': 'plants',
		};
		let kind = routes[`${req.method} ${routePath}`];
		// A 302 turns a redirected POST into a GET: the landing still answers it.
		if (!kind && ctx.landing) kind = routes[`POST ${routePath}`];
		if (!kind) {
			const family = routePath.startsWith('/v1/messages') ? 'messages' : routePath.startsWith('/plants') ? 'plants' : 'other';
			return deliver(ctx, errorAnswer(family, 404, `Invalid URL (${req.method} ${routePath})`));
		}
		return apiRoute(ctx, kind, scenario);
	}

	// ----- connection handling -----

	function handle(req, res, server) {
		const host = req.headers.host ?? '';
		const hostName = host.replace(/:\d+$/, '').toLowerCase();
		const origin = server === 'other' ? 'other-port' : hostName === SIBLING_HOST ? 'sibling' : 'gateway';
		const rec = {
			method: req.method,
			path: req.url,
			host,
			headers: { ...req.headers },
			body: '',
			scenario: null,
			at: Date.now(),
			aborted: false,
			origin,
			status: null,
			dropped: false,
		};
		requests.push(rec);
		const ctx = { req, res, rec, origin, timers: new Set(), landing: false, path: '' };
		const writeHead = res.writeHead;
		res.writeHead = function (...args) {
			rec.status = args[0];
			return writeHead.apply(this, args);
		};
		res.on('close', () => {
			clearTimers(ctx);
			if (!res.writableFinished && !rec.dropped && !closing) rec.aborted = true;
		});
		if (req.method === 'POST') counters.posts += 1;

		const chunks = [];
		let size = 0;
		req.on('data', (chunk) => {
			size += chunk.length;
			if (size <= MAX_BODY_BYTES) chunks.push(chunk);
		});
		req.on('error', () => {});
		req.on('end', () => {
			rec.body = Buffer.concat(chunks).toString('utf8');
			if (opts.log) process.stderr.write(`[hostile] ${origin} ${req.method} ${req.url}\n`);
			if (size > MAX_BODY_BYTES) return deliver(ctx, json(413, { error: { message: 'body too large', type: 'invalid_request_error' } }));
			try {
				dispatch(ctx);
			} catch (error) {
				if (!res.headersSent) deliver(ctx, json(500, { error: { message: `hostile gateway bug: ${error.message}`, type: 'hostile_internal' } }));
				else res.destroy();
			}
		});
	}

	function listen(server) {
		server.on('connection', (socket) => {
			sockets.add(socket);
			socket.on('close', () => sockets.delete(socket));
		});
		return new Promise((resolve, reject) => {
			server.once('error', reject);
			server.listen(0, '127.0.0.1', () => resolve(server.address().port));
		});
	}

	const main = http.createServer((req, res) => handle(req, res, 'main'));
	const other = http.createServer((req, res) => handle(req, res, 'other'));
	const port = await listen(main);
	const otherPort = await listen(other);
	urls.baseUrl = `http://${GATEWAY_HOST}:${port}`;
	urls.siblingUrl = `http://${SIBLING_HOST}:${port}`;
	urls.otherPortUrl = `http://${GATEWAY_HOST}:${otherPort}`;

	let closed = null;
	return {
		...urls,
		port,
		otherPort,
		requests,
		plants,
		tasks,
		counters,
		reset() {
			requests.length = 0;
			plants.clear();
			tasks.clear();
			for (const key of Object.keys(counters)) counters[key] = 0;
		},
		count(filter = {}) {
			return requests.filter((r) => Object.entries(filter).every(([key, value]) => {
				if (key === 'path') return r.path.split('?')[0] === value;
				return r[key] === value;
			})).length;
		},
		leakedAuthorization() {
			return requests.filter((r) => r.origin !== 'gateway' && r.headers.authorization !== undefined);
		},
		close() {
			if (closed) return closed;
			closing = true;
			for (const timer of timers) {
				clearTimeout(timer);
				clearInterval(timer);
			}
			timers.clear();
			closed = Promise.all(
				[main, other].map(
					(server) =>
						new Promise((resolve) => {
							server.close(() => resolve());
							server.closeAllConnections();
						}),
				),
			).then(() => undefined);
			for (const socket of sockets) socket.destroy();
			return closed;
		},
	};
}

module.exports = { startHostileGateway, DNS_PRELOAD, GATEWAY_HOST, SIBLING_HOST, MOVED_ORIGIN };
