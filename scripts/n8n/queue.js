// n8n in queue mode, for the queue-mode e2e test (test/e2e/queueMode.test.ts): a throw-away
// Redis (Debian's `redis-server`, loopback only, nothing saved to disk), one main (`n8n start`)
// and one or more workers (`n8n worker`, each with its own task-runner broker and health port) on
// the same user folder, and the few REST calls the tests and the bench make through the main.
//
//   const redis = await startRedis();
//   const stack = await startQueue({ runtime, redis, binaryDataMode: 'filesystem', owner, credentials, workflows });
//   const rest = n8nRest(stack.main, runtime);
//   await rest.activate('mgwQueue0001');
//   … POST stack.main.url + '/webhook/<path>' …
//   await stack.stop(); await redis.stop();
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const net = require('node:net');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { createRequire } = require('node:module');

const { freePort, startServer, startWorker } = require('./headless');
const { tail } = require('./proc');

const defaultLog = (msg) => process.stderr.write(`[queue] ${msg}\n`);

/** The `redis-server` binary on PATH (or Debian's /usr/bin), or null. */
function findRedisServer(env = process.env) {
	const dirs = [...(env.PATH || '').split(path.delimiter).filter(Boolean), '/usr/bin', '/usr/sbin', '/usr/local/bin'];
	for (const dir of dirs) {
		const file = path.join(dir, 'redis-server');
		try {
			fs.accessSync(file, fs.constants.X_OK);
			return file;
		} catch {
			// not here
		}
	}
	return null;
}

// One PING over a fresh connection: resolves true on +PONG.
function redisPing(port) {
	return new Promise((resolve) => {
		const socket = net.connect({ host: '127.0.0.1', port });
		const done = (ok) => {
			socket.destroy();
			resolve(ok);
		};
		socket.setTimeout(1000, () => done(false));
		socket.on('error', () => done(false));
		socket.on('connect', () => socket.write('PING\r\n'));
		socket.on('data', (chunk) => done(chunk.toString().startsWith('+PONG')));
	});
}

/**
 * Starts `redis-server` on a free loopback port, with no persistence (no RDB snapshots, no AOF),
 * in a temporary folder removed by stop().
 * @returns {Promise<{ host: string, port: number, stop(): Promise<void> }>}
 */
async function startRedis({ bin = findRedisServer(), log = defaultLog } = {}) {
	if (!bin) throw new Error('redis-server is not installed (Debian: apt-get install redis-server)');
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mgw-redis-'));
	const port = await freePort();
	const logFile = path.join(dir, 'redis.log');
	const out = fs.openSync(logFile, 'a');
	const child = spawn(
		bin,
		['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', '--loglevel', 'warning'],
		{ cwd: dir, stdio: ['ignore', out, out] },
	);
	fs.closeSync(out);
	let alive = true;
	const exited = new Promise((resolve) =>
		child.on('exit', (code, signal) => {
			alive = false;
			resolve({ code, signal });
		}),
	);
	child.on('error', () => {
		alive = false;
	});
	const deadline = Date.now() + 15000;
	while (!(await redisPing(port))) {
		if (!alive || Date.now() > deadline) {
			child.kill('SIGKILL');
			const why = `${bin} did not answer PING on 127.0.0.1:${port}\n${tail(logFile)}`;
			fs.rmSync(dir, { recursive: true, force: true });
			throw new Error(why);
		}
		await new Promise((resolve) => setTimeout(resolve, 100));
	}
	log(`redis-server on 127.0.0.1:${port} (no persistence)`);
	return {
		host: '127.0.0.1',
		port,
		async stop() {
			if (alive) {
				child.kill('SIGTERM');
				const force = setTimeout(() => child.kill('SIGKILL'), 5000);
				await exited;
				clearTimeout(force);
			}
			fs.rmSync(dir, { recursive: true, force: true });
		},
	};
}

/**
 * The environment main and worker share in queue mode. `prefix` keeps the Bull keys of one run
 * apart from another's on the same Redis; `binaryDataMode` is N8N_DEFAULT_BINARY_DATA_MODE
 * (n8n 2.x defaults to `database` in queue mode); `gracefulShutdownSeconds` is how long a stopped
 * process lets running executions finish (n8n's default: 30).
 */
function queueEnv({ redis, prefix = 'bull', binaryDataMode, gracefulShutdownSeconds }) {
	const env = {
		EXECUTIONS_MODE: 'queue',
		QUEUE_BULL_REDIS_HOST: redis.host,
		QUEUE_BULL_REDIS_PORT: String(redis.port),
		QUEUE_BULL_PREFIX: prefix,
	};
	if (binaryDataMode) env.N8N_DEFAULT_BINARY_DATA_MODE = binaryDataMode;
	if (gracefulShutdownSeconds !== undefined) env.N8N_GRACEFUL_SHUTDOWN_TIMEOUT = String(gracefulShutdownSeconds);
	return env;
}

/**
 * @typedef {{ name: string, healthUrl: string, logFile: string, pid: number, exited: Promise<object>, stop(): Promise<void>, kill(): Promise<void> }} QueueWorker
 */

/**
 * One main and `workers` workers (default 1) in queue mode on `userFolder` (made fresh, with our
 * package, the credentials and workflows imported, unless `existingUserFolder`: a restart). Their
 * logs are <userFolder>/<label>-main.log, <label>-worker.log (the first worker) and
 * <label>-worker-2.log … (the others). `worker` is the first of `workers`.
 * @param {object} o
 * @param {object} o.runtime            from ensureRuntime()
 * @param {{ host: string, port: number }} o.redis
 * @param {string} o.userFolder
 * @param {boolean} [o.existingUserFolder]
 * @param {string} [o.label]            names the log files
 * @param {string} [o.prefix]           QUEUE_BULL_PREFIX
 * @param {string} [o.binaryDataMode]   N8N_DEFAULT_BINARY_DATA_MODE
 * @param {number} [o.gracefulShutdownSeconds]
 * @param {Record<string, string>} [o.env]
 * @param {object[]} [o.credentials]
 * @param {object[]} [o.workflows]
 * @param {{ email: string, password: string, firstName: string, lastName: string }} [o.owner]
 * @param {number} [o.concurrency]      each worker's --concurrency
 * @param {number} [o.workers]          how many workers (default 1)
 * @param {(msg: string) => void} [o.log]
 * @returns {Promise<{
 *   main: { url: string, cookie: string, userFolder: string, logFile: string, stop(): Promise<void> },
 *   worker: QueueWorker,
 *   workers: QueueWorker[],
 *   stop(): Promise<void>,
 * }>}
 */
async function startQueue({
	runtime,
	redis,
	userFolder,
	existingUserFolder = false,
	label = 'queue',
	prefix,
	binaryDataMode,
	gracefulShutdownSeconds,
	env = {},
	credentials = [],
	workflows = [],
	owner,
	concurrency = 10,
	workers: workerCount = 1,
	log = defaultLog,
}) {
	const fullEnv = { ...queueEnv({ redis, prefix, binaryDataMode, gracefulShutdownSeconds }), ...env };
	const logIn = (folder, role) => path.join(folder, `${label}-${role}.log`);
	const main = await startServer({
		runtime,
		userFolder,
		existingUserFolder,
		credentials,
		workflows,
		owner,
		env: fullEnv,
		logFile: userFolder && logIn(userFolder, 'main'),
		log,
	});
	const workers = [];
	try {
		// After the main: it has migrated the database the workers open. One after another: two
		// first starts of n8n on one SQLite file at once can trip over each other.
		for (let n = 1; n <= workerCount; n++) {
			const name = n === 1 ? 'worker' : `worker-${n}`;
			const worker = await startWorker({ runtime, userFolder: main.userFolder, env: fullEnv, concurrency, logFile: logIn(main.userFolder, name), log });
			workers.push({ name, ...worker });
		}
	} catch (error) {
		await Promise.all([...workers.map((worker) => worker.stop()), main.stop()]);
		throw error;
	}
	return {
		main,
		worker: workers[0],
		workers,
		async stop() {
			await Promise.all([...workers.map((worker) => worker.stop()), main.stop()]);
		},
	};
}

/**
 * The REST calls of the queue-mode test, through the main, signed in with its cookie. Execution
 * data comes back in n8n's `flatted` form, parsed with n8n's own copy of the module.
 */
function n8nRest({ url, cookie }, runtime) {
	const flatted = createRequire(path.join(path.dirname(runtime.n8nBin), '..', 'package.json'))('flatted');
	async function call(method, route, body) {
		const res = await fetch(`${url}/rest${route}`, {
			method,
			headers: { 'content-type': 'application/json', cookie },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await res.text();
		if (!res.ok) throw new Error(`${method} /rest${route}: HTTP ${res.status} ${text.slice(0, 500)}`);
		const parsed = JSON.parse(text);
		return parsed.data === undefined ? parsed : parsed.data;
	}
	return {
		call,
		/** Activates (publishes) a workflow, so its production webhook answers. */
		async activate(workflowId) {
			const { versionId } = await call('GET', `/workflows/${workflowId}`);
			return await call('POST', `/workflows/${workflowId}/activate`, { versionId });
		},
		/** The executions of a workflow, newest first: [{ id, status, mode, … }]. */
		async executions(workflowId) {
			const filter = encodeURIComponent(JSON.stringify({ workflowId }));
			const answer = await call('GET', `/executions?filter=${filter}&limit=50`);
			return answer.results;
		},
		/** One execution with its run data parsed (`data.resultData.runData`). */
		async execution(id) {
			const execution = await call('GET', `/executions/${id}`);
			if (typeof execution.data === 'string') execution.data = flatted.parse(execution.data);
			return execution;
		},
		/** Polls until the execution has ended (not new, running or waiting), or throws after `timeoutMs`. */
		async finished(id, timeoutMs = 120000) {
			const deadline = Date.now() + timeoutMs;
			for (;;) {
				const { status } = await call('GET', `/executions/${id}`);
				if (!['new', 'running', 'waiting', 'unknown'].includes(status)) return await this.execution(id);
				if (Date.now() > deadline) throw new Error(`execution ${id} still ${status} after ${timeoutMs / 1000} s`);
				await new Promise((resolve) => setTimeout(resolve, 500));
			}
		},
		/** The bytes of a stored binary (`binary.id` of an item), as the editor downloads them. */
		async binary(binaryId) {
			const res = await fetch(`${url}/rest/binary-data?id=${encodeURIComponent(binaryId)}&action=download`, { headers: { cookie } });
			if (!res.ok) throw new Error(`GET /rest/binary-data ${binaryId}: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`);
			return Buffer.from(await res.arrayBuffer());
		},
	};
}

module.exports = { findRedisServer, startRedis, queueEnv, startQueue, n8nRest };
