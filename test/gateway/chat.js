'use strict';
// POST /v1/chat/completions in the OpenAI format, as new-api relays it. The reply echoes the
// input so tests can assert it: "[<system>] Echo from <model>: <last user message>".
const { sendJson } = require('./http');
const { invalidRequest } = require('./errors');
const { requireModel } = require('./models');
const { rateLimitOnce } = require('./magic');
const { countTokens, splitPieces, applyStop, contentText, fitOutput } = require('./reply');
const { dataFrame, magicInterrupt, streamFrames } = require('./sse');
const { randomHex, unixNow } = require('./util');

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

function validate(ctx, body) {
	const model = requireModel(ctx, body.model, 'chat');
	validateMessages(ctx, body.messages);
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
	return { model, maxTokens: maxTokensOf(ctx, body, model), stops: stopsOf(ctx, body.stop) };
}

/** The deterministic answer: text, reasoning, finish reason and usage. */
function compose(body, { model, maxTokens, stops }) {
	const { messages } = body;
	const system = messages
		.filter((m) => m.role === 'system' || m.role === 'developer')
		.map((m) => contentText(m.content))
		.join(' ');
	const lastUser = contentText([...messages].reverse().find((m) => m.role === 'user')?.content);
	const effort = body.reasoning_effort;
	const thinks = model.alwaysThinks || (effort !== undefined && effort !== 'none');
	const reasoning = thinks ? `Reasoning with ${effort ?? 'adaptive'} effort about: ${lastUser}` : '';
	const stopped = applyStop(`${system ? `[${system}] ` : ''}Echo from ${model.id}: ${lastUser}`, stops);
	const out = fitOutput(reasoning, stopped.text, maxTokens);
	const promptTokens = messages.reduce((sum, m) => sum + 3 + countTokens(contentText(m.content)), 0);
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
		dataFrame('[DONE]'),
	];
	const interrupt = magicInterrupt(conversation, 1 + reasoningFrames.length, textFrames.length, STREAM_ERROR);
	return streamFrames(ctx.res, frames, interrupt);
}

async function complete(ctx) {
	const body = ctx.json();
	const checked = validate(ctx, body);
	const conversation = body.messages.map((m) => contentText(m.content)).join('\n');
	if (rateLimitOnce(ctx, conversation)) return;
	const answer = compose(body, checked);
	const id = `chatcmpl-${randomHex(12)}`;
	const head = (object) => ({ id, object, created: unixNow(), model: checked.model.id });
	if (body.stream) return streamAnswer(ctx, head('chat.completion.chunk'), answer, conversation);
	const message = { role: 'assistant', content: answer.text };
	if (answer.reasoning) message.reasoning_content = answer.reasoning;
	sendJson(ctx.res, 200, {
		...head('chat.completion'),
		choices: [{ index: 0, message, logprobs: null, finish_reason: answer.finishReason }],
		usage: answer.usage,
	});
}

module.exports = { complete };
