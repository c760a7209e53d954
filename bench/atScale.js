// Rows 11a–11f of `npm run bench` (issue 19): a thousand videos at a gateway that takes its time,
// and the memory of a thousand 10 MB first frames or chat attachments.
//
// 11a/11b: 200 and 1,000 videos at the timing gateway (bench/videoGateway.js: submits 1–3 s,
//   checks 0.5–3 s, done 5–60 s after the submit), Concurrency 10, 10 status checks/s. Limit:
//   the later of the submit phase at Concurrency 10 and the slowest video's completion (both
//   from the seeded draws, bench/videoGateway.js idealSchedule), plus one Poll Interval and one
//   status latency (its upper bound, 3 s). Also: "still running" reports (all false: every video
//   is done 60 s after its submit, Max Wait is 120 s) and the gaps between a video's checks.
// 11e: 11b with one submit in seven and every second check answered 429 (Retry-After 1 s and
//   3 s in turn); limit as 11b with each refused submit waiting its Retry-After (2 s on average)
//   and one more Retry-After (3 s) before the last check.
// 11f: 11a in n8n's queue mode (scripts/n8n/queue.js: a Redis, one main, two workers, the
//   recipe of docs/running-at-scale.md), the execution started by a production webhook
//   through the main (answered at once); same gateway, limit and measure as 11a (the node's time in
//   the run data, read back through the main's REST API), plus which worker ran it.
// 11c/11d: 1,000 videos with a 10 MB first frame each, 1,000 Gateway Chat items with a 10 MB
//   image each, in n8n's filesystem binary mode (the items hold a reference to one stored file):
//   peak RSS of the n8n process while the node ran, against base + 2 × Concurrency × 10 MB, base
//   being the same workflow with one item in its own n8n. A run that passes a cap (3 GiB) is
//   stopped there: memory that grows with the items would otherwise take the shared machine down.
//   Two knobs for finding out what grows: MGW_BENCH_NOOP=1 puts n8n's No-Op node in the measured
//   node's place (what n8n itself holds for the same items; its run is too short for the row's
//   window, look at the n8n process's peak instead), MGW_BENCH_NODE_OPTIONS adds Node options to
//   n8n's (e.g. --max-old-space-size=512, to tell garbage from memory kept).
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const { startGateway } = require('../test/gateway');
const { imageBytes } = require('../test/gateway/media');
const { runWorkflows } = require('../scripts/n8n/headless');
const { findRedisServer, n8nRest, startQueue, startRedis } = require('../scripts/n8n/queue');
const { peakWithin, sampleProcessTree } = require('./procTree');
const { REALISTIC, startVideoGateway, idealSchedule, checkGaps, histogramText } = require('./videoGateway');
const W = require('./workflows');

const MIB = 1024 * 1024;
const SCALE = {
	concurrency: 10,
	checksPerSecond: 10,
	pollIntervalS: 30,
	maxWaitS: 120,
	statusLatencyMs: REALISTIC.statusMs[1],
	frameBytes: 10_000_000,
	memoryCapBytes: 3 * 1024 * MIB,
	// Memory rows: a quick gateway, so that what is measured is the node holding its files.
	quick: { submitMs: [200, 600], statusMs: [50, 200], doneMs: [1000, 3000] },
	refusedSubmitEvery: 7,
	retryAfterMeanMs: 2000,
	retryAfterMaxMs: 3000,
};
const PRELOAD = path.join(__dirname, 'executionTimeout.js');

const fmtS = (ms) => (ms === undefined ? '–' : `${(ms / 1000).toFixed(1)} s`);
const fmtMib = (bytes) => (bytes === undefined ? '–' : `${(bytes / MIB).toFixed(0)} MiB`);

/** n8n's environment for a row whose run may take `cutoffMs`: execute-batch would stop it at 3 min. */
const longRunEnv = (cutoffMs) => ({
	N8N_DEFAULT_BINARY_DATA_MODE: 'filesystem',
	NODE_OPTIONS: `--require ${PRELOAD}${process.env.MGW_BENCH_NODE_OPTIONS ? ` ${process.env.MGW_BENCH_NODE_OPTIONS}` : ''}`,
	MGW_BENCH_EXECUTION_TIMEOUT_MS: String(Math.round(cutoffMs)),
});

async function runOne({ runtime, key, out, name, baseUrl, build, cutoffMs, env = {}, sampleMemory, log }) {
	const credentialId = `mgwBench${name.replace(/\W/g, '')}`.slice(0, 16);
	const workflow = build(credentialId);
	const sampler = sampleMemory && sampleProcessTree({ match: /execute-batch/, onSample: sampleMemory.onSample });
	let results;
	let failure;
	try {
		results = await runWorkflows({
			runtime,
			credentials: [W.ownGatewayCredential({ id: credentialId, baseUrl, key })],
			workflows: [workflow],
			env: { ...longRunEnv(cutoffMs), ...env },
			userFolder: path.join(out, name),
			keepUserFolder: false,
			concurrency: 1,
			timeoutMs: cutoffMs + 5 * 60 * 1000,
			log: (message) => log(`${name}: ${message}`),
		});
	} catch (error) {
		failure = error.message.split('\n')[0];
	}
	const memory = sampler?.stop();
	const result = results?.[workflow.id];
	const node = result?.nodes?.[W.MEASURED];
	return { node, result, failure, memory };
}

const QUEUE_OWNER = { email: 'owner@example.com', password: 'Bench-Queue-1', firstName: 'Bench', lastName: 'Queue' };

/** `workflow` started by a production webhook (POST /webhook/<route>, answered at once) instead of by hand. */
function behindWebhook(workflow, route) {
	const trigger = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.manualTrigger');
	Object.assign(trigger, {
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2.1,
		webhookId: crypto.randomUUID(),
		parameters: { httpMethod: 'POST', path: route, responseMode: 'onReceived', options: {} },
	});
	return workflow;
}

/**
 * runOne in n8n's queue mode: a Redis, one main and two workers on one user folder (the recipe of
 * docs/running-at-scale.md: EXECUTIONS_MODE=queue, QUEUE_BULL_REDIS_*, one database and encryption
 * key, N8N_DEFAULT_BINARY_DATA_MODE=database on all, a broker and a health port per worker), the
 * workflow started by its production webhook through the main and read back through the main's
 * REST API. Also says which worker ran it.
 */
async function runQueued({ runtime, key, out, name, baseUrl, build, cutoffMs, log }) {
	const redisBin = findRedisServer();
	if (!redisBin) throw new Error(REDIS_MISSING);
	const credentialId = `mgwBench${name.replace(/\W/g, '')}`.slice(0, 16);
	const route = `mgw-bench-${name}`;
	const workflow = behindWebhook(build(credentialId), route);
	const say = (message) => log(`${name}: ${message}`);
	const redis = await startRedis({ bin: redisBin, log: say });
	let stack;
	try {
		stack = await startQueue({
			runtime,
			redis,
			userFolder: path.join(out, name),
			label: name,
			owner: QUEUE_OWNER,
			prefix: `mgw-${crypto.randomBytes(4).toString('hex')}`,
			binaryDataMode: 'database',
			// The recipe's value (above the longest Max Wait); the stack stops when nothing runs.
			gracefulShutdownSeconds: 960,
			workers: 2,
			// Activation (2.x) goes through an outbox, polled every 15 s by default.
			env: { N8N_WORKFLOW_PUBLICATION_OUTBOX_POLL_INTERVAL_MS: '500' },
			credentials: [W.ownGatewayCredential({ id: credentialId, baseUrl, key })],
			workflows: [workflow],
			log: say,
		});
		const rest = n8nRest(stack.main, runtime);
		await rest.activate(workflow.id);
		for (const deadline = Date.now() + 30_000; ; await new Promise((resolve) => setTimeout(resolve, 250))) {
			const res = await fetch(`${stack.main.url}/webhook/${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
			const text = await res.text();
			if (res.status === 200) break;
			// Right after activation the webhook may not be registered yet: that 404 ran nothing.
			if (res.status !== 404 || Date.now() > deadline) throw new Error(`webhook: HTTP ${res.status} ${text.slice(0, 300)}`);
		}
		let executionId;
		for (const deadline = Date.now() + 30_000; !executionId; await new Promise((resolve) => setTimeout(resolve, 250))) {
			const [execution] = await rest.executions(workflow.id);
			executionId = execution && String(execution.id);
			if (!executionId && Date.now() > deadline) throw new Error('the webhook started no execution');
		}
		let execution;
		let failure;
		try {
			execution = await rest.finished(executionId, cutoffMs);
		} catch (error) {
			failure = error.message.split('\n')[0];
		}
		const workers = stack.workers.filter((worker) => fs.readFileSync(worker.logFile, 'utf8').includes(`Worker started execution ${executionId} `)).map((worker) => worker.name);
		const mainRan = fs.readFileSync(stack.main.logFile, 'utf8').includes(`Worker started execution ${executionId} `);
		const run = execution?.data?.resultData?.runData?.[W.MEASURED]?.[0];
		const node = run && { items: run.data?.main?.[0] ?? [], executionTimeMs: run.executionTime, startTime: run.startTime, status: run.executionStatus };
		return { node, result: { error: execution?.data?.resultData?.error, status: execution?.status }, failure, executionId, workers, mainRan };
	} finally {
		await stack?.stop();
		await redis.stop();
	}
}

/** The figures of the round before (bench/previous-build.json), if measured. */
function previousFigure(previous, id) {
	const figure = previous?.rows?.[id];
	return figure ? `; previous build (${previous.build}): ${figure}` : '';
}

// ---------------------------------------------------------------------------------------------
// 11a, 11b, 11e: makespan, false "still running", gaps between checks

async function measureSlowVideos({ runtime, key, out, log, row, id, count, refuse, queue, previous }) {
	const { concurrency, checksPerSecond, pollIntervalS, maxWaitS, statusLatencyMs } = SCALE;
	const intervalMs = pollIntervalS * 1000;
	const penaltyMs = refuse ? (index) => ((index + 1) % SCALE.refusedSubmitEvery === 0 ? SCALE.retryAfterMeanMs : 0) : undefined;
	const ideal = idealSchedule({ count, concurrency, penaltyMs });
	const limitMs = Math.max(ideal.submitPhaseMs, ideal.slowestMs) + intervalMs + statusLatencyMs + (refuse ? SCALE.retryAfterMaxMs : 0);
	const cutoffMs = 1.5 * limitMs + 30_000; // a build that needs more fails the row anyway
	log(`${id}: ${count} videos at the slow gateway${refuse ? ' with 429s' : ''}${queue ? ' in queue mode (a main, two workers)' : ''}; limit ${fmtS(limitMs)}, stopped at ${fmtS(cutoffMs)}`);
	const upstream = await startGateway({ videoPollsToFinish: 1 });
	const gateway = await startVideoGateway({ target: upstream.baseUrl, refuse });
	let run;
	try {
		run = await (queue ? runQueued : runOne)({
			runtime,
			key,
			out,
			log,
			name: `scale-${id}`,
			baseUrl: gateway.baseUrl,
			cutoffMs,
			build: (credentialId) =>
				W.slowVideoWorkflow(`mgwBenchScale${id}`, {
					count,
					concurrency,
					credentialId,
					options: { pollIntervalSeconds: pollIntervalS, maxWaitSeconds: maxWaitS, statusChecksPerSecond: checksPerSecond },
				}),
		});
	} finally {
		await gateway.close();
		await upstream.close();
	}
	const items = run.node?.items ?? [];
	const stillRunning = items.filter((item) => /still running/i.test(String(item.json?.error ?? item.json?.message ?? '')));
	// The gateway's log of every task, for a look at what a row's figures are made of.
	// Any other failed item is kept whole beside it: its words say what went wrong.
	const others = items.filter((item) => item.json?.error !== undefined && !stillRunning.includes(item));
	fs.writeFileSync(
		path.join(out, `${id}-gateway-log.json`),
		JSON.stringify({ stillRunning: stillRunning.map((item) => item.json?.task_id), otherFailures: others.map((item) => item.json), tasks: [...gateway.tasks.values()] }),
	);
	const otherFailures = others.length;
	const succeeded = items.filter((item) => item.json?.status === 'SUCCESS').length;
	const makespanMs = run.node?.executionTimeMs;
	const tasks = [...gateway.tasks.values()];
	const doneAtGateway = tasks.filter((task) => task.checks.some((check) => check.status === 'SUCCESS')).length;
	const submittedTwice = tasks.length - new Set(tasks.map((task) => task.index)).size;
	const gaps = checkGaps(gateway, intervalMs);
	const refusedSubmits = gateway.submits.filter((submit) => submit.refused).length;
	const refusedChecks = tasks.reduce((sum, task) => sum + task.checks.filter((check) => check.refused).length, 0);
	const ratio = makespanMs / limitMs;
	const goal = refuse ? 1.25 : 1.1;
	// Queue mode: ran on exactly one worker, never on the main.
	const placement = queue ? (run.workers?.length === 1 && !run.mainRan ? `ran on ${run.workers[0]} of 2` : `ran on ${run.workers?.join(' and ') || 'no worker'}${run.mainRan ? ' and the main' : ''}`) : undefined;
	const placedWell = !queue || (run.workers?.length === 1 && !run.mainRan);
	const problem = makespanMs === undefined
		? `the run did not end within ${fmtS(cutoffMs)} (${run.failure ?? run.result?.error?.message ?? 'stopped'}): ${tasks.length} tasks created, ${gaps.checks} checks, ${doneAtGateway} found done`
		: items.length !== count
			? `${items.length} of ${count} items came out`
			: !placedWell
				? placement
				: undefined;
	const ours =
		`${makespanMs === undefined ? `> ${fmtS(cutoffMs)}` : fmtS(makespanMs)}; ${queue ? `${submittedTwice} submitted twice; ${placement}; ` : ''}${stillRunning.length} false "still running"` +
		`${otherFailures ? `, ${otherFailures} other failures (first: ${String(others[0].json.error).slice(0, 200)})` : ''}; ${gaps.late} gaps > Poll Interval (${gaps.lateFirst} of them before the first check; longest ${fmtS(gaps.maxGapMs)}); ${gaps.neverChecked} never checked`;
	const figures = {
		id, count, refuse: Boolean(refuse), limitMs, ideal, makespanMs, stillRunning: stillRunning.length, otherFailures, succeeded,
		tasks: tasks.length, submittedTwice, gaps, refusedSubmits, refusedChecks, failure: run.failure,
		...(queue ? { queue: { executionId: run.executionId, workers: run.workers, mainRan: run.mainRan } } : {}),
	};
	return {
		figures,
		row: row({
			id,
			what:
				`${queue ? "n8n's queue mode (Redis, one main, two workers; started by a production webhook through the main): " : ''}Gateway Video Generate, ${count.toLocaleString('en-US')} videos, Concurrency ${concurrency}, ${checksPerSecond} checks/s, Poll Interval ${pollIntervalS} s, Max Wait ${maxWaitS} s; ` +
				`gateway: submit 1–3 s, status 0.5–3 s, done 5–60 s after submit (seeded)${refuse ? '; 1 in 7 submits and 1 in 2 checks answered 429 (Retry-After 1 s / 3 s)' : ''}: makespan vs limit`,
			ours,
			baseline:
				`limit ${fmtS(limitMs)} = max(submit phase ${fmtS(ideal.submitPhaseMs)}, slowest video ${fmtS(ideal.slowestMs)}) + ${pollIntervalS} s + ${statusLatencyMs / 1000} s` +
				`${refuse ? ` + ${SCALE.retryAfterMaxMs / 1000} s Retry-After (each refused submit +2 s)` : ''}${previousFigure(previous, id)}`,
			ratio,
			ratioText: makespanMs === undefined ? `> ${(cutoffMs / limitMs).toFixed(2)}×` : undefined,
			goal: `≤ ${goal.toFixed(2)}×, 0 false "still running"${refuse ? ', no failed item' : ', no gap > Poll Interval'}${queue ? ', 0 submitted twice, one worker ran it' : ''}`,
			pass:
				ratio <= goal &&
				stillRunning.length === 0 &&
				otherFailures === 0 &&
				(refuse || (gaps.late === 0 && gaps.neverChecked === 0)) &&
				(!queue || (submittedTwice === 0 && placedWell)),
			how:
				`node time from n8n run data${queue ? " (read back through the main's REST API)" : ''}; gaps between a video's submit answer and its checks (to the one finding it done) from the gateway's log, in Poll Intervals: ${histogramText(gaps)}; ` +
				`${tasks.length} tasks created, ${submittedTwice} submitted twice, ${gaps.checks} checks` +
				(refuse ? `, ${refusedSubmits} submits and ${refusedChecks} checks refused` : '') +
				`; at most ${ideal.maxActive} videos running at once (${Math.ceil(ideal.maxActive / checksPerSecond)} s of checks at the budget)`,
			problem,
		}),
	};
}

// ---------------------------------------------------------------------------------------------
// 11c, 11d: peak memory with a 10 MB file on each of 1,000 items

/** A 10 MB PNG: the loopback gateway's own small image, padded after its end to `bytes`. */
function writeFrame(dir, bytes) {
	fs.mkdirSync(dir, { recursive: true });
	const file = path.join(dir, `frame-${bytes}.png`);
	if (fs.existsSync(file) && fs.statSync(file).size === bytes) return file;
	const png = imageBytes('png', 0);
	fs.writeFileSync(file, Buffer.concat([png, Buffer.alloc(bytes - png.length)]));
	return file;
}

const withNoOp = (workflow) => (process.env.MGW_BENCH_NOOP ? { ...workflow, nodes: workflow.nodes.map((node) => (node.name === W.MEASURED ? { id: node.id, name: node.name, type: 'n8n-nodes-base.noOp', typeVersion: 1, position: node.position, parameters: {} } : node)) } : workflow);

async function measureFileMemory({ runtime, key, out, log, row, id, kind, count, previous }) {
	const { concurrency, frameBytes, memoryCapBytes } = SCALE;
	const framesDir = path.join(out, 'frames');
	const filePath = writeFrame(framesDir, frameBytes);
	const upstream = await startGateway({ videoPollsToFinish: 1, delayMs: kind === 'chat' ? 200 : 0 });
	// The loopback gateway logs every request with its body: 1,000 bodies of 13 MB would fill this
	// process (it did: the bench ran out of heap), and nothing here reads that log.
	const forgetBodies = setInterval(() => upstream.requests.splice(0), 500);
	const gateway = kind === 'video' ? await startVideoGateway({ target: upstream.baseUrl, latency: SCALE.quick }) : undefined;
	const baseUrl = gateway?.baseUrl ?? upstream.baseUrl;
	const build = (items) => (credentialId) => withNoOp(
		kind === 'video'
			? W.framedVideoWorkflow(`mgwBenchMem${id}${items}`, { filePath, count: items, concurrency, credentialId, options: { pollIntervalSeconds: 5, maxWaitSeconds: 300 } })
			: W.attachedChatWorkflow(`mgwBenchMem${id}${items}`, { filePath, count: items, concurrency, credentialId }));
	// The results hook (scripts/n8n/result-hook.js) would inline every item's file as Base64 into the
	// run's record after the run, 1,000 × 13 MB for the items feeding the node alone: that, not n8n
	// nor the node, is what passed 3 GiB (a No-Op in the node's place did too, with 200 items).
	// Nothing here reads the files back, so they stay references.
	const env = { N8N_RESTRICT_FILE_ACCESS_TO: framesDir, MGW_N8N_INLINE_BINARY_MAX_BYTES: '0' };
	const measure = async (items) => {
		let stoppedAt;
		const onSample = ({ matched, pids }) => {
			if (matched <= memoryCapBytes || stoppedAt !== undefined) return;
			stoppedAt = matched;
			log(`${id}: n8n passed ${fmtMib(memoryCapBytes)} (${fmtMib(matched)}): stopping it`);
			for (const pid of pids) {
				try {
					process.kill(pid, 'SIGKILL');
				} catch {
					// already gone
				}
			}
		};
		const run = await runOne({ runtime, key, out, log, name: `memory-${id}-${items}`, baseUrl, env, build: build(items), cutoffMs: 20 * 60 * 1000, sampleMemory: { onSample } });
		const { timeline } = run.memory;
		const from = run.node?.startTime;
		const window = from === undefined ? { peak: Math.max(0, ...timeline.map((s) => s.matched)), samples: timeline.length } : peakWithin(timeline, from, from + run.node.executionTimeMs, 'matched');
		const failed = (run.node?.items ?? []).filter((item) => item.json?.error !== undefined);
		const problem =
			stoppedAt !== undefined
				? `stopped at ${fmtMib(stoppedAt)} (cap ${fmtMib(memoryCapBytes)})`
				: !run.node
					? `the run failed: ${run.failure ?? run.result?.error?.message}`
					: run.node.items.length !== items
						? `${run.node.items.length} of ${items} items came out`
						: failed.length
							? `${failed.length} items failed, e.g. ${String(failed[0].json.error).slice(0, 160)}`
							: undefined;
		return { peak: window.peak, samples: window.samples, ms: run.node?.executionTimeMs, stoppedAt, problem };
	};
	let base;
	let big;
	try {
		log(`${id}: memory, one ${kind} item with a ${frameBytes / 1e6} MB file (base)`);
		base = await measure(1);
		log(`${id}: memory, ${count} ${kind} items with a ${frameBytes / 1e6} MB file each`);
		big = await measure(count);
	} finally {
		clearInterval(forgetBodies);
		await gateway?.close();
		await upstream.close();
	}
	const boundBytes = base.peak + 2 * concurrency * frameBytes;
	const peak = big.stoppedAt ?? big.peak;
	const growthPerItem = (peak - base.peak) / count;
	const what =
		kind === 'video'
			? `Gateway Video Generate, ${count.toLocaleString('en-US')} videos with a ${frameBytes / 1e6} MB first frame each (Image From Binary Field), Concurrency ${concurrency}`
			: `Gateway Chat, ${count.toLocaleString('en-US')} items with a ${frameBytes / 1e6} MB image attachment each (Binary Attachments), Concurrency ${concurrency}`;
	return {
		figures: { id, kind, count, base, big, boundBytes },
		row: row({
			id,
			what: `${what}, n8n's filesystem binary mode: peak RSS of n8n while the node ran`,
			ours: `${big.stoppedAt !== undefined ? '> ' : ''}${fmtMib(peak)} peak${big.ms !== undefined ? ` (${fmtS(big.ms)})` : ''}`,
			baseline: `bound ${fmtMib(boundBytes)} = base ${fmtMib(base.peak)} (one item) + 2 × ${concurrency} × ${frameBytes / 1e6} MB${previousFigure(previous, id)}`,
			ratio: peak / boundBytes,
			ratioText: `${big.stoppedAt !== undefined ? '> ' : ''}${(peak / boundBytes).toFixed(2)}×${big.stoppedAt !== undefined ? '' : ` (${(growthPerItem / MIB).toFixed(2)} MiB/item over base)`}`,
			goal: '≤ 1×',
			pass: peak <= boundBytes,
			how:
				`RSS of the n8n process from /proc every 50 ms (${big.samples} samples in the node's run), base: the same workflow with one item in its own n8n; ` +
				`the items hold a reference to one file read into n8n's binary store; ${kind === 'video' ? 'gateway: submits 0.2–0.6 s, done 1–3 s' : 'answers after 200 ms'}`,
			problem: base.problem ? `base run: ${base.problem}` : big.stoppedAt === undefined ? big.problem : undefined,
		}),
	};
}

/** Rows that run n8n's queue mode: they need redis-server, which run.js checks before any row runs. */
const QUEUE_ROWS = ['11f'];
const REDIS_MISSING = `redis-server is not installed, so the queue-mode rows (${QUEUE_ROWS.join(', ')}) cannot run (Debian: apt-get install redis-server; .ci/run does); --rows can leave them out`;

/** The rows of issue 19, and which of them run: id → measure(context). */
const SCALE_ROWS = {
	'11a': (c) => measureSlowVideos({ ...c, id: '11a', count: c.videos?.small ?? 200 }),
	'11b': (c) => measureSlowVideos({ ...c, id: '11b', count: c.videos?.large ?? 1000 }),
	'11c': (c) => measureFileMemory({ ...c, id: '11c', kind: 'video', count: c.videos?.large ?? 1000 }),
	'11d': (c) => measureFileMemory({ ...c, id: '11d', kind: 'chat', count: c.videos?.large ?? 1000 }),
	'11e': (c) => measureSlowVideos({ ...c, id: '11e', count: c.videos?.large ?? 1000, refuse: true }),
	'11f': (c) => measureSlowVideos({ ...c, id: '11f', count: c.videos?.small ?? 200, queue: QUEUE_ROWS.includes('11f') }),
};

/** Why the chosen rows cannot run on this machine, before the first of them (a full run takes 40 minutes); undefined when they can. */
function missingForRows(rows) {
	const queued = QUEUE_ROWS.some((id) => !rows || rows.has(id));
	return queued && !findRedisServer() ? REDIS_MISSING : undefined;
}

module.exports = { SCALE_ROWS, SCALE, missingForRows, writeFrame };
