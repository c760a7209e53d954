// Native add-ons of the n8n runtimes (sqlite3): compiled once per machine, shared by both n8n lines.
// Promises:
// - an add-on that declares N-API builds (`binary.napi_versions` in its package.json) is compiled
//   once per machine per key (name, version, N-API version, platform, arch, libc), for the highest
//   declared N-API version the compiling Node supports: N-API is stable, so one build serves that
//   Node and every newer one (n8n 1.x's Node 20 and n8n 2.x's Node 24 alike);
// - a runtime takes the shared build only after it loads and answers a query under the runtime's
//   own Node; otherwise the caller compiles the runtime's own copy, as without sharing;
// - only the named add-on's build script runs (the project keeps ignore-scripts=true).
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const { cacheRoot, withLock, resetDir, readJson } = require('./cacheFolder');
const { runStep } = require('./proc');

const BUILD_PACKAGE_NAME = 'n8n-nodes-model-gateway-addon-build';
const MARKER = '.addon-complete.json';
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

// What proves an add-on works, run by the Node that will use it: a query, not only a load.
const CHECKS = {
	sqlite3:
		"const db = new (require('sqlite3').Database)(':memory:');" +
		"db.get('select sqlite_version() as v', (e, r) => { if (e) throw e; console.log('sqlite ' + r.v + ' on N-API ' + process.versions.napi); db.close(); });",
};
const checkScript = (name) => CHECKS[name] || `require(${JSON.stringify(name)})`;

/**
 * The highest N-API version in `declared` that a Node with `nodeNapi` supports, or null.
 * @param {unknown} declared
 * @param {number | string} nodeNapi
 */
function napiTarget(declared, nodeNapi) {
	const fits = (Array.isArray(declared) ? declared : []).map(Number).filter((v) => Number.isInteger(v) && v <= Number(nodeNapi));
	return fits.length ? Math.max(...fits) : null;
}

/**
 * glibc or musl on Linux (a build for one does not load on the other); empty elsewhere.
 * @param {string} [platform]
 * @param {{header?: {glibcVersionRuntime?: string}}} [report]
 */
function libcFamily(platform = process.platform, report = platform === 'linux' ? process.report.getReport() : undefined) {
	if (platform !== 'linux') return '';
	return report?.header?.glibcVersionRuntime ? 'glibc' : 'musl';
}

const HOST = { platform: process.platform, arch: process.arch, libc: libcFamily(), nodeNapi: Number(process.versions.napi) };

/**
 * The one shared build of the add-on described by `manifest` (its package.json) that a Node like
 * `host` can make: { name, version, napi, key }, or { reason } when it cannot be shared.
 * @param {{name: string, version: string, binary?: {napi_versions?: unknown[]}}} manifest
 * @param {{platform: string, arch: string, libc: string, nodeNapi: number}} [host]
 */
function sharedBuildSpec(manifest, host = HOST) {
	const napi = napiTarget(manifest.binary?.napi_versions, host.nodeNapi);
	if (napi === null) {
		return { reason: `${manifest.name} ${manifest.version} declares no N-API build that N-API ${host.nodeNapi} can make` };
	}
	const key = [manifest.name.replace(/^@/, '').replace(/\//g, '+'), manifest.version, `napi${napi}`, host.platform, host.arch, host.libc]
		.filter(Boolean)
		.join('-');
	return { name: manifest.name, version: manifest.version, napi, key };
}

/**
 * Whether a runtime with `installed` (the add-on's package.json there) on a Node with `runtimeNapi` may take `built`.
 * @param {{name: string, version: string, napi: number} | undefined | null} built
 * @param {{name?: string, version?: string}} installed
 * @param {number | string} runtimeNapi
 * @returns {{reuse: boolean, reason?: string}}
 */
function reuseDecision(built, installed, runtimeNapi) {
	if (!built) return { reuse: false, reason: 'no shared build' };
	if (built.name !== installed.name || built.version !== installed.version) {
		return { reuse: false, reason: `the shared build is ${built.name} ${built.version}, this runtime has ${installed.name} ${installed.version}` };
	}
	if (built.napi > Number(runtimeNapi)) {
		return { reuse: false, reason: `the shared build needs N-API ${built.napi}, this runtime's Node has ${runtimeNapi}` };
	}
	return { reuse: true };
}

/** The environment for npm in a cache folder, without the npm_* settings of a calling `npm test`. */
function cleanEnv(env = process.env) {
	// Its ignore-scripts=true would turn `npm rebuild` into a silent no-op, its local prefix would aim
	// npm at the repository, a user-level nodedir would build for the wrong Node.
	return Object.fromEntries(Object.entries(env).filter(([name]) => !/^npm_/i.test(name) && name !== 'INIT_CWD'));
}

/**
 * `npm rebuild <addon>` compiling from source for `nodeBin` (headers from its own install), with every core.
 * @param {Record<string, string | undefined>} baseEnv
 * @param {string} nodeBin
 * @param {number} [napi]
 * @returns {Record<string, string | undefined>}
 */
function buildEnv(baseEnv, nodeBin, napi) {
	/** @type {Record<string, string | undefined>} */
	const env = { ...baseEnv, npm_config_build_from_source: 'true', JOBS: 'max' };
	env.PATH = `${path.dirname(nodeBin)}${path.delimiter}${baseEnv.PATH || ''}`;
	// Official tarballs, Debian's nodejs and the npm `node-<platform>` packages all keep
	// include/node beside bin/: without it node-gyp downloads headers, which fails offline.
	const prefix = path.resolve(path.dirname(nodeBin), '..');
	if (fs.existsSync(path.join(prefix, 'include', 'node', 'node.h'))) env.npm_config_nodedir = prefix;
	if (napi) env.npm_config_napi_build_version = String(napi);
	return env;
}

/**
 * Compiles `name` in `dir` (an npm project that has it installed) for `nodeBin` and checks it there.
 * Resolves with the step's duration in ms.
 */
async function compileAddon(name, { dir, nodeBin, napi, logFile, log }) {
	// --ignore-scripts=false: the build is the add-on's install script.
	const env = buildEnv(cleanEnv(), nodeBin, napi);
	const ms = await runStep(NPM, ['rebuild', name, '--ignore-scripts=false', '--loglevel=warn'], { cwd: dir, env, logFile, step: `compiling ${name}`, log });
	await checkAddon(name, { dir, nodeBin, logFile, log });
	return ms;
}

/** Loads `name` from `dir` with `nodeBin` and runs its check; fails with the log's end. */
function checkAddon(name, { dir, nodeBin, logFile, log }) {
	return runStep(nodeBin, ['-e', checkScript(name)], { cwd: dir, env: cleanEnv(), logFile, step: `checking ${name}`, log });
}

const addonDir = (key) => path.join(cacheRoot(), 'addons', key);

/**
 * Makes sure the shared build of `manifest` exists (compiling it with this process's Node, once per
 * machine) and resolves with its marker: { name, version, napi, key, files, compiledInMs }.
 * Rejects with the reason when the add-on cannot be shared or its build failed.
 */
async function ensureSharedBuild(manifest, log) {
	const spec = sharedBuildSpec(manifest);
	if (spec.reason) throw new Error(spec.reason);
	const dir = addonDir(spec.key);
	const ready = () => readJson(path.join(dir, MARKER));
	if (ready()) return ready();
	return withLock(dir, log, async () => {
		if (ready()) return ready();
		resetDir(dir, BUILD_PACKAGE_NAME);
		const logFile = path.join(dir, 'build.log');
		log(`compiling ${spec.name} ${spec.version} once for this machine (N-API ${spec.napi}, used by every n8n runtime); log: ${logFile}`);
		const project = { name: BUILD_PACKAGE_NAME, private: true, dependencies: { [spec.name]: spec.version } };
		fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(project, null, 2));
		const install = ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=warn'];
		await runStep(NPM, install, { cwd: dir, env: cleanEnv(), logFile, step: `fetching ${spec.name}`, log });
		const compiledInMs = await compileAddon(spec.name, { dir, nodeBin: process.execPath, napi: spec.napi, logFile, log });
		const release = path.join('node_modules', spec.name, 'build', 'Release');
		const files = fs.readdirSync(path.join(dir, release)).filter((f) => f.endsWith('.node')).map((f) => path.join(release, f));
		const marker = { ...spec, files, compiledInMs, compiledWith: process.version };
		fs.writeFileSync(path.join(dir, MARKER), JSON.stringify(marker, null, 2));
		return marker;
	});
}

/**
 * Copies the shared build into the runtime in `runtimeDir` and checks it with the runtime's Node.
 * Resolves with { used: true } or { used: false, reason } (then nothing of it is left behind).
 */
async function useSharedBuild(built, { runtimeDir, nodeBin, runtimeNapi, logFile, log }) {
	const installed = readJson(path.join(runtimeDir, 'node_modules', built.name, 'package.json')) || {};
	const decision = reuseDecision(built, installed, runtimeNapi);
	if (!decision.reuse) return { used: false, reason: decision.reason };
	const copied = built.files.map((file) => path.join(runtimeDir, file));
	built.files.forEach((file, i) => {
		fs.mkdirSync(path.dirname(copied[i]), { recursive: true });
		fs.copyFileSync(path.join(addonDir(built.key), file), copied[i]);
	});
	try {
		await checkAddon(built.name, { dir: runtimeDir, nodeBin, logFile, log });
		return { used: true };
	} catch (error) {
		copied.forEach((file) => fs.rmSync(file, { force: true }));
		return { used: false, reason: `it failed its check under ${nodeBin}: ${String(error.message).split('\n')[0]}` };
	}
}

module.exports = {
	napiTarget,
	libcFamily,
	sharedBuildSpec,
	reuseDecision,
	cleanEnv,
	buildEnv,
	compileAddon,
	ensureSharedBuild,
	useSharedBuild,
};
