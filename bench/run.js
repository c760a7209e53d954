#!/usr/bin/env node
// `npm run bench`: speed and memory of our nodes in a real n8n, as ratios measured side by side
// in one run, each checked against its goal (issue 6). Prints one table (markdown, on stdout;
// progress goes to stderr) and writes everything measured to <out>/results.json.
//
//   node bench/run.js [--delay-ms 200] [--repeats 5] [--big-mib 512] [--only chat,video,memory,aggregation,masking,plants,ratelimit,pollbudget,agent,streaming,scale] [--rows 11a,11b] [--videos 50] [--out DIR]
//
// --rows runs only the parts that make those rows and prints only them; --videos N scales the
// rows of issue 19 down to N videos or items (a quick check: the rows themselves use 200/1,000);
// --save-previous LABEL writes the rows of issue 19 to bench/previous-build.json as the figures
// of the build before (LABEL names it), which later runs print next to their own.
//
// Times of n8n runs are the node execution times n8n itself records in its run data
// (scripts/n8n/headless.js reads them). A missed goal is a FAIL row, not an error: the exit
// code is non-zero only when the benchmark itself could not run.
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { execFileSync, spawn, spawnSync } = require('node:child_process');

const { startGateway } = require('../test/gateway');
const { ensureRuntime } = require('../scripts/n8n/runtime');
const { runWorkflows } = require('../scripts/n8n/headless');
const { median } = require('./aggregation');
const { peakWithin, sampleProcessTree } = require('./procTree');
const { writeReadmeTable } = require('./readmeTable');
const W = require('./workflows');
const { startTokenBucketProxy } = require('./tokenBucket');
const { measureAgentModels } = require('./chatModel');
const { measureStreaming } = require('./streaming');
const { measureMasking } = require('./masking');
const { SCALE_ROWS, missingForRows } = require('./atScale');

const ROOT = path.resolve(__dirname, '..');
const MIB = 1024 * 1024;
const started = Date.now();

/** The rows each part of the benchmark makes (`--only` names parts, `--rows` rows). */
const PART_ROWS = {
	chat: ['1a', '1b', '1c'],
	video: ['2'],
	memory: ['3'],
	aggregation: ['4a', '4b', '4c', '4d'],
	masking: ['12a', '12b', '12c'],
	plants: ['5'],
	ratelimit: ['7a', '7b', '7c', '7d'],
	pollbudget: ['8a', '8b'],
	agent: ['9'],
	streaming: ['10a', '10b', '10c'],
	scale: Object.keys(SCALE_ROWS),
};
const PREVIOUS_BUILD = path.join(__dirname, 'previous-build.json');

function parseArgs(argv) {
	const options = { delayMs: 200, repeats: 5, bigMib: 512, only: null, rows: null, videos: null, savePrevious: null, out: process.env.BENCH_OUT_DIR || path.join(ROOT, '.n8n-bench') };
	for (let i = 0; i < argv.length; i++) {
		const [flag, value] = [argv[i], argv[i + 1]];
		const number = () => {
			const n = Number(value);
			if (!Number.isInteger(n) || n < 0) throw new Error(`${flag} takes a whole number, not ${value}`);
			i++;
			return n;
		};
		if (flag === '--delay-ms') options.delayMs = number();
		else if (flag === '--repeats') options.repeats = Math.max(1, number());
		else if (flag === '--big-mib') options.bigMib = Math.max(1, number());
		else if (flag === '--only') (options.only = new Set(value.split(','))), i++;
		else if (flag === '--rows') (options.rows = new Set(value.split(','))), i++;
		else if (flag === '--videos') options.videos = Math.max(1, number());
		else if (flag === '--save-previous') (options.savePrevious = value), i++;
		else if (flag === '--out') (options.out = path.resolve(value)), i++;
		else throw new Error(`unknown option ${flag} (see the top of ${__filename})`);
	}
	if (options.rows) {
		const known = Object.values(PART_ROWS).flat();
		const unknown = [...options.rows].filter((id) => !known.includes(id));
		if (unknown.length) throw new Error(`no row ${unknown.join(', ')} (rows: ${known.join(', ')})`);
		const parts = Object.keys(PART_ROWS).filter((part) => PART_ROWS[part].some((id) => options.rows.has(id)));
		options.only = new Set(options.only ? parts.filter((part) => options.only.has(part)) : parts);
	}
	return options;
}

const log = (message) => process.stderr.write(`[bench ${String(Math.round((Date.now() - started) / 1000)).padStart(4)} s] ${message}\n`);

// ---------------------------------------------------------------------------------------------
// Build if needed

function newestMtime(dir, newest = 0) {
	if (!fs.existsSync(dir)) return newest;
	for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
		const full = path.join(dir, entry.name);
		newest = entry.isDirectory() ? newestMtime(full, newest) : Math.max(newest, fs.statSync(full).mtimeMs);
	}
	return newest;
}

/** Builds when a file package.json lists is missing or a source is newer than the oldest build output. */
function ensureBuilt() {
	const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
	const listed = [...manifest.n8n.nodes, ...manifest.n8n.credentials].map((file) => path.join(ROOT, file));
	const sources = Math.max(newestMtime(path.join(ROOT, 'nodes')), newestMtime(path.join(ROOT, 'credentials')));
	const stale = listed.some((file) => !fs.existsSync(file) || fs.statSync(file).mtimeMs < sources);
	if (!stale) return log('dist/ is up to date');
	log('building (npm run build)');
	const result = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', process.stderr, process.stderr] });
	if (result.status !== 0) throw new Error(`npm run build failed (${result.status ?? result.signal})`);
}

// ---------------------------------------------------------------------------------------------
// n8n runs

/** The measured node's run in one workflow's results, checked: it ran, and gave `count` items without errors. */
function measuredRun(results, workflowId, count) {
	const result = results[workflowId];
	const node = result?.nodes?.[W.MEASURED];
	const failedItem = node?.items?.find((item) => item.json?.error !== undefined);
	let problem;
	if (!result) problem = 'no result';
	else if (result.status !== 'success') problem = `the workflow failed: ${result.error?.message}`;
	else if (!node) problem = 'the measured node did not run';
	else if (node.items.length !== count) problem = `${node.items.length} items instead of ${count}`;
	else if (failedItem) problem = `an item failed: ${failedItem.json.error}`;
	return { ms: problem ? undefined : node.executionTimeMs, problem, node };
}

/** The main batch: every timing workflow, one after another in one n8n process. */
function mainBatch({ repeats, slowBaseUrl, fastBaseUrl, only }) {
	const workflows = [];
	const plan = {};
	let serial = 0;
	let plantId = 1_000_000;
	const add = (group, build) => {
		const id = `mgwBench${String(++serial).padStart(4, '0')}`;
		workflows.push(build(id));
		(plan[group] ||= []).push(id);
	};
	const chatItems = 100;
	const plantItems = 200;
	const nextPlants = () => ((plantId += plantItems), plantId);
	if (!only || only.has('chat') || only.has('plants')) {
		// Not measured: n8n loads and compiles the code of every node type on first use.
		add('warmUp', (id) => W.chatWorkflow(id, { count: 20, concurrency: 20 }));
		add('warmUp', (id) => W.httpChatWorkflow(id, { count: 20, baseUrl: slowBaseUrl }));
		add('warmUp', (id) => W.plantWorkflow(id, { count: 20, firstId: nextPlants() }));
		add('warmUp', (id) => W.httpPlantWorkflow(id, { count: 20, firstId: nextPlants(), baseUrl: fastBaseUrl }));
	}
	if (!only || only.has('video')) {
		add('video1', (id) => W.videoWorkflow(id, { count: 1 }));
		add('video10', (id) => W.videoWorkflow(id, { count: 10 }));
	}
	if (!only || only.has('chat')) add('chat1', (id) => W.chatWorkflow(id, { count: chatItems, concurrency: 1 }));
	// Repeats alternate the contenders, so a slow moment of the machine hits them alike.
	for (let r = 0; r < repeats; r++) {
		if (!only || only.has('chat')) {
			add('chat10', (id) => W.chatWorkflow(id, { count: chatItems, concurrency: 10 }));
			add('chat100', (id) => W.chatWorkflow(id, { count: chatItems, concurrency: 100 }));
			add('httpChat', (id) => W.httpChatWorkflow(id, { count: chatItems, baseUrl: slowBaseUrl }));
		}
		if (!only || only.has('plants')) {
			add('plants', (id) => W.plantWorkflow(id, { count: plantItems, firstId: nextPlants() }));
			add('httpPlants', (id) => W.httpPlantWorkflow(id, { count: plantItems, firstId: nextPlants(), baseUrl: fastBaseUrl }));
		}
	}
	return { workflows, plan, chatItems, plantItems };
}

/**
 * Goal 4 in a child process on n8n's Node binary (bench/aggregation.js). Asynchronous: the child
 * fetches its sample streams from the gateway this process serves.
 */
function measureAggregationOn(runtime, gatewayBaseUrl, repeats) {
	log(`aggregating 20 and 40 MiB answer streams (dist/ code on n8n's Node), ${repeats} runs each`);
	return new Promise((resolve, reject) => {
		const child = spawn(runtime.nodeBin, [path.join(__dirname, 'aggregation.js'), '--gateway', gatewayBaseUrl, '--repeats', String(repeats)], {
			cwd: ROOT,
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let stdout = '';
		let stderr = '';
		child.stdout.on('data', (chunk) => (stdout += chunk));
		child.stderr.on('data', (chunk) => {
			stderr += chunk;
			const lines = stderr.split('\n');
			stderr = lines.pop();
			for (const line of lines) log(line);
		});
		child.on('error', reject);
		child.on('exit', (code, signal) => {
			if (stderr) log(stderr);
			if (code !== 0) return reject(new Error(`bench/aggregation.js failed (${signal || code})`));
			resolve(JSON.parse(stdout));
		});
	});
}

async function runBatch({ runtime, credentials, workflows, name, out, sampleMemory = false, keepUserFolder = true }) {
	const userFolder = path.join(out, name);
	const sampler = sampleMemory ? sampleProcessTree({ match: /execute-batch/ }) : undefined;
	let results;
	try {
		results = await runWorkflows({
			runtime,
			credentials,
			workflows,
			env: { N8N_DEFAULT_BINARY_DATA_MODE: 'filesystem' }, // n8n 2.x's default, made explicit
			userFolder,
			keepUserFolder,
			concurrency: 1, // one workflow at a time: measurements must not share the CPU
			log: (message) => log(`${name}: ${message}`),
		});
	} finally {
		results = Object.assign(results || {}, { memory: sampler?.stop() });
	}
	return results;
}

/** One video's stored binary, checked: in n8n's filesystem store, of the expected size. */
function storedVideo(node, bytes) {
	const binary = node?.items?.[0]?.binary?.data;
	if (!binary) return { problem: 'no video in the output' };
	if (!String(binary.id || '').startsWith('filesystem')) return { problem: `the video was not stored on disk (id ${binary.id})` };
	if (bytes !== undefined && binary.bytes !== bytes) return { problem: `the stored video has ${binary.bytes} bytes, not ${bytes}` };
	return { binary };
}

// ---------------------------------------------------------------------------------------------
// The table

const fmtMs = (ms) => (ms === undefined ? '–' : `${Math.round(ms).toLocaleString('en-US')} ms`);
const fmtMib = (bytes) => (bytes === undefined ? '–' : `${(bytes / MIB).toFixed(1)} MiB`);
const fmtRatio = (ratio) => (ratio === undefined || !Number.isFinite(ratio) ? '–' : `${ratio.toFixed(2)}×`);

function row({ id, what, ours, baseline, ratio, ratioText, goal, pass, how, problem }) {
	return { id, what, ours, baseline, ratio: ratioText ?? fmtRatio(ratio), goal, result: problem ? 'FAIL' : pass ? 'PASS' : 'FAIL', how: problem ? `${how}; ${problem}` : how };
}

/** A row comparing two times, each { ms, problem? }: ours / baseline, at most `max`. */
function timesRow({ id, what, ours, oursLabel = '', baseline, baselineLabel, max, how }) {
	const ratio = ours.ms / baseline.ms;
	return row({
		id,
		what,
		ours: `${fmtMs(ours.ms)}${oursLabel}`,
		baseline: `${fmtMs(baseline.ms)} (${baselineLabel})`,
		ratio,
		goal: `≤ ${Number.isInteger(max) ? max.toFixed(1) : max}×`,
		pass: ratio <= max,
		how,
		problem: ours.problem || baseline.problem,
	});
}

function printTable(rows, header) {
	const lines = [
		header,
		'',
		'| # | Measurement | Ours | Compared with | Ratio | Goal | Result | How measured |',
		'|---|---|---|---|---|---|---|---|',
		...rows.map((r) => `| ${r.id} | ${r.what} | ${r.ours} | ${r.baseline} | ${r.ratio} | ${r.goal} | **${r.result}** | ${r.how} |`),
	];
	process.stdout.write(`${lines.join('\n')}\n`);
}

function machineLine(runtime, n8nNodeVersion) {
	const memGiB = (os.totalmem() / 1024 ** 3).toFixed(1);
	const cpu = os.cpus()[0]?.model?.trim() || 'unknown CPU';
	return (
		`Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${os.availableParallelism?.() ?? os.cpus().length} CPUs (nproc; ${cpu}), ` +
		`${memGiB} GiB memory, n8n ${runtime.version} on Node ${n8nNodeVersion}, bench and loopback gateway on Node ${process.versions.node}.`
	);
}

// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// Rate limits: a relay's per-key limit, met by the whole execution (issue 14)

const RATE_LIMIT = {
	answerMs: 100,
	items: 1000,
	perSecond: 20,
	drop: { after: 500, perSecond: 5 },
	plans: {
		'rl-c10': { perSecond: 20 },
		'rl-c50': { perSecond: 20 },
		'rl-http': { perSecond: 20 },
		'rl-drop': { perSecond: 20, then: { after: 500, perSecond: 5 } },
	},
};

/** Runs the rate-limited workflows one after another and turns them into rows 7a–7d. */
async function measureRateLimits({ runtime, credentials, out, limitedBaseUrl, proxy }) {
	const { items, perSecond, drop } = RATE_LIMIT;
	const workflows = [
		W.rateLimitedChatWorkflow('mgwBenchRl0001', { count: items, concurrency: 10, bucket: 'rl-c10' }),
		W.rateLimitedChatWorkflow('mgwBenchRl0002', { count: items, concurrency: 50, bucket: 'rl-c50' }),
		W.httpRateLimitedChatWorkflow('mgwBenchRl0003', { count: items, bucket: 'rl-http', baseUrl: limitedBaseUrl, perSecond }),
		W.rateLimitedChatWorkflow('mgwBenchRl0004', { count: items, concurrency: 10, bucket: 'rl-drop' }),
	];
	log(`rate limits: ${workflows.length} runs of ${items} chat items against ${perSecond} requests/s (bare 429 beyond), one at a time`);
	const results = await runBatch({ runtime, credentials, workflows, name: 'ratelimit', out });
	const stats = proxy.stats();
	const measure = (id, bucket) => {
		const node = results[id]?.nodes?.[W.MEASURED];
		const output = node?.items ?? [];
		const failed = output.filter((item) => item.json?.error !== undefined).length;
		const { admitted = 0, limited = 0 } = stats[bucket] ?? {};
		const problem = !node ? `the run did not finish (${results[id]?.error?.message ?? 'no result'})` : output.length !== items ? `${output.length} of ${items} items came out` : undefined;
		return { ms: node?.executionTimeMs, failed, admitted, limited, share: limited / Math.max(1, admitted + limited), problem };
	};
	const ideal = (items / perSecond) * 1000;
	const dropIdeal = (drop.after / perSecond + (items - drop.after) / drop.perSecond) * 1000;
	const pct = (share) => `${(share * 100).toFixed(1)} %`;
	const rows = [];
	const ours = (rowId, id, bucket, concurrency) => {
		const m = measure(id, bucket);
		rows.push(
			row({
				id: rowId,
				what: `Gateway Chat, ${items} items, Concurrency ${concurrency}, gateway admitting ${perSecond}/s (100 ms answers): time vs N/R, and share of requests answered 429`,
				ours: `${fmtMs(m.ms)}; ${m.limited} × 429 (${pct(m.share)}); ${m.failed} failed`,
				baseline: `N/R = ${fmtMs(ideal)}`,
				ratio: m.ms / ideal,
				goal: '≤ 1.15× and ≤ 5 % 429',
				pass: m.ms / ideal <= 1.15 && m.share <= 0.05 && m.failed === 0,
				how: 'node time from n8n run data; 429s counted by the token bucket in front of the loopback gateway',
				problem: m.problem,
			}),
		);
		return m;
	};
	ours('7a', 'mgwBenchRl0001', 'rl-c10', 10);
	ours('7b', 'mgwBenchRl0002', 'rl-c50', 50);
	const http = measure('mgwBenchRl0003', 'rl-http');
	rows.push(
		row({
			id: '7c',
			what: `n8n's HTTP Request node, the same ${items} requests, Batching set by hand to ${perSecond} items per 1 s (reference for 7a/7b)`,
			ours: `${fmtMs(http.ms)}; ${http.limited} × 429 (${pct(http.share)}); ${http.failed} failed`,
			baseline: `N/R = ${fmtMs(ideal)}`,
			ratio: http.ms / ideal,
			goal: 'reference',
			pass: true,
			how: 'node time from n8n run data',
			problem: http.problem,
		}),
	);
	const dropped = measure('mgwBenchRl0004', 'rl-drop');
	rows.push(
		row({
			id: '7d',
			what: `Gateway Chat, ${items} items, Concurrency 10, the gateway's limit drops half way (${perSecond}/s for ${drop.after}, then ${drop.perSecond}/s)`,
			ours: `${fmtMs(dropped.ms)}; ${dropped.limited} × 429 (${pct(dropped.share)}); ${dropped.failed} failed`,
			baseline: `ideal ${fmtMs(dropIdeal)}`,
			ratio: dropped.ms / dropIdeal,
			goal: '≤ 1.3×, no failed item',
			pass: dropped.ms / dropIdeal <= 1.3 && dropped.failed === 0,
			how: 'node time from n8n run data',
			problem: dropped.problem,
		}),
	);
	return rows;
}

// ---------------------------------------------------------------------------------------------
// Many videos: the status checks of one run stay within its budget (issue 14)

const POLL_BUDGET = { videos: 200, perSecond: 10, intervalMs: 5000 };

/** Peak number of requests within any 1 s window. */
function peakPerSecond(times) {
	const sorted = [...times].sort((a, b) => a - b);
	let peak = 0;
	for (let start = 0, end = 0; end < sorted.length; end++) {
		while (sorted[end] - sorted[start] >= 1000) start++;
		peak = Math.max(peak, end - start + 1);
	}
	return peak;
}

async function measurePollBudget({ runtime, credentials, out, gateway }) {
	const { videos, perSecond, intervalMs } = POLL_BUDGET;
	log(`poll budget: ${videos} videos in one Generate run, done on their 3rd status check, budget ${perSecond} checks/s`);
	const from = gateway.requests.length;
	const workflow = W.videoWorkflow('mgwBenchPoll001', { count: videos, download: false, concurrency: 20 });
	const results = await runBatch({ runtime, credentials, workflows: [workflow], name: 'pollbudget', out });
	const node = results.mgwBenchPoll001?.nodes?.[W.MEASURED];
	const polls = gateway.requests.slice(from).filter((r) => r.method === 'GET' && /^\/v1\/video\/generations\/[^/]+$/.test(r.path));
	// Kept for reading why a row failed: every request of the run, in the order the gateway saw it.
	fs.writeFileSync(path.join(out, '8b-gateway-log.json'), JSON.stringify(gateway.requests.slice(from)));
	const lastPollOf = new Map();
	for (const poll of polls) lastPollOf.set(poll.path, poll.time);
	const finishes = [...lastPollOf.values()];
	const spread = finishes.length ? Math.max(...finishes) - Math.min(...finishes) : undefined;
	// One round of checks at the budget's pace (its checks are spaced 10 % wider than 1/budget).
	const round = Math.max(intervalMs, (videos / perSecond) * 1000 * 1.1);
	const peak = peakPerSecond(polls.map((poll) => poll.time));
	const done = (node?.items ?? []).filter((item) => item.json?.status === 'SUCCESS').length;
	const problem = done !== videos ? `${done} of ${videos} videos succeeded` : undefined;
	return [
		row({
			id: '8a',
			what: `Gateway Video Generate, ${videos} videos done on their 3rd check, budget ${perSecond} checks/s: peak status checks in any second`,
			ours: `${peak} per second (${polls.length} checks)`,
			baseline: `budget ${perSecond}`,
			ratio: peak / perSecond,
			goal: '≤ 1×',
			pass: peak <= perSecond,
			how: "status requests counted by the loopback gateway's log, sliding 1 s window",
			problem,
		}),
		row({
			id: '8b',
			what: `The same run: time between the first and the last video to finish, vs one round of checks (max(Poll Interval, videos / budget, spaced 10 % wider))`,
			ours: fmtMs(spread),
			baseline: `one round = ${fmtMs(round)}`,
			ratio: spread / round,
			goal: '≤ 1.1×',
			pass: spread !== undefined && spread <= round * 1.1,
			how: `finish = a task's last status check at the gateway; node time ${fmtMs(node?.executionTimeMs)}`,
			problem,
		}),
	];
}

/** The rows of issue 19 as measured now, kept as the "previous build" figures of later runs. */
function savePrevious(label, figures, rows) {
	const saved = fs.existsSync(PREVIOUS_BUILD) ? JSON.parse(fs.readFileSync(PREVIOUS_BUILD, 'utf8')) : { rows: {}, figures: {} };
	saved.build = label;
	for (const id of Object.keys(figures)) {
		const measured = rows.find((r) => r.id === id);
		saved.rows[id] = `${measured.ours} (${measured.ratio})`;
		saved.figures[id] = figures[id];
	}
	fs.writeFileSync(PREVIOUS_BUILD, `${JSON.stringify(saved, null, 1)}\n`);
	log(`saved the figures of rows ${Object.keys(figures).join(', ')} to ${path.relative(ROOT, PREVIOUS_BUILD)} as "${label}"`);
}

async function main() {
	const options = parseArgs(process.argv.slice(2));
	const want = (part) => !options.only || options.only.has(part);
	const missing = want('scale') ? missingForRows(options.rows) : undefined;
	if (missing) throw new Error(missing);
	fs.mkdirSync(options.out, { recursive: true });
	ensureBuilt();
	const runtime = await ensureRuntime({ log: (message) => log(`n8n runtime: ${message}`) });
	const n8nNodeVersion = execFileSync(runtime.nodeBin, ['--version'], { encoding: 'utf8' }).trim().replace(/^v/, '');
	log(`n8n ${runtime.version} (Node ${n8nNodeVersion}); answers delayed ${options.delayMs} ms; medians of ${options.repeats}`);

	// Two gateways: chat answers wait `delayMs` like a model does; the plant store and video polls
	// answer at once, so per-item overhead is not hidden behind a delay.
	const slow = await startGateway({ delayMs: options.delayMs });
	const fast = await startGateway({ delayMs: 0, videoPollsToFinish: 3 });
	const key = `sk-bench-${crypto.randomBytes(8).toString('hex')}`;
	// Rate limits (issue 14): answers after 100 ms, R requests/s admitted per workflow, bare 429s beyond.
	const limitedGateway = await startGateway({ delayMs: RATE_LIMIT.answerMs });
	const proxy = await startTokenBucketProxy({ target: limitedGateway.baseUrl, plans: RATE_LIMIT.plans });
	const credentials = W.benchCredentials({ slowBaseUrl: slow.baseUrl, fastBaseUrl: fast.baseUrl, limitedBaseUrl: proxy.baseUrl, key });
	const record = { options: { ...options, only: options.only && [...options.only] }, n8nVersion: runtime.version, n8nNodeVersion };
	const rows = [];
	try {
		// 4. Before n8n runs, so nothing else competes for the CPU; on n8n's own Node.
		if (want('aggregation')) {
			const aggregation = await measureAggregationOn(runtime, fast.baseUrl, Math.max(options.repeats, 9));
			record.aggregation = aggregation;
			for (const [n, format] of aggregation.results.entries()) {
				const { small, large, vsJsonParse, growth } = format;
				const runs = small.oursRuns.length;
				rows.push(
					row({
						id: `4${'abcd'[n * 2]}`,
						what: `Aggregate a ${small.mib} MiB ${format.label} stream (${small.events.toLocaleString('en-US')} events, 16 KiB chunks) vs JSON.parse of the same events' JSON`,
						ours: fmtMs(small.oursMs),
						baseline: `${fmtMs(small.jsonParseMs)} (JSON.parse)`,
						ratio: vsJsonParse,
						goal: '≤ 2×',
						pass: vsJsonParse <= 2,
						how: `CPU time on Node ${aggregation.node} (n8n's), median of ${runs} paired ratios; output text checked`,
					}),
				);
				rows.push(
					row({
						id: `4${'abcd'[n * 2 + 1]}`,
						what: `Same, ${large.mib} MiB vs ${small.mib} MiB: linear`,
						ours: fmtMs(large.oursMs),
						baseline: fmtMs(small.oursMs),
						ratio: growth,
						goal: '1.6–2.5× (2× = linear)',
						pass: growth >= 1.6 && growth <= 2.5,
						how: `CPU time, median of ${runs} paired ratios`,
					}),
				);
			}
		}

		// 12. Masking, also before n8n runs: an input built to be slow costs what its size says.
		if (want('masking')) {
			const masking = measureMasking({ repeats: options.repeats });
			record.masking = masking;
			const kChars = (chars) => `${Math.round(chars / 1000).toLocaleString('en-US')}k characters`;
			const growthRow = (id, what, figures) =>
				row({ id, what, ours: fmtMs(figures.oursMs), baseline: fmtMs(figures.baselineMs), ratio: figures.ratio, goal: '1.6–2.5× (2× = linear)', pass: figures.ratio >= 1.6 && figures.ratio <= 2.5, how: 'built masker in the bench process, median of paired ratios; output checked' });
			rows.push(
				growthRow('12a', `Mask a run of one character twice as long (${kChars(masking.placeholderRun.chars * 2)}) vs once (${kChars(masking.placeholderRun.chars)}), for a placeholder key of that character (sk-xxxx…)`, masking.placeholderRun),
				row({
					id: '12b',
					what: `Mask ${kChars(masking.escapes.chars)} of text full of JSON and URL escapes vs plain text of the same size`,
					ours: fmtMs(masking.escapes.oursMs),
					baseline: `${fmtMs(masking.escapes.baselineMs)} (plain)`,
					ratio: masking.escapes.ratio,
					goal: '≤ 15×',
					pass: masking.escapes.ratio <= 15,
					how: 'built masker in the bench process, median of paired ratios; output checked',
				}),
				growthRow('12c', `Mask a run of %41 escapes twice as long (${kChars(masking.percentRun.chars * 2)}) vs once`, masking.percentRun),
			);
		}

		// 1, 2, 5: one n8n process runs every timing workflow, one at a time.
		const batch = mainBatch({ repeats: options.repeats, slowBaseUrl: slow.baseUrl, fastBaseUrl: fast.baseUrl, only: options.only });
		if (batch.workflows.length) {
			log(`n8n batch: ${batch.workflows.length} workflows, one at a time (about ${want('chat') ? 25 + 6 * options.repeats : 0}${want('video') ? ' + 35' : ''} s of runs)`);
			const results = await runBatch({ runtime, credentials, workflows: batch.workflows, name: 'timing', out: options.out });
			const times = (group, count) => {
				const runs = (batch.plan[group] || []).map((id) => measuredRun(results, id, count));
				const problem = runs.find((run) => run.problem)?.problem;
				return { ms: problem ? undefined : median(runs.map((run) => run.ms)), all: runs.map((run) => run.ms), problem, runs };
			};
			record.timing = {};
			for (const group of Object.keys(batch.plan)) {
				const count = group.startsWith('video') ? Number(group.slice(5)) : group.startsWith('warmUp') ? undefined : /plant/i.test(group) ? batch.plantItems : batch.chatItems;
				if (count !== undefined) record.timing[group] = times(group, count);
			}
			const t = record.timing;
			const n = options.repeats;
			if (want('chat')) {
				const ideal = Math.ceil(batch.chatItems / 10) * options.delayMs;
				rows.push(
					timesRow({
						id: '1a',
						what: `${batch.chatItems} Gateway Chat items, answers after ${options.delayMs} ms, concurrency 10, vs the ideal ⌈${batch.chatItems}/10⌉ × ${options.delayMs} ms`,
						ours: t.chat10,
						baseline: { ms: ideal },
						baselineLabel: 'ideal',
						max: 1.25,
						how: `node time in n8n run data, median of ${n}`,
					}),
				);
				const r1b = t.chat1.ms / t.chat10.ms;
				rows.push(
					row({
						id: '1b',
						what: 'Same items at concurrency 1 vs concurrency 10',
						ours: fmtMs(t.chat10.ms),
						baseline: `${fmtMs(t.chat1.ms)} (concurrency 1)`,
						ratioText: Number.isFinite(r1b) ? `${r1b.toFixed(1)}× faster` : '–',
						goal: '≥ 8× faster',
						pass: r1b >= 8,
						how: `concurrency 1 once (${Math.round((t.chat1.ms || 0) / 1000)} s), concurrency 10 median of ${n}`,
						problem: t.chat1.problem || t.chat10.problem,
					}),
				);
				rows.push(
					timesRow({
						id: '1c',
						what: `Same items at concurrency 100 vs n8n's HTTP Request node sending the same ${batch.chatItems} requests (Batching: all items in one batch, no interval)`,
						ours: t.chat100,
						baseline: t.httpChat,
						baselineLabel: 'HTTP Request',
						max: 1.0,
						how: `medians of ${n}, alternating`,
					}),
				);
			}
			if (want('video')) {
				rows.push(
					timesRow({
						id: '2',
						what: '10 Gateway Video Generate items vs 1 (submit, 5 s polls, done on the 3rd poll, download)',
						ours: t.video10,
						oursLabel: ' (10 videos)',
						baseline: t.video1,
						baselineLabel: '1 video',
						max: 1.3,
						how: 'node time in n8n run data, one run each',
					}),
				);
			}
			if (want('plants')) {
				rows.push(
					timesRow({
						id: '5',
						what: `${batch.plantItems} Gateway Plant Create items one at a time (concurrency 1) vs HTTP Request doing the same POST /plants (its default: every item at once); gateway answers at once`,
						ours: t.plants,
						baseline: t.httpPlants,
						baselineLabel: 'HTTP Request',
						max: 1.1,
						how: `medians of ${n}, alternating`,
					}),
				);
			}
		}

		// 8. Many videos: one run's status checks within its budget.
		if (want('pollbudget')) rows.push(...(await measurePollBudget({ runtime, credentials, out: options.out, gateway: fast })));

		// 7. Rate limits: their own n8n batch, one workflow at a time, each with its own token bucket.
		if (want('ratelimit')) rows.push(...(await measureRateLimits({ runtime, credentials, out: options.out, limitedBaseUrl: proxy.baseUrl, proxy })));

		// 8. The Gateway Chat Model as an AI Agent's model, against n8n's own OpenAI Chat Model (bench/chatModel.js).
		if (want('agent')) {
			const agent = await measureAgentModels({ runtime, out: options.out, repeats: options.repeats, log });
			record.agentModels = agent;
			rows.push(
				timesRow({
					id: '9',
					what: `AI Agent over ${agent.items} items, one Calculator call each: Gateway Chat Model vs n8n's OpenAI Chat Model (Responses API off), both at the same loopback gateway answering at once`,
					ours: agent.ours,
					baseline: agent.openAi,
					baselineLabel: "n8n's OpenAI Chat Model",
					max: 1.1,
					how: `the agent's span in n8n run data (items ready to last answer; ${agent.ours.modelCalls ?? '–'} model calls each), medians of ${options.repeats}, alternating`,
				}),
			);
		}

		// 10. Streaming overhead: a streaming Webhook's client vs the gateway's own first text (bench/streaming.js).
		if (want('streaming')) {
			const streaming = await measureStreaming({ runtime, out: options.out, repeats: options.repeats, log });
			record.streaming = streaming;
			for (const [id, node, label] of [['10a', 'chat', 'Gateway Chat'], ['10b', 'messages', 'Gateway Messages']]) {
				const m = streaming[node];
				rows.push(
					row({
						id,
						what: `Streaming Webhook (n8n start, production URL) → ${label} (Stream on, one item), slow loopback stream (first text ~${streaming.targetFirstTextMs} ms, then a frame every ${streaming.paceMs} ms): time to the first text at the webhook client vs the gateway's own time to first text`,
						ours: `${fmtMs(m.clientMs)} (+${fmtMs(m.addedMs)})`,
						baseline: `${fmtMs(m.gatewayMs)} (gateway)`,
						ratio: m.ratio,
						goal: '≤ 1.1×',
						pass: m.ratio <= 1.1,
						how:
							'client: node:http POST start → first `item` line with text; gateway: request arrival → first answer-text bytes, timed by a pass-through proxy in front of the loopback gateway; ' +
							`ratio per run, so n8n's and our node's added time (webhook, workflow start, request, stream relay) is all in the numerator; median of ${options.repeats} paired ratios, Chat and Messages alternating; ` +
							`where the added time goes (medians): ${fmtMs(m.inboundMs)} before the request reached the gateway (n8n's own HTTP Request node: row 10c), ${fmtMs(m.outboundMs)} from the gateway's first text to the client`,
						problem: m.problem,
					}),
				);
			}
			rows.push(
				row({
					id: '10c',
					what: "10a/10b's time before the request reaches the gateway (webhook, workflow start, the node up to its request), Gateway Chat and Messages vs n8n's HTTP Request node sending the same chat request behind the same kind of streaming Webhook",
					ours: fmtMs(streaming.oursInboundMs),
					baseline: `${fmtMs(streaming.baselineInboundMs)} (HTTP Request node)`,
					ratio: streaming.oursInboundMs / streaming.baselineInboundMs,
					goal: '≤ 1.1×',
					pass: streaming.oursInboundMs / streaming.baselineInboundMs <= 1.1,
					how: `client: node:http POST start → the request's arrival at the timing proxy; medians of ${2 * options.repeats} runs of ours and ${options.repeats} of n8n's node, taking turns, each ${streaming.settleMs} ms after the one before`,
					problem: streaming.baselineProblem ?? streaming.chat.problem ?? streaming.messages.problem,
				}),
			);
		}

		// 3. Memory: each video in its own n8n process. What counts is the peak resident memory while
		// the node ran (its start and duration from n8n's run data), not n8n's start-up peak, which
		// is higher than a streamed download ever gets and would hide one.
		if (want('memory')) {
			const bigBytes = options.bigMib * MIB;
			const memoryRun = async (name, promptTag) => {
				log(`memory: ${name} video in its own n8n (filesystem binary mode), sampling the process tree's memory`);
				const results = await runBatch({
					runtime,
					credentials,
					workflows: [W.videoWorkflow('mgwBenchMem0001', { count: 1, promptTag })],
					name,
					out: options.out,
					sampleMemory: true,
					keepUserFolder: false, // the big video is gone with it
				});
				const run = measuredRun(results, 'mgwBenchMem0001', 1);
				const stored = storedVideo(run.node, promptTag ? bigBytes : undefined);
				const { timeline, processes } = results.memory;
				const from = run.node?.startTime ?? 0;
				const to = from + (run.ms ?? 0);
				const n8nPeak = peakWithin(timeline, from, to, 'matched');
				const treePeakInRun = peakWithin(timeline, from, to, 'tree');
				const startUpPeak = processes.find((p) => p.matched)?.hwm;
				log(
					`memory: ${name}: while the node ran (${fmtMs(run.ms)}, ${n8nPeak.samples} samples) n8n peaked at ${fmtMib(n8nPeak.peak)}, ` +
						`its process tree at ${fmtMib(treePeakInRun.peak)}; n8n's lifetime peak (VmHWM) ${fmtMib(startUpPeak)}`,
				);
				const problem = run.problem || stored.problem || (n8nPeak.samples < 5 ? `only ${n8nPeak.samples} memory samples while the node ran` : undefined);
				return { ms: run.ms, problem, n8nPeak: n8nPeak.peak, treePeak: treePeakInRun.peak, samples: n8nPeak.samples, lifetimePeak: startUpPeak, processes };
			};
			const baseline = await memoryRun('memory-baseline', '');
			const big = await memoryRun(`memory-${options.bigMib}mib`, `[big:${options.bigMib}]`);
			record.memory = { baseline, big };
			// The larger of two readings: the n8n process alone (where the download runs) and its whole
			// tree (n8n, its task runner and any helper), so memory moved elsewhere counts too.
			const growth = Math.max(big.n8nPeak - baseline.n8nPeak, big.treePeak - baseline.treePeak);
			const r3 = growth / bigBytes;
			rows.push(
				row({
					id: '3',
					what: `A ${options.bigMib} MiB video downloaded by Gateway Video Generate in n8n's filesystem binary mode: growth of n8n's peak memory / file size`,
					ours: `${fmtMib(big.n8nPeak)} peak`,
					baseline: `${fmtMib(baseline.n8nPeak)} peak (tiny video)`,
					ratio: r3,
					ratioText: `${fmtMib(growth)} / ${options.bigMib} MiB = ${r3.toFixed(3)}`,
					goal: '≤ 0.25',
					pass: r3 <= 0.25,
					how:
						`peak RSS of the n8n process while the node ran (from /proc every 50 ms; ${big.samples} and ${baseline.samples} samples), ` +
						`and of its whole process tree (${fmtMib(big.treePeak)} vs ${fmtMib(baseline.treePeak)}): the larger growth counts; separate n8n processes, one run each`,
					problem: baseline.problem || big.problem,
				}),
			);
		}

		// 11. Issue 19: a thousand videos at a gateway that takes its time; memory of large files per item.
		if (want('scale')) {
			const previous = fs.existsSync(PREVIOUS_BUILD) ? JSON.parse(fs.readFileSync(PREVIOUS_BUILD, 'utf8')) : undefined;
			const videos = options.videos ? { small: Math.min(200, options.videos), large: options.videos } : undefined;
			record.scale = {};
			for (const [id, measure] of Object.entries(SCALE_ROWS)) {
				if (options.rows && !options.rows.has(id)) continue;
				const measured = await measure({ runtime, key, out: options.out, log, row, previous, videos });
				record.scale[id] = measured.figures;
				rows.push(measured.row);
				// Each row as soon as it is measured: a long run that breaks later keeps it.
				fs.writeFileSync(path.join(options.out, 'scale-rows.json'), JSON.stringify({ rows: rows.filter((r) => r.id in record.scale), figures: record.scale }, null, 1));
				if (options.savePrevious) savePrevious(options.savePrevious, { [id]: measured.figures }, rows);
			}
		}
	} finally {
		await slow.close();
		await fast.close();
		await proxy.close();
		await limitedGateway.close();
	}

	rows.sort((a, b) => a.id.localeCompare(b.id, 'en', { numeric: true }));
	if (options.rows) rows.splice(0, rows.length, ...rows.filter((r) => options.rows.has(r.id)));
	record.rows = rows;
	record.machine = machineLine(runtime, n8nNodeVersion);
	fs.writeFileSync(path.join(options.out, 'results.json'), JSON.stringify(record, null, 1));
	log(`done in ${Math.round((Date.now() - started) / 1000)} s; details in ${path.relative(ROOT, path.join(options.out, 'results.json'))}`);
	printTable(rows, record.machine);
	// A full run (every row, at full size) is the README's table.
	if (!options.only && !options.rows && !options.videos) {
		writeReadmeTable(path.join(ROOT, 'README.md'), rows, record.machine);
		log('wrote the table into README.md');
	}
}

main().catch((error) => {
	process.stderr.write(`bench crashed: ${error.stack || error}\n`);
	process.exit(1);
});
