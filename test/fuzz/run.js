#!/usr/bin/env node
'use strict';
/**
 * `npm run fuzz -- --runs N --seed S [--nodes chat,image] [--invariant secrets] [--strict] [--survey file]`
 *
 * Runs the property test of test/fuzz (the generative hostile gateway) with more runs or another
 * seed than CI's fixed one. --runs is the number of runs in all, shared by the nodes; --strict
 * makes the known failures plain tests; --survey writes every violation found to a JSON file
 * instead of stopping at the first (no shrinking), to see everything that still breaks.
 */
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const FLAGS = { '--runs': 'FUZZ_RUNS', '--seed': 'FUZZ_SEED', '--nodes': 'FUZZ_NODES', '--invariant': 'FUZZ_INVARIANT', '--survey': 'FUZZ_SURVEY', '--shrink-ms': 'FUZZ_SHRINK_MS' };

const env = { ...process.env, FUZZ_TIMINGS: '1' };
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
	const arg = args[i];
	if (arg === '--strict') env.FUZZ_STRICT = '1';
	else if (FLAGS[arg] && args[i + 1] !== undefined) env[FLAGS[arg]] = args[++i];
	else {
		process.stderr.write(`unknown argument ${arg}\nusage: npm run fuzz -- --runs N --seed S [--nodes a,b] [--invariant name] [--strict] [--survey file] [--shrink-ms ms]\n`);
		process.exit(2);
	}
}
if (env.FUZZ_SURVEY) env.FUZZ_SURVEY = path.resolve(env.FUZZ_SURVEY);
process.stdout.write(`fuzz: runs ${env.FUZZ_RUNS ?? '180 (CI)'}, seed ${env.FUZZ_SEED ?? '1826 (CI)'}${env.FUZZ_NODES ? `, nodes ${env.FUZZ_NODES}` : ''}\n`);

const jest = require.resolve('jest/bin/jest');
const started = Date.now();
const result = spawnSync(process.execPath, [jest, '--selectProjects', 'fuzz', '--forceExit', path.join(__dirname, 'property.test.ts')], { env, stdio: 'inherit' });
process.stdout.write(`fuzz: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
// A survey keeps going past violations, so jest passes: the survey's own count decides.
if (env.FUZZ_SURVEY && result.status === 0) {
	const { survey = [], late = [] } = JSON.parse(require('node:fs').readFileSync(env.FUZZ_SURVEY, 'utf8'));
	process.stdout.write(`fuzz: survey found ${survey.length} run(s) that broke a promise and ${late.length} late request(s): ${env.FUZZ_SURVEY}\n`);
	process.exit(survey.length + late.length > 0 ? 1 : 0);
}
process.exit(result.status ?? 1);
