#!/usr/bin/env node
// `npm test`: every suite runs, in order, even when one before it failed, so a red suite never hides
// the others' results: lint (which builds), unit, integration, fuzz, e2e. Each is the package.json
// script of the same name (`npm run lint`, `npm run test:unit`, ...), its output shown as it runs.
// At the end: one line per suite, then the tests of all suites summed on a closing line of its own,
// `N passed, N failed`, which CI reads; the exit code is 1 when any suite failed.
// A jest suite's counts come from its `--json --outputFile` report; a suite without tests (lint), or
// one that failed without a failed test (it did not compile, its global setup threw), counts as one
// check, so the closing line never says 0 failed when something failed.
// `node scripts/test-all.js unit integration` runs only the suites named.
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const SUITES = [
	{ name: 'lint', script: 'lint' },
	{ name: 'unit', script: 'test:unit', jest: true },
	{ name: 'integration', script: 'test:integration', jest: true },
	{ name: 'fuzz', script: 'test:fuzz', jest: true },
	{ name: 'e2e', script: 'test:e2e', jest: true },
];

/** `npm run <script> -- <args>` with its output shown, by the npm that runs this script when there is one. */
function npmRun(script, args) {
	const cli = process.env.npm_execpath;
	const [command, prefix] = cli && cli.endsWith('.js') ? [process.execPath, [cli]] : ['npm', []];
	const child = spawnSync(command, [...prefix, 'run', script, ...(args.length ? ['--', ...args] : [])], { cwd: ROOT, stdio: 'inherit' });
	return child.status ?? child.signal;
}

/** The counts of a jest report, or undefined when jest wrote none (it stopped before its report). */
function readReport(file) {
	try {
		const report = JSON.parse(fs.readFileSync(file, 'utf8'));
		return {
			passed: report.numPassedTests,
			failed: report.numFailedTests + report.numRuntimeErrorTestSuites,
			skipped: report.numPendingTests + report.numTodoTests,
		};
	} catch {
		return undefined;
	}
}

/** Runs one suite with `run(script, extraArgs)` (its exit status); its counts from jest's report. */
function runSuite(suite, reportDir, run) {
	const started = Date.now();
	const reportFile = path.join(reportDir, `${suite.name}.json`);
	process.stdout.write(`\n==> ${suite.name}: npm run ${suite.script}\n`);
	const status = run(suite.script, suite.jest ? ['--json', `--outputFile=${reportFile}`] : []);
	const ok = status === 0;
	const counts = (suite.jest && readReport(reportFile)) || { passed: ok ? 1 : 0, failed: ok ? 0 : 1, skipped: 0, checks: true };
	// a suite that failed with no failed test still counts as one failure
	if (!ok && counts.failed === 0) counts.failed = 1;
	return { ...suite, ok, counts, seconds: (Date.now() - started) / 1000, status };
}

function describeResult(result) {
	const { passed, failed, skipped, checks } = result.counts;
	const counted = checks ? 'no test count' : `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;
	return `${result.name.padEnd(12)} ${result.ok ? 'PASS' : `FAIL (exit ${result.status})`}  ${counted}  ${result.seconds.toFixed(0)} s`;
}

/** Every suite named in `wanted` (all when empty), one after the other whatever they end with; the exit code. */
function runAll(wanted, run = (script, args) => npmRun(script, args)) {
	const unknown = wanted.filter((name) => !SUITES.some((suite) => suite.name === name));
	if (unknown.length) {
		process.stderr.write(`unknown suite ${unknown.join(', ')}: the suites are ${SUITES.map((suite) => suite.name).join(', ')}\n`);
		return 2;
	}
	const chosen = wanted.length ? SUITES.filter((suite) => wanted.includes(suite.name)) : SUITES;
	const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mgw-test-'));
	try {
		const results = chosen.map((suite) => runSuite(suite, reportDir, run));
		const total = results.reduce((sum, result) => ({ passed: sum.passed + result.counts.passed, failed: sum.failed + result.counts.failed }), { passed: 0, failed: 0 });
		process.stdout.write(`\n==> summary\n${results.map(describeResult).join('\n')}\n${total.passed} passed, ${total.failed} failed\n`);
		return results.every((result) => result.ok) ? 0 : 1;
	} finally {
		fs.rmSync(reportDir, { recursive: true, force: true });
	}
}

if (require.main === module) process.exitCode = runAll(process.argv.slice(2));

module.exports = { SUITES, runAll };
