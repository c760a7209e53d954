// A rate limit in front of the loopback gateway, as relays apply one per key: a token bucket
// admitting R requests per second (capacity R), and a bare 429 (no body, no Retry-After) beyond
// it. Each workflow of the benchmark names its own bucket with `[bucket:<name>]` in the request
// body, so the rows never share a limit; a bucket's rate may change after a number of admitted
// requests (`{ perSecond: 20, then: { after: 500, perSecond: 5 } }`).
'use strict';

const http = require('node:http');

function createBuckets(plans) {
	const buckets = new Map();
	return {
		stats: () => Object.fromEntries([...buckets].map(([name, b]) => [name, { admitted: b.admitted, limited: b.limited }])),
		take(name) {
			const plan = plans[name];
			if (!plan) return true;
			let bucket = buckets.get(name);
			if (!bucket) {
				bucket = { tokens: plan.perSecond, last: Date.now(), admitted: 0, limited: 0 };
				buckets.set(name, bucket);
			}
			const perSecond = plan.then && bucket.admitted >= plan.then.after ? plan.then.perSecond : plan.perSecond;
			const now = Date.now();
			bucket.tokens = Math.min(perSecond, bucket.tokens + ((now - bucket.last) / 1000) * perSecond);
			bucket.last = now;
			if (bucket.tokens >= 1) {
				bucket.tokens -= 1;
				bucket.admitted++;
				return true;
			}
			bucket.limited++;
			return false;
		},
	};
}

/** Starts the proxy on 127.0.0.1; `target` is the loopback gateway's base URL. */
async function startTokenBucketProxy({ target, plans }) {
	const buckets = createBuckets(plans);
	const upstream = new URL(target);
	const server = http.createServer((req, res) => {
		const parts = [];
		req.on('data', (chunk) => parts.push(chunk));
		req.on('end', () => {
			const body = Buffer.concat(parts);
			const name = /\[bucket:([\w-]+)\]/.exec(body.toString('utf8'))?.[1];
			if (name && !buckets.take(name)) {
				res.writeHead(429, { 'content-length': '0' });
				return res.end();
			}
			const forward = http.request(
				{ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
				(answer) => {
					res.writeHead(answer.statusCode, answer.headers);
					answer.pipe(res);
				},
			);
			forward.on('error', () => res.destroy());
			forward.end(body);
		});
	});
	server.keepAliveTimeout = 1000;
	await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		baseUrl: `http://127.0.0.1:${server.address().port}`,
		stats: buckets.stats,
		close: () =>
			new Promise((resolve) => {
				server.closeAllConnections?.();
				server.close(() => resolve());
			}),
	};
}

module.exports = { startTokenBucketProxy, createBuckets };
