// Where the e2e run writes its results, and the fixed credentials example workflows reference.
// Shared by globalSetup.js (writer) and harness.ts (reader).
'use strict';

const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
// `.n8n-*/` is git-ignored.
const OUT_DIR = process.env.E2E_OUT_DIR ? path.resolve(process.env.E2E_OUT_DIR) : path.join(ROOT, '.n8n-e2e');
const RESULTS_FILE = path.join(OUT_DIR, 'results.json');

const CREDENTIALS = {
	good: { id: 'mgwE2eCred01', name: 'Model Gateway (loopback)' },
	bad: { id: 'mgwE2eBadKey1', name: 'Model Gateway (bad key)' },
};

module.exports = { ROOT, OUT_DIR, RESULTS_FILE, CREDENTIALS };
