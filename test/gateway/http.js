'use strict';
// Request/response plumbing shared by both servers. Every writer checks that the socket is
// still there, because faults and magic words deliberately destroy connections mid-answer.

/** Bodies above this size are refused: the gateway never buffers without a bound. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** Reads the whole request body; resolves to null when it exceeds MAX_BODY_BYTES. */
function readBody(req) {
	return new Promise((resolve, reject) => {
		const chunks = [];
		let size = 0;
		let tooLarge = false;
		req.on('data', (chunk) => {
			size += chunk.length;
			if (size > MAX_BODY_BYTES) tooLarge = true;
			else chunks.push(chunk);
		});
		req.on('end', () => resolve(tooLarge ? null : Buffer.concat(chunks)));
		req.on('error', reject);
		// A client that hangs up mid-body never sends 'end': settle instead of waiting forever.
		req.on('close', () => reject(new Error('request aborted')));
	});
}

/** True once nothing more can be sent: answered, or the connection is gone. */
const isGone = (res) => res.destroyed || res.writableEnded || res.socket?.destroyed === true;

function send(res, status, headers, body) {
	if (isGone(res)) return;
	const payload = body === undefined ? Buffer.alloc(0) : Buffer.from(body);
	res.writeHead(status, { ...headers, 'content-length': payload.length });
	res.end(res.req.method === 'HEAD' ? undefined : payload);
}

/** `body` may be an object, or a string that already is the exact JSON text to send. */
function sendJson(res, status, body, headers = {}) {
	const text = typeof body === 'string' ? body : JSON.stringify(body);
	send(res, status, { 'content-type': 'application/json; charset=utf-8', ...headers }, text);
}

function sendText(res, status, contentType, text, headers = {}) {
	send(res, status, { 'content-type': contentType, ...headers }, text);
}

/** An answer with no body at all, e.g. the bare 429 that real relays send. */
function sendEmpty(res, status, headers = {}) {
	send(res, status, headers, undefined);
}

/** Drops the connection without answering, as a crashed proxy would. */
function dropConnection(res) {
	res.socket?.destroy();
	res.destroy();
}

module.exports = { readBody, isGone, sendJson, sendText, sendEmpty, dropConnection };
