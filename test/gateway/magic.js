'use strict';
// Magic words: tokens inside a prompt, message or plant name that change the gateway's
// behaviour, for end-to-end tests that cannot reach the JS API in the middle of a workflow.
// The full list and what each does is in README.md beside this file.
const { sendEmpty } = require('./http');

const has = (text, word) => typeof text === 'string' && text.includes(`[${word}]`);

/** Size in MiB asked for with `[big:N]` (bounded so a typo cannot ask for terabytes). */
const MAX_BIG_MB = 4096;
function bigMegabytes(text) {
	const m = /\[big:(\d{1,5})\]/.exec(text ?? '');
	return m ? Math.min(Number(m[1]), MAX_BIG_MB) : 0;
}

/**
 * `[429-once]`: the first request with this exact text on this path gets a bare 429 (what
 * relays send); the retry passes. Returns true when the 429 was sent.
 */
function rateLimitOnce(ctx, text) {
	if (!has(text, '429-once')) return false;
	const key = `${ctx.path}\n${text}`;
	if (ctx.gw.onceSeen.has(key)) return false;
	ctx.gw.onceSeen.set(key, true);
	sendEmpty(ctx.res, 429);
	return true;
}

/**
 * The content type of a streamed answer: `text/event-stream` unless the text asks for another
 * with `[stream-type:text/plain]` (any type), or for none at all with `[stream-type:none]`, as
 * some relays send their streams. Returns null for none.
 */
function streamContentType(text) {
	const m = /\[stream-type:([A-Za-z0-9.+\/-]+)\]/.exec(typeof text === 'string' ? text : '');
	if (!m) return 'text/event-stream';
	return m[1].toLowerCase() === 'none' ? null : m[1];
}

module.exports = { has, bigMegabytes, rateLimitOnce, streamContentType };
