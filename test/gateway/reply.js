'use strict';
// Deterministic "model output" shared by both chat formats. A token here is a run of
// non-space characters: crude, but stable, so tests can predict usage and truncation.
const crypto = require('node:crypto');

const countTokens = (text) => (typeof text === 'string' ? (text.match(/\S+/g) ?? []).length : 0);

/** Splits text into word-sized pieces whose concatenation is exactly `text`. */
function splitPieces(text) {
	if (!text) return [];
	return text.match(/\s*\S+\s*/g) ?? [text];
}

/** Keeps the first `maxTokens` tokens of `text`. */
function truncateTokens(text, maxTokens) {
	const pieces = splitPieces(text);
	if (countTokens(text) <= maxTokens) return { text, truncated: false };
	return { text: pieces.slice(0, Math.max(0, maxTokens)).join('').trimEnd(), truncated: true };
}

/** Cuts `text` before the earliest stop sequence found; returns which one matched. */
function applyStop(text, stops) {
	let cut = -1;
	let matched = null;
	for (const stop of stops) {
		const at = stop ? text.indexOf(stop) : -1;
		if (at !== -1 && (cut === -1 || at < cut)) {
			cut = at;
			matched = stop;
		}
	}
	return matched === null ? { text, matched } : { text: text.slice(0, cut), matched };
}

/** Text of a message `content`: a string, or an array of `{type:'text', text}` parts/blocks. */
function contentText(content) {
	if (typeof content === 'string') return content;
	if (!Array.isArray(content)) return '';
	return content
		.filter((part) => part && part.type === 'text' && typeof part.text === 'string')
		.map((part) => part.text)
		.join('\n');
}

/**
 * Fits thinking and answer text into `maxTokens` output tokens, thinking first (as real
 * models spend their budget), and reports whether the limit cut anything.
 */
function fitOutput(thinking, text, maxTokens) {
	const fittedThinking = truncateTokens(thinking, maxTokens);
	const left = maxTokens - countTokens(fittedThinking.text);
	const fittedText = truncateTokens(text, left);
	return {
		thinking: fittedThinking.text,
		text: fittedText.text,
		truncated: fittedThinking.truncated || fittedText.truncated,
		outputTokens: countTokens(fittedThinking.text) + countTokens(fittedText.text),
	};
}

/** An opaque, stable stand-in for a thinking block's signature. */
const thinkingSignature = (thinking) => crypto.createHash('sha256').update(thinking).digest('base64');

module.exports = { countTokens, splitPieces, truncateTokens, applyStop, contentText, fitOutput, thinkingSignature };
