'use strict';
// Server-sent events for both chat formats. Each frame is its own socket write and the loop
// yields between writes, so clients really receive the stream in pieces.
const { isGone, dropConnection } = require('./http');
const { has } = require('./magic');
const { sleep } = require('./util');

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
 * Where and for how long the magic words make a stream go silent: `[stall-after:N]` sends the first
 * N bytes of the stream's body, then nothing (until the client hangs up, or for `[stall-for:MS]`,
 * then the rest); `[stall-ping:MS]` sends a `: ping` comment every MS ms during the silence, as
 * relays keep a stream alive (then the silence begins at the end of the event that holds byte N),
 * or a lone line end with `[stall-keepalive:newline]`, as some relays do. Null when `text` asks for no stall.
 */
function magicStall(text) {
	const after = /\[stall-after:(\d{1,9})\]/.exec(text ?? '');
	if (!after) return null;
	const forMs = /\[stall-for:(\d{1,7})\]/.exec(text);
	const pingMs = /\[stall-ping:(\d{1,6})\]/.exec(text);
	const keepAlive = /\[stall-keepalive:newline\]/.test(text) ? '\n' : ': ping\n\n';
	return { afterBytes: Number(after[1]), forMs: forMs ? Number(forMs[1]) : 0, pingMs: pingMs ? Math.max(10, Number(pingMs[1])) : 0, keepAlive };
}

/** The silence of a stall: nothing, or keep-alive comments, until it ends or the client is gone. Resolves whether to go on. */
async function stallSilence(res, stall) {
	const until = stall.forMs > 0 ? Date.now() + stall.forMs : Infinity;
	const step = stall.pingMs || 50;
	// The head goes out now even when no byte of the body did (`[stall-after:0]`): Node holds it until the first write.
	res.flushHeaders();
	while (!isGone(res) && Date.now() < until) {
		await sleep(Math.min(step, until - Date.now()));
		if (stall.pingMs && Date.now() < until && !(await write(res, stall.keepAlive))) return false;
	}
	return !isGone(res);
}

/**
 * Sends `frames` as a streamed answer, cut short as `interrupt` says, silent where `stall` says
 * (magicStall). `contentType` is `text/event-stream` unless the caller passes another, or null for
 * no content type at all.
 */
async function streamFrames(res, frames, interrupt, contentType = 'text/event-stream', stall = null) {
	res.writeHead(200, {
		...(contentType ? { 'content-type': contentType } : {}),
		'cache-control': 'no-cache',
		connection: 'keep-alive',
		'x-accel-buffering': 'no',
	});
	res.socket?.setNoDelay(true);
	let sent = 0;
	for (let i = 0; i < frames.length; i++) {
		if (interrupt && i === interrupt.at) {
			if (!interrupt.errorFrame) return dropConnection(res);
			await write(res, interrupt.errorFrame);
			break;
		}
		let frame = Buffer.from(frames[i]);
		if (stall && !stall.pingMs && sent + frame.length > stall.afterBytes) {
			// A silence in the middle of an event: the frame is cut at byte N.
			const cut = stall.afterBytes - sent;
			if (cut > 0 && !(await write(res, frame.subarray(0, cut)))) return;
			sent += cut;
			frame = frame.subarray(cut);
		}
		// Keep-alive comments go between events, as relays send them: such a silence begins after the event holding byte N.
		if (stall && sent >= stall.afterBytes) {
			if (!(await stallSilence(res, stall))) return;
			stall = null;
		}
		if (!(await write(res, frame))) return; // the client went away
		sent += frame.length;
	}
	if (!isGone(res)) res.end();
}

module.exports = { dataFrame, eventFrame, magicInterrupt, magicStall, streamFrames };
