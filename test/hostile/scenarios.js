'use strict';
// Scenario names, where each one takes effect, and the fixed bodies they send.

/** `[hostile:<scenario>]`: the magic word. The last one in a text wins. */
const MAGIC = /\[hostile:([^\]\s]*)\]/g;

/** Wrong results sent with status 200 (see README). */
const BODIES_200 = {
	'200-error-object': { error: { message: 'upstream overloaded', type: 'server_error', code: 'overloaded' } },
	'200-type-error': { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
	'200-success-false': { success: false, message: 'channel disabled' },
	'200-code-msg': { code: 500, msg: 'internal error' },
	'200-empty-choices': {}, // chat-completions: see emptyChoices()
	'200-empty-array': [],
	'200-json-string': 'bad gateway',
	'200-null': null,
};

/** Scenarios that act on the request that carries them ("here"). */
const HERE = new Set([
	'token-in-200',
	'echo-secrets-200',
	'401-secret-part',
	'moved-301',
	'acted-then-502',
	'acted-then-504',
	'acted-then-reset',
	'drip-body',
	'slow-headers',
	'plant-200-error',
	'keepalive-stream',
	'bad-tool-json-key',
	'stream-error-key',
	'echo-then-stall',
	...Object.keys(BODIES_200),
]);

const REDIRECTS = new Set(['redirect-sibling-302', 'redirect-sibling-307', 'redirect-port-302']);

/** Scenarios of a file link: passive on image generation / video submit and polls. */
const LINK = new Set([
	...REDIRECTS,
	'image-one-403',
	'link-json-error',
	'link-forbidden-text',
	'link-tiny-text-as-mp4',
	'link-html',
]);

/** Scenarios of a video status poll: passive on the submit. */
const POLL = new Set(['drip-status', 'fail-reason-key', 'video-fail']);

/** `state-<word>` words that never end the task. */
const NEVER_ENDING_STATES = new Set(['NOT_START', 'SUBMITTED', 'UNKNOWN', 'QUEUED', 'IN_PROGRESS']);

const BIG_VIDEO = /^big-video-(\d{1,5})$/;
const STATE = /^state-([A-Za-z_]+)$/;
const MAX_BIG_MIB = 16384;

/** 'here' | 'link' | 'poll' | null (unknown name). */
function kindOf(name) {
	if (typeof name !== 'string') return null;
	if (HERE.has(name)) return 'here';
	if (LINK.has(name)) return 'link';
	if (POLL.has(name) || STATE.test(name)) return 'poll';
	const big = BIG_VIDEO.exec(name);
	if (big) return Number(big[1]) >= 1 && Number(big[1]) <= MAX_BIG_MIB ? 'link' : null;
	// poll-X / file-X: X (a "here" scenario or a redirect) applied to every status poll / to the file link.
	const prefixed = /^(poll|file)-(.+)$/.exec(name);
	if (prefixed && (HERE.has(prefixed[2]) || REDIRECTS.has(prefixed[2]))) return prefixed[1] === 'poll' ? 'poll' : 'link';
	return null;
}

const isKnown = (name) => kindOf(name) !== null;

/** The last magic word in `text`, or null. */
function scenarioInText(text) {
	let last = null;
	for (const match of String(text ?? '').matchAll(MAGIC)) last = match[1];
	return last;
}

/** Big video size in MiB, or null. */
function bigVideoMib(name) {
	const m = BIG_VIDEO.exec(name ?? '');
	return m ? Number(m[1]) : null;
}

/** The status word of a `state-<word>` scenario, or null. */
function stateWord(name) {
	const m = STATE.exec(name ?? '');
	return m ? m[1] : null;
}

/** For poll-X / file-X: X. */
function innerOf(name, prefix) {
	return typeof name === 'string' && name.startsWith(`${prefix}-`) && isKnown(name) ? name.slice(prefix.length + 1) : null;
}

const nginxPage = (status, text) =>
	`<html>\r\n<head><title>${status} ${text}</title></head>\r\n<body>\r\n<center><h1>${status} ${text}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;

const HTML_ERROR_PAGE =
	'<!DOCTYPE html>\n<html><head><title>Error</title></head><body><h1>Something went wrong</h1>' +
	'<p>The link you followed has expired or is not available.</p></body></html>\n';

const EXPIRED_XML =
	'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>';

module.exports = {
	BODIES_200,
	REDIRECTS,
	NEVER_ENDING_STATES,
	kindOf,
	isKnown,
	scenarioInText,
	bigVideoMib,
	stateWord,
	innerOf,
	nginxPage,
	HTML_ERROR_PAGE,
	EXPIRED_XML,
};
