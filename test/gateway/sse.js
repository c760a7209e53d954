'use strict';
// Server-sent events for both chat formats. Each frame is its own socket write and the loop
// yields between writes, so clients really receive the stream in pieces.
const { isGone, dropConnection } = require('./http');
const { has } = require('./magic');

const dataFrame = (payload) => `data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`;
const eventFrame = (type, payload) => `event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`;

function write(res, text) {
	if (isGone(res)) return Promise.resolve(false);
	return new Promise((resolve) => {
		res.write(text, (err) => setImmediate(() => resolve(!err && !isGone(res))));
	});
}

/**
 * Where and how the magic words cut a stream: `[break-stream]` drops the connection and
 * `[stream-error]` sends `errorFrame` and ends, both halfway through the answer text
 * (after at least one of its pieces). Returns null when `text` asks for neither.
 */
function magicInterrupt(text, firstTextFrame, textFrameCount, errorFrame) {
	const at = firstTextFrame + Math.max(1, Math.floor(textFrameCount / 2));
	if (has(text, 'break-stream')) return { at, errorFrame: null };
	if (has(text, 'stream-error')) return { at, errorFrame };
	return null;
}

/**
 * Sends `frames` as a streamed answer, cut short as `interrupt` says. `contentType` is
 * `text/event-stream` unless the caller passes another, or null for no content type at all.
 */
async function streamFrames(res, frames, interrupt, contentType = 'text/event-stream') {
	res.writeHead(200, {
		...(contentType ? { 'content-type': contentType } : {}),
		'cache-control': 'no-cache',
		connection: 'keep-alive',
		'x-accel-buffering': 'no',
	});
	res.socket?.setNoDelay(true);
	for (let i = 0; i < frames.length; i++) {
		if (interrupt && i === interrupt.at) {
			if (!interrupt.errorFrame) return dropConnection(res);
			await write(res, interrupt.errorFrame);
			break;
		}
		if (!(await write(res, frames[i]))) return; // the client went away
	}
	if (!isGone(res)) res.end();
}

module.exports = { dataFrame, eventFrame, magicInterrupt, streamFrames };
