// Jest globalSetup of the e2e projects (one per n8n line, e2e-n8n2 and e2e-n8n1, sharing this
// file, so jest runs it once): runs every workflow once in each n8n line, before the test files
// read the results (test/e2e/harness.ts). Builds nothing: `npm test` builds first.
// Env: E2E_N8N_LINES, E2E_ONLY, E2E_CONCURRENCY, E2E_BINARY_DATA_MODE, E2E_OUT_DIR (README.md).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');

const { startGateway } = require('../gateway');
const { startHostileGateway, DNS_PRELOAD } = require('../hostile');
const { ensureRuntime, defaultDir } = require('../../scripts/n8n/runtime');
const { runWorkflows } = require('../../scripts/n8n/headless');
const { collectWorkflows, gatewayCredential } = require('../../scripts/n8n/workflowSet');
const { CREDENTIALS, HOSTILE_CREDENTIAL, OPENAI_CREDENTIAL, ROOT, TESTED_VERSIONS, lineDir, resultsFile, selectedLines } = require('./paths');

const WORKFLOW_DIRS = ['examples', path.join('test', 'e2e', 'workflows')];
/**
 * Workflows whose id starts with this run in a second batch with n8n's `database` binary data
 * mode (queue mode's default: files held in memory, capped at 512 MB), on n8n 2.x only (1.x has
 * no such mode).
 */
const DATABASE_MODE_PREFIX = 'mgwDbMode';

const log = (msg) => process.stderr.write(`[e2e] ${msg}\n`);

/**
 * The credentials of one run: ours (a good and a refused key) and OpenAI's, both at `gateway`,
 * and one at the hostile gateway whose key and custom header value must never be printed.
 */
function credentialsFor(gateway, hostile) {
	const keys = {
		good: `sk-e2e-${crypto.randomBytes(8).toString('hex')}`,
		bad: `sk-invalid-${crypto.randomBytes(8).toString('hex')}`, // refused by the gateway (401)
		hostile: `sk-e2e-hostile-${crypto.randomBytes(12).toString('hex')}`,
		hostileHeader: `relay-secret-${crypto.randomBytes(12).toString('hex')}`,
	};
	const records = Object.keys(CREDENTIALS).map((which) => gatewayCredential(CREDENTIALS[which], { apiKey: keys[which], baseUrl: gateway.baseUrl }));
	// n8n's OpenAI chat model sends OpenAI's wire format, which the loopback gateway speaks under /v1.
	records.push({ ...OPENAI_CREDENTIAL, type: 'openAiApi', data: { apiKey: keys.good, url: `${gateway.baseUrl}/v1` } });
	records.push(
		gatewayCredential(HOSTILE_CREDENTIAL, { apiKey: keys.hostile, baseUrl: hostile.baseUrl, customHeaders: { 'x-relay-token': keys.hostileHeader } }),
	);
	return { keys, records };
}

/** Runs the workflows in one n8n line against a gateway of its own, and writes the line's results file. */
async function runLine(line, { runtime, installMs, files, workflows }) {
	const started = Date.now();
	const gateway = await startGateway();
	globalThis.__MGW_E2E_GATEWAYS__.push(gateway);
	// Short drips and keep-alives so waits that never end meet their limits within seconds.
	const hostile = await startHostileGateway({ dripIntervalMs: 1000, keepAliveIntervalMs: 1000, videoPollsToFinish: 0 });
	globalThis.__MGW_E2E_GATEWAYS__.push(hostile);
	const { keys, records } = credentialsFor(gateway, hostile);
	// The hostile gateway's host names (gw.example.test, files.gw.example.test) resolve to 127.0.0.1 inside n8n.
	const env = { NODE_OPTIONS: `--require ${DNS_PRELOAD}` };
	if (process.env.E2E_BINARY_DATA_MODE) env.N8N_DEFAULT_BINARY_DATA_MODE = process.env.E2E_BINARY_DATA_MODE;
	log(`running ${workflows.length} workflow(s) in n8n ${runtime.version} (${line}) against the gateway at ${gateway.baseUrl}`);
	const databaseMode = workflows.filter((wf) => wf.id.startsWith(DATABASE_MODE_PREFIX));
	const results = await runWorkflows({
		runtime,
		credentials: records,
		workflows: workflows.filter((wf) => !databaseMode.includes(wf)),
		env,
		userFolder: path.join(lineDir(line), 'user'), // kept after the run: n8n.log, database, raw results
		concurrency: Number(process.env.E2E_CONCURRENCY) || undefined,
		log,
	});
	if (databaseMode.length && Number(runtime.version.split('.')[0]) >= 2) {
		log(`running ${databaseMode.length} workflow(s) in n8n's database binary data mode`);
		const more = await runWorkflows({
			runtime,
			credentials: records,
			workflows: databaseMode,
			env: { ...env, N8N_DEFAULT_BINARY_DATA_MODE: 'database' },
			userFolder: path.join(lineDir(line), 'user-database'),
			log,
		});
		Object.assign(results, more);
	}
	const run = {
		line,
		n8nVersion: runtime.version,
		createdAt: new Date().toISOString(),
		timing: { installMs, setupMs: results.meta.setupMs, batchMs: results.meta.batchMs, totalMs: Date.now() - started },
		gateway: { baseUrl: gateway.baseUrl, fileBaseUrl: gateway.fileBaseUrl },
		credentials: Object.fromEntries(Object.keys(CREDENTIALS).map((which) => [which, { ...CREDENTIALS[which], apiKey: keys[which] }])),
		hostile: { baseUrl: hostile.baseUrl, siblingUrl: hostile.siblingUrl, apiKey: keys.hostile, headerSecret: keys.hostileHeader, requests: hostile.requests },
		files,
		userFolder: results.meta.userFolder,
		batchSummary: results.meta.summary,
		results,
		gatewayRequests: gateway.requests,
	};
	fs.writeFileSync(resultsFile(line), JSON.stringify(run, null, 1));
	const failed = Object.values(results).filter((r) => r.status !== 'success').length;
	log(
		`n8n ${runtime.version}: ${workflows.length} workflow(s) ran (${failed} ended in an error) in ${Math.round(run.timing.totalMs / 1000)} s; ` +
			`results: ${path.relative(ROOT, resultsFile(line))}`,
	);
}

module.exports = async function globalSetup() {
	const lines = selectedLines();
	for (const line of lines) {
		// A stale results file must never pass for this run's.
		fs.rmSync(resultsFile(line), { force: true });
		fs.mkdirSync(lineDir(line), { recursive: true });
	}
	// E2E_ONLY matches a file path, a workflow id or a workflow name.
	const set = collectWorkflows({ dirs: WORKFLOW_DIRS, root: ROOT, only: process.env.E2E_ONLY });

	// Every install first (each only once per machine), so the batches run back to back. Each
	// version has its own cache folder: N8N_RUNTIME_DIR names one folder, so it is not used here.
	const runtimes = {};
	for (const line of lines) {
		const started = Date.now();
		const version = TESTED_VERSIONS[line];
		runtimes[line] = { runtime: await ensureRuntime({ version, dir: defaultDir(version), log }), installMs: Date.now() - started };
	}

	globalThis.__MGW_E2E_GATEWAYS__ = [];
	try {
		// One line after the other: two n8n processes side by side would make each slower on a small machine.
		for (const line of lines) await runLine(line, { ...runtimes[line], ...set });
	} catch (error) {
		// jest skips globalTeardown when globalSetup throws; an open server would keep it alive.
		await Promise.all(globalThis.__MGW_E2E_GATEWAYS__.map((gateway) => gateway.close()));
		delete globalThis.__MGW_E2E_GATEWAYS__;
		throw error;
	}
};
