#!/usr/bin/env node
// Runs workflows in a real, headless n8n that loads our built package as a community package.
//
//   const { ensureRuntime } = require('./runtime');
//   const results = await runWorkflows({ runtime: await ensureRuntime(), packageDir, credentials, workflows });
//
// One n8n process runs the whole batch (`n8n execute-batch`): n8n's start-up costs seconds, the
// workflows themselves milliseconds. Per-workflow results come from result-hook.js (an n8n
// external hook), which sees the full run data of failed executions too.
//
// CLI: node scripts/n8n/headless.js [--package DIR] [--credentials creds.json] wf1.json [wf2.json…]
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const net = require('node:net');
const http = require('node:http');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawn } = require('node:child_process');

const { spawnLogged, stepFailed, tail } = require('./proc');

const HOOK_FILE = path.join(__dirname, 'result-hook.js');
const PACKAGE_NAME = 'n8n-nodes-model-gateway';
const REPO_ROOT = path.resolve(__dirname, '..', '..');
const USER_FOLDER_MARK = '.mgw-n8n-user-folder';

const defaultLog = (msg) => process.stderr.write(`[n8n] ${msg}\n`);

function freePort() {
	return new Promise((resolve, reject) => {
		const server = net.createServer();
		server.unref();
		server.on('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address();
			server.close(() => resolve(port));
		});
	});
}

function copyDir(from, to) {
	fs.cpSync(from, to, { recursive: true, dereference: true });
}

/**
 * Makes a fresh n8n user folder with our package installed as a community package:
 * <userFolder>/.n8n/nodes/node_modules/n8n-nodes-model-gateway (package.json + dist, a copy so a
 * rebuild during a run cannot pull files away) and, beside it, a link to n8n's own n8n-workflow
 * (our peer dependency, which must be the very instance n8n uses).
 * @returns {{ userFolder: string, n8nFolder: string, packageCopy: string }}
 */
function prepareUserFolder({ runtime, packageDir = REPO_ROOT, userFolder } = {}) {
	userFolder = path.resolve(userFolder || fs.mkdtempSync(path.join(os.tmpdir(), 'n8n-mgw-')));
	// Wiped for a fresh start, but only if it is empty or one this function made.
	if (fs.existsSync(userFolder) && fs.readdirSync(userFolder).length && !fs.existsSync(path.join(userFolder, USER_FOLDER_MARK))) {
		throw new Error(`${userFolder} is not empty and is not an n8n user folder made by ${__filename}; refusing to wipe it`);
	}
	fs.rmSync(userFolder, { recursive: true, force: true });
	fs.mkdirSync(userFolder, { recursive: true });
	fs.writeFileSync(path.join(userFolder, USER_FOLDER_MARK), 'made by scripts/n8n/headless.js; wiped on the next run\n');
	const n8nFolder = path.join(userFolder, '.n8n');
	const modules = path.join(n8nFolder, 'nodes', 'node_modules');
	const packageCopy = path.join(modules, PACKAGE_NAME);
	const manifest = path.join(packageDir, 'package.json');
	const dist = path.join(packageDir, 'dist');
	if (!fs.existsSync(dist)) throw new Error(`${dist} is missing: run \`npm run build\` first`);
	// n8n drops the whole package (every node "Unrecognized") when one listed file is missing.
	const { n8n = {} } = JSON.parse(fs.readFileSync(manifest, 'utf8'));
	const missing = [...(n8n.nodes || []), ...(n8n.credentials || [])].filter((f) => !fs.existsSync(path.join(packageDir, f)));
	if (missing.length) {
		throw new Error(`package.json lists files that are not built: ${missing.join(', ')}; run \`npm run build\``);
	}
	fs.mkdirSync(packageCopy, { recursive: true });
	fs.copyFileSync(manifest, path.join(packageCopy, 'package.json'));
	copyDir(dist, path.join(packageCopy, 'dist'));
	fs.symlinkSync(runtime.n8nWorkflowDir, path.join(modules, 'n8n-workflow'), 'dir');
	// n8n's own manifest for the folder it installs community packages into.
	fs.writeFileSync(
		path.join(n8nFolder, 'nodes', 'package.json'),
		JSON.stringify({ name: 'installed-nodes', private: true, dependencies: {} }, null, 2),
	);
	// A key of our own, so every n8n command run on this folder decrypts the same credentials.
	fs.writeFileSync(
		path.join(n8nFolder, 'config'),
		JSON.stringify({ encryptionKey: crypto.randomBytes(24).toString('hex') }, null, 2),
		{ mode: 0o600 },
	);
	return { userFolder, n8nFolder, packageCopy };
}

/** A user folder prepareUserFolder made earlier, used as it is (for a restart or a second process). */
function reuseUserFolder(userFolder) {
	userFolder = path.resolve(userFolder || '');
	if (!fs.existsSync(path.join(userFolder, USER_FOLDER_MARK))) {
		throw new Error(`${userFolder} is not an n8n user folder made by ${__filename}`);
	}
	return { userFolder, n8nFolder: path.join(userFolder, '.n8n'), packageCopy: path.join(userFolder, '.n8n', 'nodes', 'node_modules', PACKAGE_NAME) };
}

/**
 * The environment of every n8n command on `userFolder`; ports are per run so runs can overlap.
 * `runtime.env` (what this n8n version needs, from runtime.js) comes before the caller's `env`.
 */
function n8nEnv({ userFolder, ports, runtime = {}, env = {} }) {
	const base = { ...process.env };
	// What a parent test runner sets does not belong in n8n: under jest NODE_ENV is "test", which
	// makes n8n refuse to load nodes and silence its log; NODE_OPTIONS may carry loader hooks.
	for (const name of ['NODE_ENV', 'NODE_OPTIONS', 'JEST_WORKER_ID']) delete base[name];
	return {
		...base,
		N8N_USER_FOLDER: userFolder,
		N8N_PORT: String(ports.n8n),
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		N8N_RUNNERS_BROKER_PORT: String(ports.broker),
		N8N_RUNNERS_BROKER_LISTEN_ADDRESS: '127.0.0.1',
		N8N_LOG_LEVEL: 'info', // execute-batch reports at info level
		N8N_LOG_OUTPUT: 'console',
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_COMMUNITY_PACKAGES_ENABLED: 'true',
		N8N_REINSTALL_MISSING_PACKAGES: 'false', // never reach for the npm registry
		N8N_PYTHON_ENABLED: 'false', // no Python here (n8n still logs once that its runner is missing)
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
		N8N_SECURE_COOKIE: 'false',
		DB_TYPE: 'sqlite',
		EXTERNAL_HOOK_FILES: HOOK_FILE,
		...runtime.env,
		...env,
	};
}

// Runs one n8n CLI command with n8n's Node; resolves with { code, signal, ms, logFile } whatever the exit.
function runN8n(runtime, args, { env, logFile, log = defaultLog, heartbeat, killWhen, deadlineMs }) {
	return spawnLogged(runtime.nodeBin, [runtime.n8nBin, ...args], {
		cwd: env.N8N_USER_FOLDER,
		env,
		logFile,
		log,
		onTick: heartbeat && ((s) => log(`${heartbeat()} (${s} s)`)),
		killWhen,
		deadlineMs,
	});
}

async function runChecked(runtime, args, opts) {
	const res = await runN8n(runtime, args, opts);
	if (res.code !== 0) throw stepFailed(`n8n ${args[0]}`, res);
	return res;
}

/** Imports credentials (plain `data`; n8n encrypts it with the folder's key) and workflows. */
async function importData({ runtime, env, credentials = [], workflows = [], logFile, log }) {
	const dir = path.join(env.N8N_USER_FOLDER, 'import');
	fs.mkdirSync(dir, { recursive: true });
	if (credentials.length) {
		const file = path.join(dir, 'credentials.json');
		fs.writeFileSync(file, JSON.stringify(credentials, null, 2), { mode: 0o600 });
		try {
			await runChecked(runtime, ['import:credentials', `--input=${file}`], { env, logFile, log });
		} finally {
			// Keys in plain text stay no longer than the import: n8n keeps them encrypted.
			fs.rmSync(file, { force: true });
		}
	}
	if (workflows.length) {
		const file = path.join(dir, 'workflows.json');
		fs.writeFileSync(file, JSON.stringify(workflows, null, 2));
		await runChecked(runtime, ['import:workflow', `--input=${file}`], { env, logFile, log });
	}
}

function checkWorkflows(workflows) {
	const seen = new Set();
	for (const wf of workflows) {
		// execute-batch silently drops ids without a digit.
		if (typeof wf.id !== 'string' || !/\d/.test(wf.id)) {
			throw new Error(`workflow "${wf.name}" needs an "id" string containing a digit (got ${JSON.stringify(wf.id)})`);
		}
		if (seen.has(wf.id)) throw new Error(`two workflows share the id ${wf.id}`);
		seen.add(wf.id);
	}
}

// One node's run, as tests read it: the first output's items, error and timing. `outputs` (all
// outputs, e.g. IF's true/false or an error output) only when the node has more than one, so the
// results file does not carry every item (and its base64) twice.
function nodeRun(task, nodeName) {
	const outputs = task.outputs || [];
	const run = {
		items: outputs[0] || [],
		status: task.executionStatus,
		executionTimeMs: task.executionTime,
		startTime: task.startTime,
	};
	if (outputs.length > 1) run.outputs = outputs;
	// Sub-nodes (chat models, nodes in tool form): what they gave and got on their AI connection.
	if (task.connectionOutputs) run.connectionOutputs = task.connectionOutputs;
	if (task.inputOverride) run.inputOverride = task.inputOverride;
	if (task.error) run.error = { ...task.error, node: task.error.node || nodeName };
	return run;
}

function toResult(record, wf, summaryError) {
	if (!record) {
		return {
			id: wf.id,
			name: wf.name,
			status: 'error',
			error: { message: summaryError || 'n8n recorded no execution for this workflow' },
			nodes: {},
		};
	}
	const nodes = {};
	for (const [name, tasks] of Object.entries(record.runData || {})) {
		// A node that ran more than once (loops) shows its last run; all runs are under `runs`.
		nodes[name] = nodeRun(tasks[tasks.length - 1], name);
		if (tasks.length > 1) nodes[name].runs = tasks.map((t) => nodeRun(t, name));
	}
	const ok = record.status === 'success' && !record.error;
	const result = {
		id: wf.id,
		name: record.workflowName || wf.name,
		status: ok ? 'success' : 'error',
		n8nStatus: record.status,
		executionId: record.executionId,
		startedAt: record.startedAt,
		stoppedAt: record.stoppedAt,
		durationMs: Date.parse(record.stoppedAt) - Date.parse(record.startedAt),
		lastNodeExecuted: record.lastNodeExecuted,
		nodes,
	};
	if (!ok) {
		result.error = record.error || { message: summaryError || `execution ended with status ${record.status}` };
		if (!result.error.node && record.lastNodeExecuted) result.error.node = record.lastNodeExecuted;
	}
	return result;
}

// When n8n could not load our package every workflow using it fails with a bare "Unrecognized
// node type"; the reason is only in n8n's log, so it is copied next to those errors.
function explainUnloadedPackage(results, logFile, log) {
	const lines = fs.readFileSync(logFile, 'utf8').split('\n');
	const at = lines.findIndex((l) => l.includes(`Failed to load package "${PACKAGE_NAME}"`));
	if (at < 0) return;
	const reason = lines.slice(at, at + 2).join(' ').trim();
	log(`n8n did not load our package: ${reason}`);
	for (const result of Object.values(results)) {
		if (result.error?.message?.includes(`Unrecognized node type: ${PACKAGE_NAME}.`)) result.error.description = reason;
	}
}

// The hook writes one file per execution; sub-workflow executions (mode "integrated") are kept
// apart from the batch's own ("cli") execution of each workflow.
function readRecords(dir) {
	const byWorkflow = {};
	for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.json'))) {
		const record = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
		(byWorkflow[record.workflowId] ||= []).push(record);
	}
	return byWorkflow;
}

/**
 * Runs `workflows` (full workflow JSON, each with an `id` containing a digit) in one n8n process.
 * @param {object} o
 * @param {object} o.runtime       from ensureRuntime()
 * @param {string} [o.packageDir]  folder with package.json + dist/ (default: this repository)
 * @param {Array<{id,name,type,data}>} [o.credentials]
 * @param {object[]} o.workflows
 * @param {object} [o.env]         extra environment for n8n (e.g. N8N_DEFAULT_BINARY_DATA_MODE)
 * @param {string} [o.userFolder]  default: a new temporary folder (removed afterwards unless keepUserFolder)
 * @param {number} [o.concurrency] workflows running side by side (default: all of them, at most 32)
 * @param {number} [o.timeoutMs]   the whole batch (default 20 min); n8n itself gives each workflow 3 min
 * @returns {Promise<Record<string, object>>} results by workflow id; also `.meta` (non-enumerable)
 */
async function runWorkflows({
	runtime,
	packageDir = REPO_ROOT,
	credentials = [],
	workflows,
	env = {},
	userFolder,
	concurrency,
	timeoutMs = 20 * 60 * 1000,
	keepUserFolder = Boolean(userFolder) || process.env.MGW_N8N_KEEP === '1',
	log = defaultLog,
}) {
	checkWorkflows(workflows);
	const started = Date.now();
	const prepared = prepareUserFolder({ runtime, packageDir, userFolder });
	const ports = { n8n: await freePort(), broker: await freePort() };
	const resultsDir = path.join(prepared.userFolder, 'results');
	fs.mkdirSync(resultsDir);
	const fullEnv = n8nEnv({ userFolder: prepared.userFolder, ports, runtime, env: { MGW_N8N_RESULTS_DIR: resultsDir, ...env } });
	const logFile = path.join(prepared.userFolder, 'n8n.log');
	try {
		log(`importing ${credentials.length} credential(s) and ${workflows.length} workflow(s)`);
		await importData({ runtime, env: fullEnv, credentials, workflows, logFile, log });
		const idsFile = path.join(prepared.userFolder, 'import', 'ids.txt');
		fs.writeFileSync(idsFile, workflows.map((w) => w.id).join(','));
		const summaryFile = path.join(prepared.userFolder, 'batch-summary.json');
		const width = concurrency || Math.min(Math.max(workflows.length, 1), 32);
		log(`running ${workflows.length} workflow(s), ${width} at a time`);
		const batchStarted = Date.now();
		const done = () => fs.readdirSync(resultsDir).filter((f) => f.endsWith('.json')).length;
		const run = runN8n(
			runtime,
			[
				'execute-batch',
				`--ids=${idsFile}`,
				`--concurrency=${width}`,
				'--retries=0', // the default (1) would run every failing workflow twice
				`--output=${summaryFile}`,
			],
			{
				env: fullEnv,
				logFile,
				log,
				heartbeat: () => `n8n execute-batch: ${done()}/${workflows.length} executions recorded`,
				killWhen: () => fs.existsSync(summaryFile),
				deadlineMs: timeoutMs,
			},
		);
		const res = await run;
		// n8n 2.x may segfault while shutting down, after the summary is written: the summary file,
		// not the exit status, says whether the batch finished (exit 1 only means "some failed").
		if (!fs.existsSync(summaryFile)) {
			throw stepFailed('n8n execute-batch (no summary written)', res, 60);
		}
		const summary = JSON.parse(fs.readFileSync(summaryFile, 'utf8'));
		const summaryErrors = {};
		for (const e of [...summary.summary.errors, ...summary.summary.warnings]) summaryErrors[e.workflowId] = e.error;
		const records = readRecords(resultsDir);
		const results = {};
		for (const wf of workflows) {
			const own = (records[wf.id] || []).filter((r) => r.mode === 'cli');
			results[wf.id] = toResult(own[own.length - 1], wf, summaryErrors[wf.id]);
		}
		explainUnloadedPackage(results, logFile, log);
		Object.defineProperty(results, 'meta', {
			enumerable: false,
			value: {
				n8nVersion: runtime.version,
				userFolder: keepUserFolder ? prepared.userFolder : undefined,
				batchMs: res.ms,
				totalMs: Date.now() - started,
				setupMs: batchStarted - started,
				exit: { code: res.code, signal: res.signal },
				summary: summary.summary,
			},
		});
		log(
			`batch done in ${Math.round(res.ms / 100) / 10} s (setup ${Math.round((batchStarted - started) / 100) / 10} s): ` +
				`${summary.summary.successfulExecutions} ok, ${summary.summary.failedExecutions} failed, ` +
				`${summary.summary.warningExecutions} warnings` +
				(res.code === 0 || res.code === 1 ? '' : ` (n8n exited with ${res.signal || res.code} after the summary)`),
		);
		return results;
	} finally {
		if (!keepUserFolder) fs.rmSync(prepared.userFolder, { recursive: true, force: true });
	}
}

function waitForHttp(url, timeoutMs, isAlive) {
	const deadline = Date.now() + timeoutMs;
	return new Promise((resolve, reject) => {
		const attempt = () => {
			if (!isAlive()) return reject(new Error('n8n exited while starting'));
			if (Date.now() > deadline) return reject(new Error(`n8n did not answer ${url} within ${timeoutMs / 1000} s`));
			http
				.get(url, (res) => {
					res.resume();
					if (res.statusCode === 200) resolve();
					else setTimeout(attempt, 500);
				})
				.on('error', () => setTimeout(attempt, 500));
		};
		attempt();
	});
}

/**
 * A long-running n8n command (`start`, `worker`) with its output in `logFile`: whether it is
 * still alive, when it exits, and a stop that sends SIGTERM and SIGKILL after `graceMs`.
 */
function spawnN8n(runtime, args, { cwd, env, logFile }) {
	const out = fs.openSync(logFile, 'a');
	const child = spawn(runtime.nodeBin, [runtime.n8nBin, ...args], { cwd, env, stdio: ['ignore', out, out] });
	fs.closeSync(out);
	const n8n = { child, alive: true };
	n8n.exited = new Promise((resolve) =>
		child.on('exit', (code, signal) => {
			n8n.alive = false;
			resolve({ code, signal });
		}),
	);
	n8n.stop = async (graceMs) => {
		if (!n8n.alive) return;
		child.kill('SIGTERM');
		const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
		await n8n.exited;
		clearTimeout(force);
	};
	return n8n;
}

/**
 * Starts n8n as a server (editor UI + REST) on 127.0.0.1, for `npm run dev`-style use and
 * screenshots. Credentials and workflows are imported first. `owner` ({ email, firstName, lastName,
 * password }) creates the instance owner, so the UI opens signed in with the returned `cookie`.
 * `existingUserFolder: true` restarts on a folder an earlier call made (nothing wiped; `owner`
 * signs in). `logFile`: where n8n's output goes (default <userFolder>/n8n.log, appended).
 * @returns {Promise<{ url: string, cookie?: string, userFolder: string, logFile: string, exited: Promise<object>, stop(): Promise<void> }>}
 */
async function startServer({
	runtime,
	packageDir = REPO_ROOT,
	credentials = [],
	workflows = [],
	env = {},
	userFolder,
	port,
	owner,
	existingUserFolder = false,
	logFile,
	log = defaultLog,
}) {
	// existingUserFolder: a restart on a folder an earlier startServer made (its database, key,
	// package and owner kept); `owner` then signs in instead of setting the owner up.
	const prepared = existingUserFolder ? reuseUserFolder(userFolder) : prepareUserFolder({ runtime, packageDir, userFolder });
	const ports = { n8n: port || (await freePort()), broker: await freePort() };
	const fullEnv = n8nEnv({ userFolder: prepared.userFolder, ports, runtime, env });
	delete fullEnv.EXTERNAL_HOOK_FILES;
	logFile = logFile || path.join(prepared.userFolder, 'n8n.log');
	await importData({ runtime, env: fullEnv, credentials, workflows, logFile, log });
	const n8n = spawnN8n(runtime, ['start'], { cwd: prepared.userFolder, env: fullEnv, logFile });
	const { child, exited } = n8n;
	const alive = () => n8n.alive;
	const url = `http://127.0.0.1:${ports.n8n}`;
	try {
		// /healthz answers 200 while n8n still serves "starting up"; readiness waits for the real app.
		await waitForHttp(`${url}/healthz/readiness`, 120000, alive);
	} catch (err) {
		child.kill('SIGKILL');
		throw new Error(`${err.message}\n--- ${logFile} ---\n${tail(logFile)}`);
	}
	log(`n8n ${runtime.version} listening on ${url} (user folder ${prepared.userFolder})`);
	// A fresh n8n shows the owner sign-up first; with `owner` it is done, and `cookie` signs in.
	let cookie;
	if (owner) {
		// n8n 1.x reports ready once its database is migrated, before the REST routes exist: a 404
		// there means "not yet".
		const [route, body, what] = existingUserFolder
			? ['/rest/login', { emailOrLdapLoginId: owner.email, password: owner.password }, 'sign-in']
			: ['/rest/owner/setup', owner, 'owner setup'];
		const deadline = Date.now() + 60000;
		let res;
		for (;;) {
			res = await fetch(`${url}${route}`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify(body),
			});
			if (res.status !== 404 || Date.now() > deadline || !alive()) break;
			await res.arrayBuffer();
			await new Promise((resolve) => setTimeout(resolve, 500));
		}
		if (!res.ok) {
			child.kill('SIGKILL');
			throw new Error(`${what} failed: HTTP ${res.status} ${await res.text()}`);
		}
		cookie = (res.headers.get('set-cookie') || '').split(';')[0];
	}
	return {
		url,
		cookie,
		userFolder: prepared.userFolder,
		logFile,
		/** Resolves with { code, signal } when n8n exits, whether stopped or not. */
		exited,
		stop: async () => await n8n.stop(10000),
	};
}

/**
 * Starts `n8n worker` (queue mode) beside a server that startServer started: on the same user
 * folder, so it shares the database, the encryption key and our installed package. `env` must
 * carry the server's queue settings (EXECUTIONS_MODE=queue, QUEUE_BULL_REDIS_*, the binary data
 * mode). The worker gets its own task-runner broker port and health port (the defaults would clash
 * with the server's) and counts as ready when its health server answers /healthz/readiness.
 * @returns {Promise<{ healthUrl: string, logFile: string, exited: Promise<object>, stop(): Promise<void> }>}
 */
async function startWorker({ runtime, userFolder, env = {}, concurrency = 10, logFile, log = defaultLog }) {
	const prepared = reuseUserFolder(userFolder);
	const ports = { n8n: await freePort(), broker: await freePort(), health: await freePort() };
	const fullEnv = n8nEnv({
		userFolder: prepared.userFolder,
		ports,
		runtime,
		env: { QUEUE_HEALTH_CHECK_ACTIVE: 'true', QUEUE_HEALTH_CHECK_PORT: String(ports.health), N8N_WORKER_SERVER_ADDRESS: '127.0.0.1', ...env },
	});
	delete fullEnv.EXTERNAL_HOOK_FILES;
	logFile = logFile || path.join(prepared.userFolder, 'n8n-worker.log');
	const n8n = spawnN8n(runtime, ['worker', `--concurrency=${concurrency}`], { cwd: prepared.userFolder, env: fullEnv, logFile });
	const { child, exited } = n8n;
	const alive = () => n8n.alive;
	const healthUrl = `http://127.0.0.1:${ports.health}/healthz`;
	try {
		await waitForHttp(`${healthUrl}/readiness`, 120000, alive);
	} catch (err) {
		child.kill('SIGKILL');
		throw new Error(`n8n worker: ${err.message}\n--- ${logFile} ---\n${tail(logFile)}`);
	}
	log(`n8n ${runtime.version} worker ready (health ${healthUrl}, log ${logFile})`);
	return {
		healthUrl,
		logFile,
		exited,
		pid: child.pid,
		/** SIGTERM: n8n lets running jobs finish for N8N_GRACEFUL_SHUTDOWN_TIMEOUT (30 s) first. */
		stop: async () => await n8n.stop(40000),
		/** SIGKILL at once, as a crashed or OOM-killed worker: nothing of n8n's shutdown runs. */
		kill: async () => {
			if (n8n.alive) child.kill('SIGKILL');
			await exited;
		},
	};
}

module.exports = { runWorkflows, prepareUserFolder, importData, n8nEnv, startServer, startWorker, freePort };

if (require.main === module) {
	(async () => {
		const args = process.argv.slice(2);
		const take = (flag) => {
			const i = args.indexOf(flag);
			return i >= 0 ? args.splice(i, 2)[1] : undefined;
		};
		const packageDir = take('--package');
		const credFile = take('--credentials');
		const { ensureRuntime } = require('./runtime');
		const runtime = await ensureRuntime();
		const workflows = args.map((f) => JSON.parse(fs.readFileSync(f, 'utf8')));
		const credentials = credFile ? JSON.parse(fs.readFileSync(credFile, 'utf8')) : [];
		const results = await runWorkflows({ runtime, packageDir, credentials, workflows });
		process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
	})().catch((err) => {
		process.stderr.write(`${err.stack || err}\n`);
		process.exit(1);
	});
}
