// What the e2e suite, `npm run demo`, `npm run dev` and the screenshots share: the workflow files
// to load, the gateway they talk to (the loopback one, or a real one from the environment) and
// the `gatewayApi` credential the example workflows reference by id.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');

const REPO_ROOT = path.resolve(__dirname, '..', '..');

// The credential the workflows run here use; whoever runs them imports a credential under this id.
const EXAMPLE_CREDENTIAL = { id: 'mgwE2eCred01', name: 'Model Gateway (loopback)' };

// Words n8n's new-credential dialog leaves out of a credential type's display name when it names a
// new credential "<the rest> account" (n8n 1.123 and 2.41; 1.x does not drop MCP, no type of ours has it).
const DIALOG_DROPPED_WORDS = ['API', 'OAuth1', 'OAuth2', 'MCP'];

/** The name n8n's dialog gives a user's first credential of a type with this display name. */
function dialogCredentialName(credentialDisplayName) {
	const app = credentialDisplayName
		.split(' ')
		.filter((word) => !DIALOG_DROPPED_WORDS.includes(word))
		.join(' ');
	return app ? `${app} account` : 'Unnamed credential';
}

/**
 * examples/*.json name their Model Gateway credential as dialogCredentialName does, without an id:
 * n8n's editor fills an imported node's credential in by that name when exactly one credential of
 * the user's has it (test/unit/exampleCredential.test.ts). Run here, they get EXAMPLE_CREDENTIAL
 * instead. Returns the workflow.
 */
function withExampleCredential(workflow) {
	for (const node of workflow.nodes ?? []) {
		const ref = node.credentials?.gatewayApi;
		if (ref && !ref.id) node.credentials.gatewayApi = { ...EXAMPLE_CREDENTIAL };
	}
	return workflow;
}

/**
 * Every `*.json` workflow in `dirs` (relative to `root`), sorted by file name within each folder.
 * `only`: comma-separated parts; keeps workflows whose file path, id or name contains one.
 * @returns {{ files: Record<string, string>, workflows: object[] }} files: relative path -> workflow id
 */
function collectWorkflows({ dirs, root = REPO_ROOT, only = '' }) {
	const filters = only
		.split(',')
		.map((s) => s.trim())
		.filter(Boolean);
	const files = {};
	const byId = {};
	const workflows = [];
	for (const dir of dirs) {
		const abs = path.join(root, dir);
		if (!fs.existsSync(abs)) continue;
		for (const name of fs.readdirSync(abs).filter((n) => n.endsWith('.json')).sort()) {
			const rel = path.join(dir, name);
			const wf = withExampleCredential(JSON.parse(fs.readFileSync(path.join(root, rel), 'utf8')));
			if (byId[wf.id]) throw new Error(`${rel} and ${byId[wf.id]} share the workflow id ${wf.id}`);
			byId[wf.id] = rel;
			if (filters.length && !filters.some((f) => rel.includes(f) || wf.id === f || (wf.name || '').includes(f))) continue;
			files[rel] = wf.id;
			workflows.push(wf);
		}
	}
	if (!workflows.length) throw new Error(`no workflow to run in ${dirs.join(', ')}${only ? ` matching "${only}"` : ''}`);
	return { files, workflows };
}

/** A credential record for headless.js's importData (n8n encrypts `data` on import). */
function gatewayCredential({ id, name }, { apiKey, baseUrl, groupMultiplier = 1, customHeaders }) {
	const data = { apiKey, baseUrl, groupMultiplier };
	if (customHeaders) data.customHeaders = JSON.stringify(customHeaders);
	return { id, name, type: 'gatewayApi', data };
}

/**
 * The gateway to run against: a real one when GATEWAY_BASE_URL and GATEWAY_API_KEY are set,
 * otherwise the loopback gateway of test/gateway, started here (`close()` stops it).
 * `label` says which, without the key.
 * @returns {Promise<{ real: boolean, baseUrl: string, apiKey: string, groupMultiplier: number, label: string, close(): Promise<void> }>}
 */
async function startGatewayTarget({ env = process.env, loopbackOptions = {} } = {}) {
	const baseUrl = (env.GATEWAY_BASE_URL || '').trim();
	const apiKey = (env.GATEWAY_API_KEY || '').trim();
	if (baseUrl || apiKey) {
		if (!baseUrl || !apiKey) {
			throw new Error('set both GATEWAY_BASE_URL and GATEWAY_API_KEY to use a real gateway, or neither for the loopback one');
		}
		const groupMultiplier = env.GATEWAY_GROUP_MULTIPLIER ? Number(env.GATEWAY_GROUP_MULTIPLIER) : 1;
		if (!(groupMultiplier > 0)) throw new Error(`GATEWAY_GROUP_MULTIPLIER must be a positive number, got ${env.GATEWAY_GROUP_MULTIPLIER}`);
		return {
			real: true,
			baseUrl,
			apiKey,
			groupMultiplier,
			label: `the gateway at ${baseUrl} (GATEWAY_BASE_URL; key from GATEWAY_API_KEY)`,
			close: async () => {},
		};
	}
	const { startGateway } = require('../../test/gateway');
	const gateway = await startGateway(loopbackOptions);
	return {
		real: false,
		baseUrl: gateway.baseUrl,
		// The loopback gateway takes any well-formed key except the sk-invalid…/sk-noquota… ones.
		apiKey: `sk-loopback-${crypto.randomBytes(8).toString('hex')}`,
		groupMultiplier: 1,
		label: `the bundled loopback gateway at ${gateway.baseUrl} (test/gateway; set GATEWAY_BASE_URL and GATEWAY_API_KEY for a real one)`,
		gateway,
		close: () => gateway.close(),
	};
}

module.exports = { REPO_ROOT, EXAMPLE_CREDENTIAL, dialogCredentialName, withExampleCredential, collectWorkflows, gatewayCredential, startGatewayTarget };
