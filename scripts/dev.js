#!/usr/bin/env node
// `npm run dev`: the n8n editor on 127.0.0.1 with this package loaded (built first by the npm
// script), the example workflows imported, a Model Gateway credential they use, and an owner
// account already set up, so you can sign in and click through every node. Ctrl-C stops it all.
//
// Gateway: the bundled loopback one (test/gateway) unless GATEWAY_BASE_URL and GATEWAY_API_KEY
// are set. `--port N` (or N8N_DEV_PORT) picks the editor's port; default: a free one.
// The editor starts fresh every time (.n8n-dev/, git-ignored): export workflows you want to keep.
'use strict';

const path = require('node:path');

const { ensureRuntime } = require('./n8n/runtime');
const { startServer } = require('./n8n/headless');
const { REPO_ROOT, EXAMPLE_CREDENTIAL, collectWorkflows, gatewayCredential, startGatewayTarget } = require('./n8n/workflowSet');

const USER_FOLDER = path.join(REPO_ROOT, '.n8n-dev', 'user');
// Loopback only, recreated on every start; printed so a person can sign in.
const OWNER = { email: 'owner@example.com', password: 'Gateway-Dev-1', firstName: 'Dev', lastName: 'Owner' };

const defaultLog = (msg) => process.stderr.write(`[dev] ${msg}\n`);

/**
 * Starts the gateway and n8n with everything imported.
 * @returns {Promise<{ url: string, owner: object, cookie: string, gateway: object, workflows: object[], n8n: object, stop(): Promise<void> }>}
 */
async function startDevEnvironment({ port, userFolder = USER_FOLDER, log = defaultLog } = {}) {
	const { workflows } = collectWorkflows({ dirs: ['examples'] });
	const gateway = await startGatewayTarget();
	log(`gateway: ${gateway.label}`);
	let n8n;
	try {
		const runtime = await ensureRuntime({ log: (msg) => log(`n8n runtime: ${msg}`) });
		const credential = gateway.real ? { ...EXAMPLE_CREDENTIAL, name: 'Model Gateway' } : EXAMPLE_CREDENTIAL;
		log(`starting n8n ${runtime.version} with ${workflows.length} example workflows and the credential "${credential.name}"`);
		n8n = await startServer({
			runtime,
			credentials: [gatewayCredential(credential, gateway)],
			workflows,
			userFolder,
			port,
			owner: OWNER,
			log: (msg) => log(`n8n: ${msg}`),
		});
	} catch (error) {
		await gateway.close();
		throw error;
	}
	let stopped;
	return {
		url: n8n.url,
		owner: OWNER,
		cookie: n8n.cookie,
		gateway,
		workflows,
		n8n,
		stop() {
			stopped ||= n8n.stop().finally(() => gateway.close());
			return stopped;
		},
	};
}

async function main() {
	const args = process.argv.slice(2);
	const portArg = args.includes('--port') ? args[args.indexOf('--port') + 1] : process.env.N8N_DEV_PORT;
	if (portArg !== undefined && !/^\d+$/.test(portArg)) throw new Error(`--port needs a port number, got ${portArg}`);
	const dev = await startDevEnvironment({ port: portArg && Number(portArg) });
	let stopping = false;
	const stop = (why) => {
		if (stopping) return;
		stopping = true;
		defaultLog(`${why}: stopping n8n and the gateway…`);
		dev.stop().then(() => process.exit(0));
	};
	process.on('SIGINT', () => stop('Ctrl-C'));
	process.on('SIGTERM', () => stop('SIGTERM'));
	dev.n8n.exited.then(({ code, signal }) => {
		if (stopping) return;
		defaultLog(`n8n exited on its own (${signal || code}); its log: ${dev.n8n.logFile}`);
		dev.stop().then(() => process.exit(1));
	});
	const lines = [
		'',
		`  n8n editor:   ${dev.url}`,
		`  sign in with: ${dev.owner.email} / ${dev.owner.password}`,
		`  gateway:      ${dev.gateway.label}`,
		`  workflows:    ${dev.workflows.map((w) => w.name).join('\n                ')}`,
		`  n8n log:      ${path.relative(process.cwd(), dev.n8n.logFile)}`,
		'',
		'  Open a workflow, double-click a Gateway node, click "Execute step". Ctrl-C stops everything.',
		'',
	];
	process.stdout.write(`${lines.join('\n')}\n`);
}

if (require.main === module) {
	main().catch((error) => {
		process.stderr.write(`[dev] failed: ${error.message || error}\n`);
		process.exit(1);
	});
}

module.exports = { startDevEnvironment, OWNER };
