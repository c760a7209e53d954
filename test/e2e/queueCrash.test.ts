/**
 * A worker killed in the middle of a Generate wait, in n8n's queue mode (issue 19): a throw-away
 * Redis, one main and TWO workers (scripts/n8n/queue.js), the execution started by a production
 * webhook through the main, and a loopback gateway whose video tasks never finish (they stay
 * IN_PROGRESS for the whole test).
 *
 * 1. Four videos are submitted; once the gateway has seen every submit and a status check of every
 *    task (so the worker holds them all and is waiting), the worker running the execution is killed
 *    with SIGKILL: nothing of n8n's shutdown runs.
 * 2. Checked: every task id the gateway created is in that worker's log in the line's MESSAGE (n8n's
 *    default log format prints the message only; what sits in the metadata is not printed); n8n's
 *    main ends the execution (status `error`, "failed to be processed too many times": the job
 *    stalled and n8n allows no stalled retry) and the other worker never runs it again; no video was
 *    submitted twice.
 * 3. What n8n keeps of the custom data: n8n 2.41.1 saves run data (and the custom data in it) only
 *    when a node or the execution ends, and the main writes the stalled execution anew with empty run
 *    data, so a worker killed inside the node leaves no custom data. The test pins that (a newer n8n
 *    that keeps it makes the test fail, and docs/running-at-scale.md must be updated then).
 * 4. A second execution of the same workflow is stopped through the main (the editor's Stop) in the
 *    same wait: the log names every task (created, and the stop line); the `customData` field stays
 *    empty in queue mode, and the run data holds the custom data only when the worker's write of the
 *    stopped execution lands after the main's (both outcomes happen).
 *
 * n8n 2.x only (the line the queue-mode recipe is written for; queueMode.test.ts covers 1.x's queue
 * mode). Fails, saying so, where `redis-server` is not installed.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { findRedisServer, n8nRest, startQueue, startRedis } from '../../scripts/n8n/queue';
import { defaultDir, ensureRuntime } from '../../scripts/n8n/runtime';
import { EXAMPLE_CREDENTIAL, gatewayCredential } from '../../scripts/n8n/workflowSet';
import { startGateway } from '../gateway';
import type { Gateway } from '../gateway';
import { E2E_LINE, E2E_N8N_MAJOR, E2E_N8N_VERSION } from './harness';
import { lineDir, selectedByOnly, selectedLines, TESTED_VERSIONS } from './paths';

type Json = Record<string, any>;
type Stack = Awaited<ReturnType<typeof startQueue>>;
type Rest = ReturnType<typeof n8nRest>;

const SUBMIT = '/v1/video/generations';
const VIDEOS = 4;
const NODE = 'Generate Videos';
/** The custom data key the node writes (progress.ts: `video_` and the node's name). */
const CUSTOM_DATA_KEY = 'video_Generate_Videos';
const OWNER = { email: 'owner@example.com', password: 'Queue-Crash-1', firstName: 'Queue', lastName: 'Crash' };
const log = (msg: string) => process.stderr.write(`[e2e queue-crash ${E2E_LINE}] ${msg}\n`);


const REDIS_SERVER = findRedisServer();
const LINE_RUNS = E2E_N8N_MAJOR >= 2 && selectedLines().includes(E2E_LINE) && selectedByOnly('queue-crash', 'queue');
const TITLE = `queue mode, a worker killed mid-wait (Redis, a main and two workers) on n8n ${E2E_N8N_VERSION}`;

// Without redis-server the suite fails, saying what to install: a skipped suite would read as PASS.
if (LINE_RUNS && !REDIS_SERVER) {
	describe(TITLE, () => {
		it('needs redis-server', () => {
			throw new Error('redis-server is not installed, so the queue-mode crash test cannot run: install it (Debian: apt-get install redis-server; .ci/run does), or leave it out with E2E_ONLY');
		});
	});
}

/** The workflow: a production webhook (answered at once), one item per video, Generate with a long Max Wait. */
function crashWorkflow(): Json {
	const node = (id: number, name: string, type: string, typeVersion: number, parameters: Json, extra: Json = {}) => ({
		id: `5f0c2a10-0004-4a00-8000-00000000000${id}`,
		name,
		type,
		typeVersion,
		position: [240 * (id - 1), 0],
		parameters,
		...extra,
	});
	return {
		id: 'mgwQueue0004',
		name: 'Queue mode: four videos that never finish (a worker is killed in the wait)',
		nodes: [
			node(1, 'Video Webhook', 'n8n-nodes-base.webhook', 2.1, { httpMethod: 'POST', path: 'mgw-queue-crash', responseMode: 'onReceived', options: {} }, { webhookId: '5f0c2a10-0004-4a00-8000-0000000000a1' }),
			node(2, 'One Item per Video', 'n8n-nodes-base.splitOut', 1, { fieldToSplitOut: 'body.videos', options: {} }),
			node(
				3,
				NODE,
				'n8n-nodes-model-gateway.gatewayVideoGenerate',
				1,
				{
					operation: 'generate',
					model: { __rl: true, mode: 'list', value: 'video-2-0-fast-260128' },
					prompt: '={{ $json.prompt }}',
					seconds: 5,
					size: '1280x720',
					options: { pollIntervalSeconds: 5, maxWaitSeconds: 600, downloadVideo: false },
				},
				{ credentials: { gatewayApi: { id: EXAMPLE_CREDENTIAL.id, name: EXAMPLE_CREDENTIAL.name } } },
			),
		],
		connections: {
			'Video Webhook': { main: [[{ node: 'One Item per Video', type: 'main', index: 0 }]] },
			'One Item per Video': { main: [[{ node: NODE, type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
		pinData: {},
	};
}

const until = async (what: string, timeoutMs: number, check: () => boolean | Promise<boolean>): Promise<void> => {
	const deadline = Date.now() + timeoutMs;
	while (!(await check())) {
		if (Date.now() > deadline) throw new Error(`waited ${timeoutMs / 1000} s for ${what}`);
		await new Promise((resolve) => setTimeout(resolve, 250));
	}
};
const workerStarted = (logText: string, id: string) => logText.split('\n').filter((line) => line.includes(`Worker started execution ${id} `)).length;
const readLog = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');

interface Run {
	executionId: string;
	prompts: string[];
	taskIds: string[];
	/** The worker that ran it: its name and its log at the end. */
	worker: string;
	workerLog: string;
	otherWorkerLog: string;
	execution: Json;
}

(LINE_RUNS && REDIS_SERVER ? describe : describe.skip)(TITLE, () => {
	jest.setTimeout(300_000);
	let gateway: Gateway;
	let redis: Awaited<ReturnType<typeof startRedis>> | undefined;
	let stack: Stack | undefined;
	let killed: Run;
	let stopped: Run;
	let endedAfterMs = 0;
	let submitsAtEnd = 0;

	const submits = () => gateway.requests.filter((r) => r.server === 'api' && r.method === 'POST' && r.path === SUBMIT);
	const checkedIds = () => new Set(gateway.requests.filter((r) => r.server === 'api' && r.method === 'GET' && r.path.startsWith(`${SUBMIT}/`)).map((r) => r.path.slice(SUBMIT.length + 1)));

	/** POSTs the webhook (retrying the 404 of a webhook not registered yet) and waits until every task was submitted and checked once. */
	async function startRun(rest: Rest, label: string, known: Set<string>): Promise<{ executionId: string; prompts: string[]; taskIds: string[] }> {
		const prompts = Array.from({ length: VIDEOS }, (_, n) => `Queue crash test (${label}): video ${n + 1} of ${VIDEOS}, a tide pool at noon`);
		const before = new Set(gateway.taskIds());
		for (const deadline = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 250))) {
			const res = await fetch(`${stack!.main.url}/webhook/mgw-queue-crash`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({ videos: prompts.map((prompt) => ({ prompt })) }),
			});
			const text = await res.text();
			if (res.status === 200) break;
			if (res.status !== 404 || Date.now() > deadline) throw new Error(`webhook: HTTP ${res.status} ${text}`);
		}
		let executionId = '';
		await until('the execution', 30_000, async () => {
			const fresh = (await rest.executions('mgwQueue0004')).filter((e: Json) => !known.has(String(e.id)));
			executionId = fresh.length === 1 ? String(fresh[0].id) : '';
			return executionId !== '';
		});
		known.add(executionId);
		let taskIds: string[] = [];
		await until(`${VIDEOS} submits and a check of each task`, 60_000, () => {
			taskIds = gateway.taskIds().filter((id) => !before.has(id));
			const checked = checkedIds();
			return taskIds.length === VIDEOS && taskIds.every((id) => checked.has(id));
		});
		return { executionId, prompts, taskIds };
	}

	function runningWorker(executionId: string) {
		const running = stack!.workers.filter((worker) => workerStarted(readLog(worker.logFile), executionId) > 0);
		if (running.length !== 1) throw new Error(`execution ${executionId} started on ${running.length} workers`);
		return running[0];
	}

	beforeAll(async () => {
		const version = (TESTED_VERSIONS as Record<string, string>)[E2E_LINE];
		const runtime = await ensureRuntime({ version, dir: defaultDir(version), log });
		// The tasks stay IN_PROGRESS: 1,000 polls to finish, one every 5 s.
		gateway = await startGateway({ videoPollsToFinish: 1000 });
		redis = await startRedis({ bin: REDIS_SERVER!, log });
		const workflow = crashWorkflow();
		stack = await startQueue({
			runtime,
			redis,
			userFolder: path.join(lineDir(E2E_LINE), 'queue-crash'),
			owner: OWNER,
			label: 'crash',
			prefix: `mgw-${crypto.randomBytes(4).toString('hex')}`,
			// n8n 2.x's default in queue mode, written out as the recipe says.
			binaryDataMode: 'database',
			gracefulShutdownSeconds: 960, // the recipe's value (nothing runs when the stack stops)
			workers: 2,
			env: {
				N8N_WORKFLOW_PUBLICATION_OUTBOX_POLL_INTERVAL_MS: '500',
				// n8n notices a dead worker when its job's lock runs out (default 60 s, renewed every
				// 10 s) at the other workers' next stalled-job check (default every 30 s): shortened
				// here so the test sees it within seconds. The main then ends the execution.
				QUEUE_WORKER_LOCK_DURATION: '10000',
				QUEUE_WORKER_LOCK_RENEW_TIME: '2000',
				QUEUE_WORKER_STALLED_INTERVAL: '5000',
			},
			credentials: [gatewayCredential(EXAMPLE_CREDENTIAL, { apiKey: `sk-e2e-crash-${crypto.randomBytes(8).toString('hex')}`, baseUrl: gateway.baseUrl, customHeaders: undefined })],
			workflows: [workflow],
			log,
		});
		const rest = n8nRest(stack.main, runtime);
		await rest.activate(workflow.id);
		const known = new Set<string>();

		// 1. Killed in the wait.
		const first = await startRun(rest, 'killed', known);
		const victim = runningWorker(first.executionId);
		const other = stack.workers.find((worker) => worker !== victim)!;
		log(`execution ${first.executionId} runs on ${victim.name}: all ${VIDEOS} tasks submitted and checked; SIGKILL`);
		const killedAt = Date.now();
		await victim.kill();
		await until(`execution ${first.executionId} ended by n8n`, 120_000, async () => {
			const { status } = await rest.call('GET', `/executions/${first.executionId}`);
			return !['new', 'running', 'waiting', 'unknown'].includes(status);
		});
		endedAfterMs = Date.now() - killedAt;
		log(`execution ${first.executionId} ended ${Math.round(endedAfterMs / 1000)} s after the kill`);
		// Time for a re-run, if n8n made one (it must not): a few stalled checks and recovery rounds.
		await new Promise((resolve) => setTimeout(resolve, 15_000));
		killed = {
			...first,
			worker: victim.name,
			workerLog: readLog(victim.logFile),
			otherWorkerLog: readLog(other.logFile),
			execution: await rest.execution(first.executionId),
		};

		// 2. Stopped through the main in the same wait (on the worker still alive).
		const second = await startRun(rest, 'stopped', known);
		const runner = runningWorker(second.executionId);
		await rest.call('POST', `/executions/${second.executionId}/stop`);
		const execution = await rest.finished(second.executionId, 60_000);
		stopped = { ...second, worker: runner.name, workerLog: readLog(runner.logFile), otherWorkerLog: readLog(victim.logFile), execution };
		submitsAtEnd = submits().length;
		// For whoever reads a failure: both executions as the main's REST API returned them.
		fs.writeFileSync(path.join(lineDir(E2E_LINE), 'queue-crash', 'executions.json'), JSON.stringify({ killed, stopped }, null, 2));
	});

	afterAll(async () => {
		await stack?.stop();
		await redis?.stop();
		await gateway?.close();
	});

	const idLines = (logText: string) => logText.split('\n').filter((line) => line.includes('Model Gateway: video task created'));

	describe('killed with SIGKILL in the wait', () => {
		it('ran on one of the two workers, which logged every task id in the message text', () => {
			expect(killed.taskIds).toHaveLength(VIDEOS);
			const lines = idLines(killed.workerLog);
			for (const id of killed.taskIds) {
				// The printed line itself (n8n's default format: the message only, no metadata).
				expect(lines.filter((line) => line.includes(id))).toHaveLength(1);
			}
			expect(lines.filter((line) => line.includes(`execution ${killed.executionId}`))).toHaveLength(VIDEOS);
		});

		it('is ended by n8n (error: processed too many times), and the other worker never ran it again', () => {
			// n8n's main ends a job that stalled (maxStalledCount 0) as an error and writes its run
			// data anew, empty: what the killed worker had done is not in the execution.
			expect(killed.execution.status).toBe('error');
			expect(killed.execution.data.resultData.error.message).toMatch(/failed to be processed too many times/);
			expect(killed.execution.data.resultData.runData).toEqual({});
			expect(workerStarted(killed.workerLog, killed.executionId)).toBe(1);
			expect(workerStarted(killed.otherWorkerLog, killed.executionId)).toBe(0);
			expect(endedAfterMs).toBeLessThan(120_000);
		});

		it('submitted each video once, also after n8n ended the execution', () => {
			for (const prompt of killed.prompts) expect(submits().filter((r) => JSON.parse(r.rawBody).prompt === prompt)).toHaveLength(1);
			expect(submitsAtEnd).toBe(2 * VIDEOS);
			expect(submits()).toHaveLength(2 * VIDEOS);
		});

		it('keeps no custom data: n8n saves it only when the node ends (docs/running-at-scale.md says so)', () => {
			expect(killed.execution.customData).toEqual({});
			expect(killed.execution.data.resultData.metadata).toBeUndefined();
		});
	});

	describe('stopped through the main in the wait', () => {
		it('is canceled; customData stays empty, and the run data holds every task id when it kept the custom data', () => {
			expect(stopped.execution.status).toBe('canceled');
			// In queue mode n8n 2.41.1 writes the custom data table only from the worker's
			// job-finished message, which a stopped job never sends. The run data is written by both
			// the worker (with the node's custom data in resultData.metadata) and the main (empty, "The
			// execution was cancelled manually"), whichever lands last: both were seen here. A newer
			// n8n that fills customData makes this fail: update docs/running-at-scale.md then.
			expect(stopped.execution.customData).toEqual({});
			const metadata = stopped.execution.data.resultData.metadata;
			if (metadata !== undefined) {
				const value = String(metadata[CUSTOM_DATA_KEY] ?? '');
				expect(value).toMatch(new RegExp(`^0/${VIDEOS} done, ${VIDEOS} waiting: `));
				for (const id of stopped.taskIds) expect(value).toContain(id);
			} else {
				expect(stopped.execution.data.resultData.runData).toEqual({});
			}
		});

		it('logged every task id in the message text: when created, and in the stop line', () => {
			const lines = idLines(stopped.workerLog);
			for (const id of stopped.taskIds) expect(lines.filter((line) => line.includes(id))).toHaveLength(1);
			const stopLine = stopped.workerLog.split('\n').find((line) => line.includes(`video run stopped while ${VIDEOS} tasks may still be running (execution ${stopped.executionId},`));
			for (const id of stopped.taskIds) expect(stopLine).toContain(id);
		});

		it('submitted each of its videos once', () => {
			for (const prompt of stopped.prompts) expect(submits().filter((r) => JSON.parse(r.rawBody).prompt === prompt)).toHaveLength(1);
		});
	});
});
