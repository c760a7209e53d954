// Jest globalSetup of the e2e project: runs every workflow once, in one real n8n, before the test
// files read the results (test/e2e/harness.ts). Builds nothing: `npm test` builds first.
// Env: E2E_ONLY, E2E_CONCURRENCY, E2E_BINARY_DATA_MODE, N8N_RUNTIME_DIR, N8N_RUNTIME_VERSION (README.md).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');

const { startGateway } = require('../gateway');
const { ensureRuntime } = require('../../scripts/n8n/runtime');
const { runWorkflows } = require('../../scripts/n8n/headless');
const { RESULTS_FILE, OUT_DIR, CREDENTIALS, ROOT } = require('./paths');

const WORKFLOW_DIRS = ['examples', path.join('test', 'e2e', 'workflows')];

const log = (msg) => process.stderr.write(`[e2e] ${msg}\n`);

function collectWorkflows() {
	const filters = (process.env.E2E_ONLY || '')
		.split(',')
		.map((s) => s.trim())
		.filter(Boolean);
	const files = {};
	const byId = {};
	const workflows = [];
	for (const dir of WORKFLOW_DIRS) {
		const abs = path.join(ROOT, dir);
		if (!fs.existsSync(abs)) continue;
		for (const name of fs.readdirSync(abs).filter((n) => n.endsWith('.json')).sort()) {
			const rel = path.join(dir, name);
			const wf = JSON.parse(fs.readFileSync(path.join(ROOT, rel), 'utf8'));
			if (byId[wf.id]) throw new Error(`${rel} and ${byId[wf.id]} share the workflow id ${wf.id}`);
			byId[wf.id] = rel;
			// E2E_ONLY matches a file path, a workflow id or a workflow name.
			if (filters.length && !filters.some((f) => rel.includes(f) || wf.id === f || (wf.name || '').includes(f))) continue;
			files[rel] = wf.id;
			workflows.push(wf);
		}
	}
	if (!workflows.length) throw new Error(`no workflow to run (E2E_ONLY=${process.env.E2E_ONLY || ''})`);
	return { files, workflows };
}

module.exports = async function globalSetup() {
	const started = Date.now();
	// A stale results file must never pass for this run's.
	fs.rmSync(RESULTS_FILE, { force: true });
	fs.mkdirSync(OUT_DIR, { recursive: true });
	const { files, workflows } = collectWorkflows();

	const runtime = await ensureRuntime({ log });
	const installMs = Date.now() - started;

	const gateway = await startGateway();
	globalThis.__MGW_E2E_GATEWAY__ = gateway;
	const keys = {
		good: `sk-e2e-${crypto.randomBytes(8).toString('hex')}`,
		bad: `sk-invalid-${crypto.randomBytes(8).toString('hex')}`, // refused by the gateway (401)
	};
	const credentials = Object.keys(CREDENTIALS).map((which) => ({
		...CREDENTIALS[which],
		type: 'gatewayApi',
		data: { apiKey: keys[which], baseUrl: gateway.baseUrl, groupMultiplier: 1 },
	}));

	const env = {};
	if (process.env.E2E_BINARY_DATA_MODE) env.N8N_DEFAULT_BINARY_DATA_MODE = process.env.E2E_BINARY_DATA_MODE;
	log(`running ${workflows.length} workflow(s) in n8n ${runtime.version} against the gateway at ${gateway.baseUrl}`);
	let results;
	try {
		results = await runWorkflows({
			runtime,
			credentials,
			workflows,
			env,
			userFolder: path.join(OUT_DIR, 'user'), // kept after the run: n8n.log, database, raw results
			concurrency: Number(process.env.E2E_CONCURRENCY) || undefined,
			log,
		});
	} catch (error) {
		// jest skips globalTeardown when globalSetup throws; an open server would keep it alive.
		delete globalThis.__MGW_E2E_GATEWAY__;
		await gateway.close();
		throw error;
	}

	const run = {
		n8nVersion: runtime.version,
		createdAt: new Date().toISOString(),
		timing: { installMs, setupMs: results.meta.setupMs, batchMs: results.meta.batchMs, totalMs: Date.now() - started },
		gateway: { baseUrl: gateway.baseUrl, fileBaseUrl: gateway.fileBaseUrl },
		credentials: Object.fromEntries(Object.keys(CREDENTIALS).map((which) => [which, { ...CREDENTIALS[which], apiKey: keys[which] }])),
		files,
		userFolder: results.meta.userFolder,
		batchSummary: results.meta.summary,
		results,
		gatewayRequests: gateway.requests,
	};
	fs.writeFileSync(RESULTS_FILE, JSON.stringify(run, null, 1));
	const failed = Object.values(results).filter((r) => r.status !== 'success').length;
	log(`${workflows.length} workflow(s) ran (${failed} ended in an error) in ${Math.round(run.timing.totalMs / 1000)} s; results: ${path.relative(ROOT, RESULTS_FILE)}`);
};
