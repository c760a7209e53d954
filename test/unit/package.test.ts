/**
 * Publish readiness: what `npm pack` would ship, and that n8n's community-package lint rules read
 * package.json. Needs the build (`npm test` builds before the unit suite).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
	dependencies?: Record<string, string>;
	peerDependencies?: Record<string, string>;
	keywords: string[];
	license: string;
	files: string[];
	n8n: { nodes: string[]; credentials: string[] };
};

function packedFiles(): string[] {
	// --ignore-scripts: packing must not build or lint; only list what is there.
	const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
	const [pack] = JSON.parse(out) as Array<{ files: Array<{ path: string }> }>;
	return pack.files.map((f) => f.path).sort();
}

/** ESLint's findings on `text` linted as the repository's package.json. */
function lintManifest(text: string): Array<{ ruleId: string; message: string }> {
	const eslint = path.join(ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js');
	const res = spawnSync(process.execPath, [eslint, '--stdin', '--stdin-filename', 'package.json', '--format', 'json'], {
		cwd: ROOT,
		input: text,
		encoding: 'utf8',
	});
	if (!res.stdout) throw new Error(`eslint printed nothing (exit ${res.status}): ${res.stderr}`);
	return (JSON.parse(res.stdout) as Array<{ messages: Array<{ ruleId: string; message: string }> }>)[0].messages;
}

describe('npm pack', () => {
	let files: string[];
	beforeAll(() => {
		const missing = [...manifest.n8n.nodes, ...manifest.n8n.credentials].filter((f) => !fs.existsSync(path.join(ROOT, f)));
		if (missing.length) throw new Error(`not built (${missing.join(', ')}): run \`npm run build\` first`);
		files = packedFiles();
	}, 60000);

	it('ships dist, README, LICENSE and package.json, and nothing else', () => {
		expect(files.filter((f) => !f.startsWith('dist/'))).toEqual(['LICENSE', 'README.md', 'package.json']);
		// no sources, tests or examples inside dist either: compiled code, typings, maps, codex, icons
		expect(files.filter((f) => f.startsWith('dist/') && !/\.(js|d\.ts|js\.map|node\.json|svg)$/.test(f))).toEqual([]);
	});

	it('ships no leftovers: every compiled file has its source (the build does not empty dist/)', () => {
		const stale = files
			.filter((f) => /\.(js|d\.ts|js\.map)$/.test(f))
			.map((f) => f.replace(/^dist\//, '').replace(/(\.d\.ts|\.js\.map|\.js)$/, '.ts'))
			.filter((source) => !fs.existsSync(path.join(ROOT, source)));
		expect(stale).toEqual([]);
	});

	it('ships every node and credential that package.json registers, with its codex file and icons', () => {
		for (const file of [...manifest.n8n.nodes, ...manifest.n8n.credentials]) expect(files).toContain(file);
		for (const node of manifest.n8n.nodes) {
			expect(files).toContain(node.replace(/\.js$/, '.json'));
			const dir = path.posix.dirname(node);
			const icons = files.filter((f) => path.posix.dirname(f) === dir && f.endsWith('.svg'));
			expect(icons.some((f) => f.endsWith('.dark.svg'))).toBe(true);
			expect(icons.some((f) => !f.endsWith('.dark.svg'))).toBe(true);
		}
	});
});

describe('package.json', () => {
	it('has no runtime dependencies, n8n-workflow as a peer, the community keyword and MIT', () => {
		expect(manifest.dependencies ?? {}).toEqual({});
		expect(Object.keys(manifest.peerDependencies ?? {})).toEqual(['n8n-workflow']);
		expect(manifest.keywords).toContain('n8n-community-node-package');
		expect(manifest.license).toBe('MIT');
	});

	describe("n8n's community-package lint rules", () => {
		const text = fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8');

		it('pass on the real package.json', () => {
			expect(lintManifest(text)).toEqual([]);
		}, 60000);

		it('really read it: a runtime dependency and a node outside dist/ are reported', () => {
			const broken = JSON.parse(text) as typeof manifest;
			broken.dependencies = { 'left-pad': '1.3.0' };
			broken.n8n.nodes = [...broken.n8n.nodes, 'nodes/Stray/Stray.node.ts'];
			const rules = lintManifest(JSON.stringify(broken, null, 2)).map((m) => m.ruleId);
			expect(rules).toEqual(expect.arrayContaining(['@n8n/community-nodes/no-runtime-dependencies', '@n8n/community-nodes/n8n-object-validation']));
		}, 60000);
	});
});
