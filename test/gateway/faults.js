'use strict';
// Injected failures of the kinds a relay and its reverse proxy really produce. Tests queue them
// per path prefix; each matching request consumes the next one.
const { sendEmpty, sendJson, sendText, dropConnection } = require('./http');
const { internalError } = require('./errors');
const { sleep } = require('./util');

const STATUS_TEXT = { 502: 'Bad Gateway', 503: 'Service Temporarily Unavailable', 504: 'Gateway Time-out' };

/** The page nginx serves when its upstream fails. */
function nginxErrorPage(status) {
	const title = `${status} ${STATUS_TEXT[status]}`;
	return `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
}

const SLOW_LIMIT_MS = 10 * 60 * 1000;
const RETRY_AFTER_LIMIT_S = 24 * 3600;

/** Parses a fault string into `{ kind, value? }`; throws a TypeError naming the bad entry. */
function parseFault(fault) {
	const text = String(fault);
	if (text === '429' || text === 'reset' || text === '500-json') return { kind: text };
	if (/^50[234]-html$/.test(text)) return { kind: 'html', value: Number(text.slice(0, 3)) };
	let m = /^429-retry-after:(\d+)$/.exec(text);
	if (m && Number(m[1]) <= RETRY_AFTER_LIMIT_S) return { kind: '429-retry-after', value: Number(m[1]) };
	m = /^slow:(\d+)$/.exec(text);
	if (m && Number(m[1]) <= SLOW_LIMIT_MS) return { kind: 'slow', value: Number(m[1]) };
	throw new TypeError(
		`unknown fault ${JSON.stringify(text)}; expected 429, 429-retry-after:N, 502-html, 503-html, 504-html, 500-json, reset or slow:MS`,
	);
}

class FaultQueues {
	constructor() {
		this.queues = new Map(); // path prefix -> parsed faults still to serve
	}

	add(pathPrefix, faults) {
		if (typeof pathPrefix !== 'string' || !pathPrefix.startsWith('/')) {
			throw new TypeError('fault path must be a string starting with "/"');
		}
		if (!Array.isArray(faults)) throw new TypeError('faults must be an array');
		const parsed = faults.map(parseFault); // validate all before queueing any
		const queue = this.queues.get(pathPrefix) ?? [];
		queue.push(...parsed);
		this.queues.set(pathPrefix, queue);
		return queue.length;
	}

	/** The next fault for `path`, from the longest matching prefix that still has one. */
	take(path) {
		let best = null;
		for (const [prefix, queue] of this.queues) {
			if (queue.length && path.startsWith(prefix) && (!best || prefix.length > best.length)) best = prefix;
		}
		return best === null ? null : this.queues.get(best).shift();
	}

	clear() {
		this.queues.clear();
	}
}

/**
 * Serves `fault` on ctx. Resolves true when the request was answered (or dropped) and false
 * when the normal handler must still run (after a `slow` wait).
 */
async function serveFault(ctx, fault) {
	const { res } = ctx;
	switch (fault.kind) {
		case 'slow':
			await sleep(fault.value);
			return false;
		case '429':
			sendEmpty(res, 429);
			return true;
		case '429-retry-after':
			sendEmpty(res, 429, { 'retry-after': String(fault.value) });
			return true;
		case 'html':
			sendText(res, fault.value, 'text/html', nginxErrorPage(fault.value), { server: 'nginx' });
			return true;
		case '500-json': {
			const error = internalError(ctx);
			sendJson(res, error.status, error.body);
			return true;
		}
		case 'reset':
			dropConnection(res);
			return true;
		default:
			throw new Error(`unhandled fault kind ${fault.kind}`);
	}
}

module.exports = { FaultQueues, parseFault, serveFault };
