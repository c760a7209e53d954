// Rows 11 of `npm run bench` (issue 19): a video gateway that takes its time, as real ones do.
//
// A proxy in front of the loopback gateway (test/gateway, one status poll to finish): every submit
// is answered after 1 to 3 s, every status check after 0.5 to 3 s, and a video is done 5 to 60 s
// after its submit was answered; a check before that is answered IN_PROGRESS by the proxy itself,
// one after it goes through to the loopback gateway, which answers SUCCESS with the result link.
// The draws are uniform and seeded by the video's index (`take <i>` in its prompt) and, for
// checks, by the check's number for that video: the same run on another build meets the same
// gateway, and the limit of a row can be computed before the run (idealSchedule).
//
// With `refuse`, the proxy also answers every 7th submit and every 2nd status check with a 429
// at once (Retry-After alternating 1 s and 3 s), as a gateway at its rate limit does. Everything
// that arrives is logged with its time, so gaps between checks and false "still running" reports
// are read from the gateway's side.
'use strict';

const http = require('node:http');
const crypto = require('node:crypto');

const REALISTIC = { submitMs: [1000, 3000], statusMs: [500, 3000], doneMs: [5000, 60000] };
const SUBMIT_PATH = /^\/v1\/video\/generations$/;
const STATUS_PATH = /^\/v1\/video\/generations\/([^/?]+)$/;

/** A number in [0, 1) from the seed and the keys: the same keys always draw the same number. */
function unit(seed, ...keys) {
	const digest = crypto.createHash('sha256').update(`${seed}:${keys.join(':')}`).digest();
	return digest.readUInt32BE(0) / 2 ** 32;
}

const between = ([low, high], u) => Math.round(low + (high - low) * u);

function draws(seed, latency) {
	return {
		submitMs: (index) => between(latency.submitMs, unit(seed, 'submit', index)),
		statusMs: (index, check) => between(latency.statusMs, unit(seed, 'status', index, check)),
		doneMs: (index) => between(latency.doneMs, unit(seed, 'done', index)),
	};
}

/**
 * What the best client could do with this gateway: submits `concurrency` at a time in item order,
 * each taking its drawn latency (plus `penaltyMs(index)`, e.g. a refused first try), every video
 * done its drawn time after its submit. Returns the submit phase, the slowest video's completion
 * (both from the first submit) and the most videos submitted but not yet done at any moment.
 */
function idealSchedule({ count, concurrency, seed = 19, latency = REALISTIC, penaltyMs = () => 0 }) {
	const d = draws(seed, latency);
	const free = Array.from({ length: concurrency }, () => 0);
	const events = [];
	let submitPhaseMs = 0;
	let slowestMs = 0;
	for (let index = 0; index < count; index++) {
		const slot = free.indexOf(Math.min(...free));
		const end = free[slot] + d.submitMs(index) + penaltyMs(index);
		free[slot] = end;
		const done = end + d.doneMs(index);
		submitPhaseMs = Math.max(submitPhaseMs, end);
		slowestMs = Math.max(slowestMs, done);
		events.push([end, 1], [done, -1]);
	}
	events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
	let active = 0;
	let maxActive = 0;
	for (const [, step] of events) maxActive = Math.max(maxActive, (active += step));
	return { submitPhaseMs, slowestMs, maxActive };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function readAll(req) {
	return new Promise((resolve, reject) => {
		const parts = [];
		req.on('data', (chunk) => parts.push(chunk));
		req.on('end', () => resolve(Buffer.concat(parts)));
		req.on('error', reject);
	});
}

function forward(upstream, req, body) {
	return new Promise((resolve, reject) => {
		const out = http.request(
			{ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
			(answer) => readAll(answer).then((text) => resolve({ status: answer.statusCode, headers: answer.headers, body: text }), reject),
		);
		out.on('error', reject);
		out.end(body);
	});
}

function send(res, status, headers, body) {
	if (res.destroyed) return;
	res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
	res.end(body);
}

const sendJson = (res, status, value, headers = {}) => send(res, status, { ...headers, 'content-type': 'application/json; charset=utf-8' }, JSON.stringify(value));

/** The answer to a check of a video that is not done yet (the loopback gateway's shape). */
function inProgress(task, now) {
	const progress = Math.min(99, Math.floor((100 * (now - task.submittedAt)) / Math.max(1, task.doneAt - task.submittedAt)));
	const seconds = (ms) => Math.floor(ms / 1000);
	return {
		code: 'success',
		message: '',
		data: { task_id: task.id, action: 'generate', status: 'IN_PROGRESS', progress: `${progress}%`, submit_time: seconds(task.submittedAt), start_time: seconds(task.submittedAt), finish_time: 0 },
	};
}

/**
 * Starts the proxy on 127.0.0.1 in front of `target` (a loopback gateway whose videos finish on
 * their first poll). `latency` overrides the realistic ranges; `refuse` turns the 429s on.
 * The log: `tasks` (id → { id, index, submittedAt, doneAt, checks: [{ at, refused, status }] }),
 * `submits` ([{ at, index, refused }]).
 */
async function startVideoGateway({ target, seed = 19, latency = REALISTIC, refuse = false }) {
	const upstream = new URL(target);
	const d = draws(seed, latency);
	const tasks = new Map();
	const submits = [];
	let checksSeen = 0;
	const refusedOf = { submit: 0, status: 0 };
	const refusal = (kind) => {
		const retryAfter = refusedOf[kind]++ % 2 === 0 ? 1 : 3;
		return { 'retry-after': String(retryAfter) };
	};
	const refuseWith429 = (res, kind) => sendJson(res, 429, { error: { message: 'rate limit reached, retry later', type: 'rate_limit_error', code: 'rate_limited' } }, refusal(kind));

	async function handle(req, res) {
		const body = await readAll(req);
		const at = Date.now();
		const path = req.url.split('?')[0];
		if (req.method === 'POST' && SUBMIT_PATH.test(path)) {
			let prompt = '';
			try {
				prompt = String(JSON.parse(body.toString('utf8')).prompt ?? '');
			} catch {
				// the loopback gateway answers a bad body itself
			}
			const index = Number(/take (\d+)/.exec(prompt)?.[1] ?? -1);
			const refused = Boolean(refuse) && (submits.length + 1) % 7 === 0;
			submits.push({ at, index, refused });
			if (refused) return refuseWith429(res, 'submit');
			await sleep(d.submitMs(index));
			const answer = await forward(upstream, req, body);
			const id = answer.status === 200 ? JSON.parse(answer.body.toString('utf8')).task_id : undefined;
			const submittedAt = Date.now();
			if (id) tasks.set(id, { id, index, submittedAt, doneAt: submittedAt + d.doneMs(index), checks: [] });
			return send(res, answer.status, answer.headers, answer.body);
		}
		const task = req.method === 'GET' && tasks.get(STATUS_PATH.exec(path)?.[1]);
		if (task) {
			const check = { at, refused: Boolean(refuse) && ++checksSeen % 2 === 0, status: undefined };
			task.checks.push(check);
			if (check.refused) {
				check.status = 429;
				return refuseWith429(res, 'status');
			}
			await sleep(d.statusMs(task.index, task.checks.length));
			if (Date.now() < task.doneAt) {
				check.status = 'IN_PROGRESS';
				return sendJson(res, 200, inProgress(task, Date.now()));
			}
			const answer = await forward(upstream, req, body);
			check.status = answer.status === 200 ? 'SUCCESS' : answer.status;
			return send(res, answer.status, answer.headers, answer.body);
		}
		const answer = await forward(upstream, req, body);
		return send(res, answer.status, answer.headers, answer.body);
	}

	const server = http.createServer((req, res) => handle(req, res).catch(() => res.destroy()));
	server.keepAliveTimeout = 5000;
	await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		baseUrl: `http://127.0.0.1:${server.address().port}`,
		tasks,
		submits,
		close: () =>
			new Promise((resolve) => {
				server.closeAllConnections?.();
				server.close(() => resolve());
			}),
	};
}

const GAP_BUCKETS = [0.5, 1, 1.1, 1.5, 2, Infinity];

/**
 * What the gateway saw of one run, against the Poll Interval: for every video, the gaps between
 * its submit's answer and its first check, and between its checks, up to the first check that
 * found it done. `toleranceMs` absorbs timer jitter in "checked once per interval".
 */
function checkGaps(gateway, intervalMs, toleranceMs = 500) {
	const histogram = GAP_BUCKETS.map((upTo) => ({ upTo, count: 0 }));
	let maxGapMs = 0;
	let late = 0;
	let lateFirst = 0; // of `late`: the first check after the submit
	let neverChecked = 0;
	let checks = 0;
	for (const task of gateway.tasks.values()) {
		checks += task.checks.length;
		if (!task.checks.length) {
			neverChecked++;
			continue;
		}
		let previous = task.submittedAt;
		for (const check of task.checks) {
			const gap = check.at - previous;
			previous = check.at;
			maxGapMs = Math.max(maxGapMs, gap);
			if (gap > intervalMs + toleranceMs) {
				late++;
				if (check === task.checks[0]) lateFirst++;
			}
			histogram.find((bucket) => gap <= bucket.upTo * intervalMs).count++;
			if (check.status === 'SUCCESS') break;
		}
	}
	return { histogram, maxGapMs, late, lateFirst, neverChecked, checks };
}

/** The histogram as one table cell: `≤0.5×: 12 · 0.5–1×: 800 · … · never: 0`. */
function histogramText({ histogram, neverChecked }) {
	let from = '0';
	const parts = histogram.map(({ upTo, count }) => {
		const label = upTo === Infinity ? `>${from}×` : from === '0' ? `≤${upTo}×` : `${from}–${upTo}×`;
		from = String(upTo);
		return `${label}: ${count}`;
	});
	return `${parts.join(' · ')} · never: ${neverChecked}`;
}

module.exports = { REALISTIC, startVideoGateway, idealSchedule, checkGaps, histogramText, unit };
