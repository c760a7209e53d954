'use strict';
// POST /v1/chat/completions in the OpenAI format, as new-api relays it. The reply echoes the
// input so tests can assert it: "[<system>] Echo from <model>: <last user message>".
// With `tools` offered, `[call:<tool> {json args}]` in the last user message makes the reply a
// tool call, and the turn after the tool results echoes them (see README.md, "Tool calls").
const { sendJson } = require('./http');
const { invalidRequest } = require('./errors');
const { requireModel } = require('./models');
const { has, rateLimitOnce, streamContentType } = require('./magic');
const { countTokens, splitPieces, applyStop, contentText, fitOutput } = require('./reply');
const { dataFrame, magicInterrupt, magicStall, streamFrames } = require('./sse');
const { BoundedMap, randomHex, unixNow } = require('./util');
const { attachmentSummary, messageAttachments } = require('./attachments');
const { jsonAnswer, NOT_JSON_ANSWER } = require('./json-answer');

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'];
const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'];

function checkNumber(ctx, body, field, min, max) {
	const value = body[field];
	if (value !== undefined && (typeof value !== 'number' || value < min || value > max)) {
		throw invalidRequest(ctx, `${field} must be a number between ${min} and ${max}`, { param: field, code: 'invalid_value' });
	}
}

function validateMessages(ctx, messages) {
	if (!Array.isArray(messages) || messages.length === 0) {
		throw invalidRequest(ctx, 'messages must be a non-empty array', { param: 'messages' });
	}
	messages.forEach((message, i) => {
		if (!message || typeof message !== 'object' || !ROLES.includes(message.role)) {
			throw invalidRequest(ctx, `messages[${i}].role must be one of ${ROLES.join(', ')}`, { param: `messages[${i}].role` });
		}
		const { content } = message;
		if (typeof content !== 'string' && !Array.isArray(content) && !(content === null && message.role === 'assistant')) {
			throw invalidRequest(ctx, `messages[${i}].content must be a string or an array of content parts`, {
				param: `messages[${i}].content`,
			});
		}
	});
}

function maxTokensOf(ctx, body, model) {
	const field = body.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens';
	const value = body[field];
	if (value === undefined || value === null) return model.maxOutput;
	if (!Number.isInteger(value) || value < 1) {
		throw invalidRequest(ctx, `${field} must be a positive integer`, { param: field, code: 'invalid_value' });
	}
	if (value > model.maxOutput) {
		throw invalidRequest(
			ctx,
			`${field} is too large: ${value}. This model supports at most ${model.maxOutput} completion tokens, whereas you provided ${value}.`,
			{ param: field, code: 'invalid_value' },
		);
	}
	return value;
}

function stopsOf(ctx, stop) {
	if (stop === undefined || stop === null) return [];
	const stops = typeof stop === 'string' ? [stop] : stop;
	if (!Array.isArray(stops) || stops.length > 4 || !stops.every((s) => typeof s === 'string')) {
		throw invalidRequest(ctx, 'stop must be a string or an array of up to 4 strings', { param: 'stop' });
	}
	return stops;
}

/** `response_format`: null for text, else { type, schema } (json_schema needs a name and a schema object). */
function responseFormatOf(ctx, format) {
	if (format === undefined || format === null) return null;
	const type = format?.type;
	if (!['text', 'json_object', 'json_schema'].includes(type)) {
		throw invalidRequest(ctx, "response_format.type must be one of 'text', 'json_object', 'json_schema'", { param: 'response_format.type' });
	}
	if (type === 'text') return null;
	if (type === 'json_object') return { type, schema: null };
	const spec = format.json_schema;
	if (typeof spec?.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(spec.name)) {
		throw invalidRequest(ctx, 'response_format.json_schema.name must be 1-64 letters, digits, _ or -', { param: 'response_format.json_schema.name' });
	}
	if (!spec.schema || typeof spec.schema !== 'object' || Array.isArray(spec.schema)) {
		throw invalidRequest(ctx, 'response_format.json_schema.schema must be a JSON Schema object', { param: 'response_format.json_schema.schema' });
	}
	return { type, schema: spec.schema };
}

function validate(ctx, body) {
	const model = requireModel(ctx, body.model, 'chat');
	validateMessages(ctx, body.messages);
	// Decodes and checks every image and PDF part; describes those of the last user message.
	const attachments = messageAttachments(ctx, body.messages, 'chat');
	const responseFormat = responseFormatOf(ctx, body.response_format);
	if (body.stream !== undefined && typeof body.stream !== 'boolean') {
		throw invalidRequest(ctx, 'stream must be a boolean', { param: 'stream' });
	}
	if (body.reasoning_effort !== undefined && !EFFORTS.includes(body.reasoning_effort)) {
		throw invalidRequest(ctx, `reasoning_effort must be one of ${EFFORTS.join(', ')}`, {
			param: 'reasoning_effort',
			code: 'invalid_value',
		});
	}
	checkNumber(ctx, body, 'temperature', 0, 2);
	checkNumber(ctx, body, 'top_p', 0, 1);
	if (body.tools !== undefined && (!Array.isArray(body.tools) || !body.tools.every((t) => typeof t?.function?.name === 'string'))) {
		throw invalidRequest(ctx, 'tools must be an array of {type:"function", function:{name, parameters}}', { param: 'tools' });
	}
	return { model, maxTokens: maxTokensOf(ctx, body, model), stops: stopsOf(ctx, body.stop), attachments, responseFormat };
}

const CALL_WORD = /\[call:([A-Za-z0-9_-]+)\s*/g;

/** The arguments object starting at `from`: the shortest `{…}` that parses and is followed by `]`. */
function callArguments(text, from) {
	for (let end = text.indexOf('}', from); end !== -1; end = text.indexOf('}', end + 1)) {
		if (!/^\s*\]/.test(text.slice(end + 1))) continue;
		try {
			const args = JSON.parse(text.slice(from, end + 1));
			if (args && typeof args === 'object' && !Array.isArray(args)) return args;
		} catch {
			// not yet the whole object: a `}` inside it
		}
	}
	return null;
}

/**
 * The tool calls the last user message asks for with `[call:<name> {args}]` (args optional), when
 * the request offers tools and no tool result has come back since that message. A name the
 * request does not offer is a 400, so a test with a misnamed tool fails loudly.
 */
function requestedToolCalls(ctx, body) {
	if (!body.tools?.length) return [];
	const { messages } = body;
	const lastUser = messages.map((m) => m.role).lastIndexOf('user');
	if (lastUser < 0 || messages.slice(lastUser + 1).some((m) => m.role === 'tool')) return [];
	const text = contentText(messages[lastUser].content);
	const offered = body.tools.map((t) => t.function.name);
	const calls = [];
	for (const match of text.matchAll(CALL_WORD)) {
		const [, name] = match;
		const at = match.index + match[0].length;
		const args = text[at] === ']' ? {} : callArguments(text, at);
		if (!args) throw invalidRequest(ctx, `[call:${name} …] needs a JSON object of arguments and a closing ]`, { param: 'messages' });
		if (!offered.includes(name)) {
			throw invalidRequest(ctx, `[call:${name}] names a tool the request does not offer (offered: ${offered.join(', ')})`, { param: 'tools' });
		}
		calls.push({ id: `call_${randomHex(12)}`, type: 'function', function: { name, arguments: JSON.stringify(args) } });
	}
	return calls;
}

/** The tool calls this gateway answered with, by id: what a later request must bring back unchanged. */
function issuedCalls(gw) {
	gw.issuedToolCalls ??= new BoundedMap(20000);
	return gw.issuedToolCalls;
}

/**
 * Whether returned arguments keep every issued argument unchanged. Extra keys are allowed: n8n's
 * AI Agent adds the call's `id` to the arguments when it sends a call back.
 */
function keepsArguments(issuedText, returnedText) {
	let issued;
	let returned;
	try {
		issued = JSON.parse(issuedText);
		returned = JSON.parse(returnedText);
	} catch {
		return false;
	}
	if (!returned || typeof returned !== 'object' || Array.isArray(returned)) return false;
	return Object.entries(issued).every(([key, value]) => JSON.stringify(returned[key]) === JSON.stringify(value));
}

function rememberCalls(ctx, calls) {
	for (const call of calls) issuedCalls(ctx.gw).set(call.id, { name: call.function.name, arguments: call.function.arguments });
}

/**
 * Keeps the tool round trip honest, as the real API does: every `tool` message answers a call of
 * the assistant message before it, every call of an assistant message is answered before the
 * conversation goes on, and a call carrying an id this gateway issued comes back as it was issued
 * (same tool, its arguments unchanged). Each broken rule is a 400 naming the id.
 */
function checkToolRoundTrip(ctx, messages) {
	let open = null; // ids of the last assistant message's calls still waiting for their result
	const unanswered = () => {
		if (open?.size) {
			throw invalidRequest(
				ctx,
				`An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open].join(', ')}`,
				{ param: 'messages' },
			);
		}
	};
	messages.forEach((m, i) => {
		if (m.role === 'tool') {
			if (!open?.has(m.tool_call_id)) {
				throw invalidRequest(ctx, `messages[${i}]: a message with role 'tool' must be a response to a preceding message with 'tool_calls' (no open call ${m.tool_call_id})`, { param: `messages[${i}].tool_call_id` });
			}
			open.delete(m.tool_call_id);
			return;
		}
		unanswered();
		open = null;
		if (m.role !== 'assistant' || !Array.isArray(m.tool_calls)) return;
		open = new Set();
		for (const call of m.tool_calls) {
			const issued = issuedCalls(ctx.gw).get(call?.id);
			if (issued && (issued.name !== call.function?.name || !keepsArguments(issued.arguments, call.function?.arguments))) {
				throw invalidRequest(ctx, `messages[${i}].tool_calls: ${call.id} comes back changed (issued as ${issued.name} ${issued.arguments})`, { param: `messages[${i}].tool_calls` });
			}
			open.add(call?.id);
		}
	});
	unanswered();
}

/** The results of the tool calls since the last user message, as "<tool>: <content>". */
function toolResults(messages) {
	const lastUser = messages.map((m) => m.role).lastIndexOf('user');
	const names = new Map();
	const results = [];
	for (const m of messages.slice(lastUser + 1)) {
		for (const call of m.tool_calls ?? []) names.set(call.id, call.function?.name);
		if (m.role === 'tool') results.push(`${names.get(m.tool_call_id) ?? m.tool_call_id}: ${contentText(m.content)}`);
	}
	return results;
}

function promptTokensOf(messages) {
	return messages.reduce((sum, m) => sum + 3 + countTokens(contentText(m.content)), 0);
}

/** The deterministic answer: text, reasoning, finish reason and usage. */
function compose(body, { model, maxTokens, stops, attachments = [], responseFormat = null }) {
	const { messages } = body;
	const system = messages
		.filter((m) => m.role === 'system' || m.role === 'developer')
		.map((m) => contentText(m.content))
		.join(' ');
	const userText = contentText([...messages].reverse().find((m) => m.role === 'user')?.content);
	// What arrived with the last user message is named in the echo: type, size and a hash of the bytes.
	const lastUser = [userText, attachmentSummary(attachments)].filter(Boolean).join(' ');
	const effort = body.reasoning_effort;
	const thinks = model.alwaysThinks || (effort !== undefined && effort !== 'none');
	const reasoning = thinks ? `Reasoning with ${effort ?? 'adaptive'} effort about: ${lastUser}` : '';
	const results = toolResults(messages);
	const echo = results.length ? `Echo from ${model.id} with tool results: ${results.join(' | ')}` : `Echo from ${model.id}: ${lastUser}`;
	let reply = `${system ? `[${system}] ` : ''}${echo}`;
	// JSON asked for: the answer is JSON (following the schema), unless `[not-json]` says otherwise.
	if (responseFormat) {
		const json = jsonAnswer(responseFormat.schema, { model: model.id, text: userText, attachments });
		reply = has(userText, 'not-json') ? NOT_JSON_ANSWER : JSON.stringify(json);
	}
	const stopped = applyStop(reply, stops);
	const out = fitOutput(reasoning, stopped.text, maxTokens);
	const promptTokens = promptTokensOf(messages);
	return {
		text: out.text,
		reasoning: out.thinking,
		finishReason: out.truncated ? 'length' : 'stop',
		usage: {
			prompt_tokens: promptTokens,
			completion_tokens: out.outputTokens,
			total_tokens: promptTokens + out.outputTokens,
			prompt_tokens_details: { cached_tokens: 0 },
			completion_tokens_details: { reasoning_tokens: countTokens(out.thinking) },
		},
	};
}

const STREAM_ERROR = dataFrame({
	error: {
		message: 'upstream stream error: the model stopped unexpectedly',
		type: 'upstream_error',
		param: null,
		code: 'stream_interrupted',
	},
});

/**
 * `[stream-pace:MS]`: every frame of a streamed answer waits MS ms (at most 10 s) after the one
 * before, as a model writes, so a test can see text arrive in pieces at the far end of n8n.
 * Also used by messages.js for its streams.
 * The answer object is wrapped so each write reports done only after the pause.
 */
function pacedResponse(res, conversation) {
	const m = /\[stream-pace:(\d{1,5})\]/.exec(conversation);
	const ms = m ? Math.min(Number(m[1]), 10000) : 0;
	if (ms === 0) return res;
	return new Proxy(res, {
		get(target, prop) {
			if (prop === 'write') return (chunk, done) => target.write(chunk, (error) => setTimeout(() => done?.(error), ms).unref());
			const value = Reflect.get(target, prop, target);
			return typeof value === 'function' ? value.bind(target) : value;
		},
	});
}

/** The end mark; `[done-space]` sends it with a trailing space (`data: [DONE] `), as some relays do. */
const doneFrame = (conversation) => dataFrame(has(conversation, 'done-space') ? '[DONE] ' : '[DONE]');

function streamAnswer(ctx, head, answer, conversation) {
	const chunk = (delta, finishReason = null) =>
		dataFrame({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] });
	const reasoningFrames = splitPieces(answer.reasoning).map((p) => chunk({ reasoning_content: p }));
	const textFrames = splitPieces(answer.text).map((p) => chunk({ content: p }));
	const frames = [
		chunk({ role: 'assistant', content: '' }),
		...reasoningFrames,
		...textFrames,
		chunk({}, answer.finishReason),
		dataFrame({ ...head, choices: [], usage: answer.usage }),
		doneFrame(conversation),
	];
	const interrupt = magicInterrupt(conversation, 1 + reasoningFrames.length, textFrames.length, STREAM_ERROR);
	return streamFrames(pacedResponse(ctx.res, conversation), frames, interrupt, streamContentType(conversation), magicStall(conversation));
}

/**
 * `[tool-pieces]`: the calls streamed as the real API streams them: one call after the other, the
 * first delta of each with its `index`, id, type, name and empty arguments, then its arguments in
 * two pieces that carry only the `index`.
 */
function toolCallPieces(calls) {
	const deltas = [{ role: 'assistant', content: null }];
	calls.forEach((call, index) => {
		const args = call.function.arguments;
		const half = Math.ceil(args.length / 2);
		deltas.push({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] });
		for (const piece of [args.slice(0, half), args.slice(half)]) if (piece) deltas.push({ tool_calls: [{ index, function: { arguments: piece } }] });
	});
	return deltas;
}

/** An assistant turn that only calls tools, streamed or not. */
function answerToolCalls(ctx, body, head, calls, conversation) {
	rememberCalls(ctx, calls);
	const promptTokens = promptTokensOf(body.messages);
	const completionTokens = calls.reduce((sum, c) => sum + 1 + countTokens(c.function.arguments), 0);
	const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
	if (body.stream) {
		const chunk = (delta, finishReason = null) =>
			dataFrame({ ...head('chat.completion.chunk'), choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] });
		return streamFrames(pacedResponse(ctx.res, conversation), [
			...(has(conversation, 'tool-pieces') ? toolCallPieces(calls).map((delta) => chunk(delta)) : [chunk({ role: 'assistant', content: null, tool_calls: calls.map((call, index) => ({ index, ...call })) })]),
			chunk({}, 'tool_calls'),
			dataFrame({ ...head('chat.completion.chunk'), choices: [], usage }),
			doneFrame(conversation),
		], null, streamContentType(conversation), magicStall(conversation));
	}
	sendJson(ctx.res, 200, {
		...head('chat.completion'),
		choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: calls }, logprobs: null, finish_reason: 'tool_calls' }],
		usage,
	});
}

async function complete(ctx) {
	const body = ctx.json();
	const checked = validate(ctx, body);
	checkToolRoundTrip(ctx, body.messages);
	const conversation = body.messages.map((m) => contentText(m.content)).join('\n');
	if (rateLimitOnce(ctx, conversation)) return;
	const id = `chatcmpl-${randomHex(12)}`;
	const head = (object) => ({ id, object, created: unixNow(), model: checked.model.id });
	const calls = requestedToolCalls(ctx, body);
	if (calls.length) return answerToolCalls(ctx, body, head, calls, conversation);
	const answer = compose(body, checked);
	if (body.stream) return streamAnswer(ctx, head('chat.completion.chunk'), answer, conversation);
	const message = { role: 'assistant', content: answer.text };
	if (answer.reasoning) message.reasoning_content = answer.reasoning;
	sendJson(ctx.res, 200, {
		...head('chat.completion'),
		choices: [{ index: 0, message, logprobs: null, finish_reason: answer.finishReason }],
		usage: answer.usage,
	});
}

module.exports = { complete, pacedResponse };
