// Where the e2e run writes its results, the n8n lines it runs on, and the fixed credentials the
// workflows reference. Shared by globalSetup.js (writer), harness.ts (reader) and jest.config.js.
'use strict';

const path = require('node:path');

const { EXAMPLE_CREDENTIAL } = require('../../scripts/n8n/workflowSet');
const { TESTED_VERSIONS } = require('../../scripts/n8n/runtime');

const ROOT = path.resolve(__dirname, '..', '..');
// `.n8n-*/` is git-ignored.
const OUT_DIR = process.env.E2E_OUT_DIR ? path.resolve(process.env.E2E_OUT_DIR) : path.join(ROOT, '.n8n-e2e');

/** Every n8n line the suite knows (`n8n2`, `n8n1`), each a jest project `e2e-<line>`. */
const LINES = Object.keys(TESTED_VERSIONS);

/** The lines this run covers: E2E_N8N_LINES=n8n1 (comma-separated) or, by default, all. */
function selectedLines(env = process.env) {
	const asked = (env.E2E_N8N_LINES || '')
		.split(',')
		.map((s) => s.trim())
		.filter(Boolean);
	const unknown = asked.filter((line) => !LINES.includes(line));
	if (unknown.length) throw new Error(`E2E_N8N_LINES names unknown lines ${unknown.join(', ')} (known: ${LINES.join(', ')})`);
	return asked.length ? LINES.filter((line) => asked.includes(line)) : LINES;
}

/**
 * Whether E2E_ONLY (comma-separated parts) lets a test file that starts its own n8n run: when it is
 * empty, or a part is contained in the file's `name` (e.g. `queue-crash`) or contains `keyword`
 * (e.g. `queue`).
 */
function selectedByOnly(name, keyword, only = process.env.E2E_ONLY || '') {
	const parts = only
		.split(',')
		.map((part) => part.trim().toLowerCase())
		.filter(Boolean);
	return parts.length === 0 || parts.some((part) => name.includes(part) || part.includes(keyword));
}

/** One folder per line: results.json and the kept n8n user folder (`user/`). */
const lineDir = (line) => path.join(OUT_DIR, line);
const resultsFile = (line) => path.join(lineDir(line), 'results.json');

const CREDENTIALS = {
	good: EXAMPLE_CREDENTIAL,
	bad: { id: 'mgwE2eBadKey1', name: 'Model Gateway (bad key)' },
};

// For the hostile-*.json workflows: the hostile gateway of test/hostile, with a custom header.
const HOSTILE_CREDENTIAL = { id: 'mgwE2eHostile1', name: 'Model Gateway (hostile)' };

// For the AI Agent workflows: n8n's own OpenAI chat model, pointed at the loopback gateway.
const OPENAI_CREDENTIAL = { id: 'mgwE2eOpenAi1', name: 'OpenAI (loopback gateway)' };

module.exports = { ROOT, OUT_DIR, LINES, TESTED_VERSIONS, selectedLines, selectedByOnly, lineDir, resultsFile, CREDENTIALS, OPENAI_CREDENTIAL, HOSTILE_CREDENTIAL };
