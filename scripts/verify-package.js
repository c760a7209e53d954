#!/usr/bin/env node
// What n8n checks before it verifies a community package, run here on what `npm pack` would publish:
//  1. n8n's scanner (@n8n/scan-community-package): the same two ESLint passes its
//     analyzePackageByName makes after downloading a release, one on the source (nodes/,
//     credentials/, package.json) and one on the unpacked tarball (its .js files and package.json).
//     The scanner ignores inline eslint-disable comments, so nothing can be waved through.
//  2. `n8n-node lint` (@n8n/node-cli) with n8n's default lint configuration (the one its starter
//     template ships and its strict mode insists on), on a copy of the shipped sources: this
//     repository's own eslint.config.mjs also lints tests and scripts, which that default does not fit.
//  3. The tarball ships no source maps: they would point at .ts files that are not in it.
// Builds first, so that what is checked is what would be published. Exits 1 on any finding.
//
// Both tools live in tools/n8n-verify (its own package.json and lock, installed here when missing),
// not among the package's devDependencies: they bring n8n's AI node SDK, which the package's copies
// in the e2e and demo user folders (inside this repository) would otherwise find on n8n 1.x.
'use strict';

const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const TOOLS = path.join(ROOT, 'tools', 'n8n-verify');
const NODE_CLI = path.join(TOOLS, 'node_modules', '@n8n', 'node-cli');

/** Installs tools/n8n-verify from its lock when it is not installed, or not as the lock says. */
function ensureTools() {
	const lock = JSON.parse(fs.readFileSync(path.join(TOOLS, 'package-lock.json'), 'utf8'));
	const installed = Object.entries(lock.packages[''].devDependencies).every(([name, version]) => {
		const manifest = path.join(TOOLS, 'node_modules', name, 'package.json');
		return fs.existsSync(manifest) && JSON.parse(fs.readFileSync(manifest, 'utf8')).version === version;
	});
	if (installed) return;
	step('installing tools/n8n-verify (npm ci)');
	execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: TOOLS, stdio: 'inherit' });
}

function step(title) {
	process.stdout.write(`\n== ${title}\n`);
}

/** Packs the package into `into` and unpacks it into `into/package`; returns the packed file list. */
function packAndUnpack(into) {
	const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', into], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
	const [pack] = JSON.parse(out);
	const unpacked = path.join(into, 'package');
	fs.mkdirSync(unpacked);
	execFileSync('tar', ['-xzf', path.join(into, path.basename(pack.filename)), '-C', unpacked, '--strip-components=1']);
	return { unpacked, files: pack.files.map((f) => f.path), size: pack.size };
}

/** n8n's default lint (its starter template's eslint.config.mjs) on a copy of the shipped sources. */
function n8nNodeLint(work) {
	const copy = path.join(work, 'source');
	fs.mkdirSync(copy);
	for (const entry of ['package.json', 'tsconfig.json', 'nodes', 'credentials']) {
		fs.cpSync(path.join(ROOT, entry), path.join(copy, entry), { recursive: true });
	}
	fs.copyFileSync(path.join(NODE_CLI, 'dist', 'template', 'templates', 'shared', 'default', 'eslint.config.mjs'), path.join(copy, 'eslint.config.mjs'));
	fs.symlinkSync(path.join(TOOLS, 'node_modules'), path.join(copy, 'node_modules'), 'dir');
	const cli = path.join(NODE_CLI, 'bin', 'n8n-node.mjs');
	const res = spawnSync(process.execPath, [cli, 'lint'], { cwd: copy, stdio: 'inherit', env: { ...process.env, CI: 'true' } });
	return res.status === 0;
}

async function main() {
	ensureTools();
	step('npm run build');
	execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });

	const work = fs.mkdtempSync(path.join(os.tmpdir(), 'mgw-verify-'));
	const failures = [];
	try {
		step('npm pack');
		const { unpacked, files, size } = packAndUnpack(work);
		process.stdout.write(`${files.length} files, ${(size / 1024).toFixed(1)} KB packed\n`);
		const maps = files.filter((f) => f.endsWith('.map'));
		if (maps.length) failures.push(`the tarball ships ${maps.length} source maps (${maps[0]} ...)`);

		const { analyzePackage, SOURCE_FILE_PATTERNS } = await import(require.resolve('@n8n/scan-community-package/scanner/scanner.mjs', { paths: [TOOLS] }));
		for (const [label, dir, patterns] of [
			['source', ROOT, SOURCE_FILE_PATTERNS],
			['packed tarball', unpacked, ['**/*.js', 'package.json']],
		]) {
			step(`n8n scanner (analyzePackage) on the ${label}`);
			const result = await analyzePackage(dir, patterns);
			if (result.passed) process.stdout.write('passed\n');
			else {
				process.stdout.write(`${result.message}\n${result.details ?? ''}\n`);
				failures.push(`the scanner fails on the ${label}: ${result.message}`);
			}
		}

		step("n8n-node lint (n8n's default configuration) on the shipped sources");
		if (!n8nNodeLint(work)) failures.push('n8n-node lint fails');
	} finally {
		fs.rmSync(work, { recursive: true, force: true });
	}

	if (failures.length) {
		process.stdout.write(`\nNOT ready for n8n's verification:\n${failures.map((f) => `- ${f}`).join('\n')}\n`);
		process.exit(1);
	}
	process.stdout.write("\nReady for n8n's verification: scanner and n8n-node lint pass, no source maps shipped.\n");
}

main().catch((error) => {
	process.stderr.write(`${error.stack ?? error}\n`);
	process.exit(1);
});
