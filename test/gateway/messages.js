'use strict';
// POST /v1/messages in the native messages format, errors included. The reply echoes the
// input: "[<system>] Echo from <model> (effort: <effort>): <last user message>".
const { sendJson } = require('./http');
const { invalidRequest } = require('./errors');
const { requireModel } = require('./models');
const { has, rateLimitOnce, streamContentType } = require('./magic');
const { countTokens, splitPieces, applyStop, contentText, fitOutput, thinkingSignature } = require('./reply');
const { eventFrame, magicInterrupt, magicStall, streamFrames } = require('./sse');
const { randomHex } = require('./util');
const { attachmentSummary, messageAttachments } = require('./attachments');
const { jsonAnswer, NOT_JSON_ANSWER } = require('./json-answer');
const { pacedResponse } = require('./chat'); // `[stream-pace:MS]`, as in chat streams

const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'];
const MIN_THINKING_BUDGET = 1024;

function validateMessages(ctx, messages) {
	if (!Array.isArray(messages) || messages.length === 0) {
		throw invalidRequest(ctx, 'messages: at least one message is required');
	}
	messages.forEach((message, i) => {
		if (message?.role === 'system') {
			throw invalidRequest(
				ctx,
				`messages.${i}.role: Unexpected role "system". The Messages API accepts a top-level \`system\` parameter, not "system" as an input message role.`,
			);
		}
		if (message?.role !== 'user' && message?.role !== 'assistant') {
			throw invalidRequest(ctx, `messages.${i}.role: Input should be 'user' or 'assistant'`);
		}
		if (typeof message.content !== 'string' && !Array.isArray(message.content)) {
			throw invalidRequest(ctx, `messages.${i}.content: Input should be a valid string or list of content blocks`);
		}
	});
}

function validateMaxTokens(ctx, maxTokens, model) {
	if (maxTokens === undefined) throw invalidRequest(ctx, 'max_tokens: Field required');
	if (!Number.isInteger(maxTokens) || maxTokens < 1) {
		throw invalidRequest(ctx, 'max_tokens: Input should be a valid integer greater than or equal to 1');
	}
	if (maxTokens > model.maxOutput) {
		throw invalidRequest(
			ctx,
			`max_tokens: ${maxTokens} > ${model.maxOutput}, which is the maximum allowed number of output tokens for ${model.id}`,
		);
	}
}

/** Returns the thinking mode asked for: null, 'adaptive' or { budget }. */
function thinkingOf(ctx, thinking, maxTokens) {
	if (thinking === undefined || thinking === null || thinking.type === 'disabled') return null;
	if (thinking.type === 'adaptive') return 'adaptive';
	if (thinking.type !== 'enabled') {
		throw invalidRequest(ctx, "thinking.type: Input should be 'enabled', 'adaptive' or 'disabled'");
	}
	const budget = thinking.budget_tokens;
	if (!Number.isInteger(budget) || budget < MIN_THINKING_BUDGET) {
		throw invalidRequest(ctx, `thinking.enabled.budget_tokens: Input should be greater than or equal to ${MIN_THINKING_BUDGET}`);
	}
	if (budget >= maxTokens) {
		throw invalidRequest(ctx, '`max_tokens` must be greater than `thinking.budget_tokens`');
	}
	return { budget };
}

function validateSystem(ctx, system) {
	const ok =
		system === undefined ||
		typeof system === 'string' ||
		(Array.isArray(system) && system.every((b) => b?.type === 'text' && typeof b.text === 'string'));
	if (!ok) throw invalidRequest(ctx, 'system: Input should be a valid string or list of text blocks');
}

/**
 * `tools` and `tool_choice`, checked as the real API checks them: object input schemas, a named
 * tool that exists, and no forced tool use with thinking. Null without tools.
 */
function toolsOf(ctx, body, model, thinking) {
	const { tools, tool_choice: choice } = body;
	if (tools === undefined) {
		if (choice !== undefined) throw invalidRequest(ctx, 'tool_choice: tool_choice may only be specified while providing tools');
		return null;
	}
	if (!Array.isArray(tools)) throw invalidRequest(ctx, 'tools: Input should be a valid list');
	tools.forEach((tool, i) => {
		if (typeof tool?.name !== 'string' || !/^[a-zA-Z0-9_-]{1,128}$/.test(tool.name)) throw invalidRequest(ctx, `tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`);
		if (tool.input_schema?.type !== 'object') throw invalidRequest(ctx, `tools.${i}.custom.input_schema.type: Input should be 'object'`);
	});
	const type = choice?.type ?? 'auto';
	if (!['auto', 'any', 'tool', 'none'].includes(type)) throw invalidRequest(ctx, "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'");
	if (type === 'tool' && !tools.some((tool) => tool.name === choice.name)) throw invalidRequest(ctx, `tool_choice.name: the tool '${String(choice.name)}' is not in tools`);
	if ((model.alwaysThinks || thinking !== null) && (type === 'any' || type === 'tool')) {
		throw invalidRequest(ctx, 'Thinking may not be enabled when tool_choice forces tool use.');
	}
	return { tools, type, name: choice?.name };
}

/**
 * The tool the "model" calls: the forced one (`tool`), the first (`any`), or with `auto` one whose
 * name the system text asks for as "<name> tool"; none with `none`, or when `[not-json]` is in the
 * last user text.
 */
function toolToCall(checkedTools, system, userText) {
	if (!checkedTools || has(userText, 'not-json')) return null;
	const { tools, type, name } = checkedTools;
	if (type === 'tool') return tools.find((tool) => tool.name === name);
	if (type === 'any') return tools[0];
	if (type === 'auto') return tools.find((tool) => new RegExp(`\\b${tool.name} tool\\b`).test(system)) ?? null;
	return null;
}

function validate(ctx, body) {
	const model = requireModel(ctx, body.model, 'chat');
	validateMaxTokens(ctx, body.max_tokens, model);
	validateMessages(ctx, body.messages);
	// Decodes and checks every image and document block; describes those of the last user message.
	const attachments = messageAttachments(ctx, body.messages, 'native');
	validateSystem(ctx, body.system);
	const thinking = thinkingOf(ctx, body.thinking, body.max_tokens);
	const tools = toolsOf(ctx, body, model, thinking);
	const effort = body.output_config?.effort;
	if (effort !== undefined && !EFFORTS.includes(effort)) {
		throw invalidRequest(ctx, `output_config.effort: Input should be ${EFFORTS.map((e) => `'${e}'`).join(', ')}`);
	}
	const { temperature } = body;
	if (temperature !== undefined && (typeof temperature !== 'number' || temperature < 0 || temperature > 1)) {
		throw invalidRequest(ctx, 'temperature: Input should be a number between 0 and 1');
	}
	if (thinking && temperature !== undefined && temperature !== 1) {
		throw invalidRequest(ctx, '`temperature` may only be set to 1 when thinking is enabled or in adaptive mode.');
	}
	const stops = body.stop_sequences ?? [];
	if (!Array.isArray(stops) || !stops.every((s) => typeof s === 'string')) {
		throw invalidRequest(ctx, 'stop_sequences: Input should be a valid list of strings');
	}
	if (body.stream !== undefined && typeof body.stream !== 'boolean') {
		throw invalidRequest(ctx, 'stream: Input should be a valid boolean');
	}
	return { model, thinking, effort, stops, attachments, tools };
}

/** The deterministic message: content blocks, stop reason and usage. */
function compose(body, { model, thinking, effort, stops, attachments = [], tools = null }) {
	const system = contentText(body.system);
	const userText = contentText([...body.messages].reverse().find((m) => m.role === 'user')?.content);
	// What arrived with the last user message is named in the echo: type, size and a hash of the bytes.
	const lastUser = [userText, attachmentSummary(attachments)].filter(Boolean).join(' ');
	const thinks = model.alwaysThinks || thinking !== null;
	const budget = thinking?.budget ? ` within ${thinking.budget} tokens` : '';
	const thinkingText = thinks ? `Thinking${budget} about: ${lastUser}` : '';
	const echo = `${system ? `[${system}] ` : ''}Echo from ${model.id}${effort ? ` (effort: ${effort})` : ''}: ${lastUser}`;
	const reply = tools && has(userText, 'not-json') ? NOT_JSON_ANSWER : echo;
	const stopped = applyStop(reply, stops);
	const out = fitOutput(thinkingText, stopped.text, body.max_tokens);
	const content = [];
	if (thinks) content.push({ type: 'thinking', thinking: out.thinking, signature: thinkingSignature(out.thinking) });
	content.push({ type: 'text', text: out.text });
	let stopReason = 'end_turn';
	if (out.truncated) stopReason = 'max_tokens';
	else if (stopped.matched !== null) stopReason = 'stop_sequence';
	const inputTokens = countTokens(system) + body.messages.reduce((sum, m) => sum + countTokens(contentText(m.content)), 0);
	const tool = toolToCall(tools, system, userText);
	if (tool) {
		// A tool call instead of the text: its input follows the tool's schema (an object schema
		// without properties gets the echo object), built from what the request carried.
		const schema = Object.keys(tool.input_schema.properties ?? {}).length ? tool.input_schema : null;
		const input = jsonAnswer(schema, { model: model.id, text: userText, attachments });
		content[content.length - 1] = { type: 'tool_use', id: `toolu_${randomHex(12)}`, name: tool.name, input };
		return {
			content,
			stopReason: 'tool_use',
			stopSequence: null,
			usage: {
				input_tokens: inputTokens,
				output_tokens: countTokens(out.thinking) + countTokens(JSON.stringify(input)),
				cache_creation_input_tokens: 0,
				cache_read_input_tokens: 0,
			},
		};
	}
	return {
		content,
		stopReason,
		stopSequence: stopReason === 'stop_sequence' ? stopped.matched : null,
		usage: { input_tokens: inputTokens, output_tokens: out.outputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
	};
}

const STREAM_ERROR = eventFrame('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });

const blockStart = (block, index) =>
	eventFrame('content_block_start', {
		type: 'content_block_start',
		index,
		content_block:
			block.type === 'thinking'
				? { type: 'thinking', thinking: '', signature: '' }
				: block.type === 'tool_use'
					? { type: 'tool_use', id: block.id, name: block.name, input: {} }
					: { type: 'text', text: '' },
	});

const blockDelta = (index, delta) => eventFrame('content_block_delta', { type: 'content_block_delta', index, delta });

/** The deltas of one content block: word-sized pieces, and a thinking block's signature last. */
function blockDeltas(block, index) {
	if (block.type === 'tool_use') {
		// The input as JSON text in pieces of up to 16 characters, as the real stream splits it.
		const json = JSON.stringify(block.input);
		const pieces = json.match(/[\s\S]{1,16}/g) ?? [];
		return pieces.map((partial_json) => blockDelta(index, { type: 'input_json_delta', partial_json }));
	}
	if (block.type === 'text') return splitPieces(block.text).map((text) => blockDelta(index, { type: 'text_delta', text }));
	return [
		...splitPieces(block.thinking).map((thinking) => blockDelta(index, { type: 'thinking_delta', thinking })),
		blockDelta(index, { type: 'signature_delta', signature: block.signature }),
	];
}

function streamAnswer(ctx, head, answer, conversation) {
	const frames = [
		eventFrame('message_start', {
			type: 'message_start',
			message: { ...head, content: [], stop_reason: null, stop_sequence: null, usage: { ...answer.usage, output_tokens: 1 } },
		}),
	];
	let textStart = 0;
	let textDeltaCount = 0;
	answer.content.forEach((block, index) => {
		frames.push(blockStart(block, index));
		// As the real service does, a ping follows the first content_block_start.
		if (index === 0) frames.push(eventFrame('ping', { type: 'ping' }));
		const deltas = blockDeltas(block, index);
		if (block.type === 'text') [textStart, textDeltaCount] = [frames.length, deltas.length];
		frames.push(...deltas, eventFrame('content_block_stop', { type: 'content_block_stop', index }));
	});
	frames.push(
		eventFrame('message_delta', {
			type: 'message_delta',
			delta: { stop_reason: answer.stopReason, stop_sequence: answer.stopSequence },
			usage: { output_tokens: answer.usage.output_tokens },
		}),
		eventFrame('message_stop', { type: 'message_stop' }),
	);
	const interrupt = magicInterrupt(conversation, textStart, textDeltaCount, STREAM_ERROR);
	return streamFrames(pacedResponse(ctx.res, conversation), frames, interrupt, streamContentType(conversation), magicStall(conversation));
}

async function create(ctx) {
	const body = ctx.json();
	const checked = validate(ctx, body);
	const conversation = [contentText(body.system), ...body.messages.map((m) => contentText(m.content))].join('\n');
	if (rateLimitOnce(ctx, conversation)) return;
	const answer = compose(body, checked);
	const head = { id: `msg_${randomHex(12)}`, type: 'message', role: 'assistant', model: checked.model.id };
	if (body.stream) return streamAnswer(ctx, head, answer, conversation);
	sendJson(ctx.res, 200, {
		...head,
		content: answer.content,
		stop_reason: answer.stopReason,
		stop_sequence: answer.stopSequence,
		usage: answer.usage,
	});
}

module.exports = { create };
