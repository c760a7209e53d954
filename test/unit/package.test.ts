/**
 * Publish readiness: what `npm pack` would ship, that the packed package installs and loads
 * through its `main` (index.js), and that n8n's community-package lint rules read package.json.
 * Needs the build (`npm test` builds before the unit suite).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
	dependencies?: Record<string, string>;
	peerDependencies?: Record<string, string>;
	name: string;
	main: string;
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

	it('ships dist, index.js, README, LICENSE, CHANGELOG and package.json, and nothing else', () => {
		expect(files.filter((f) => !f.startsWith('dist/'))).toEqual(['CHANGELOG.md', 'LICENSE', 'README.md', 'index.js', 'package.json']);
		// no sources, tests or examples inside dist either: compiled code, typings, codex, icons
		expect(files.filter((f) => f.startsWith('dist/') && !/\.(js|d\.ts|node\.json|svg)$/.test(f))).toEqual([]);
	});

	it('ships no source maps: they would point at .ts sources the package does not contain', () => {
		expect(files.filter((f) => f.endsWith('.map'))).toEqual([]);
	});

	it('ships no leftovers: every compiled file has its source (the build does not empty dist/)', () => {
		const stale = files
			.filter((f) => f.startsWith('dist/') && /\.(js|d\.ts)$/.test(f))
			.map((f) => f.replace(/^dist\//, '').replace(/(\.d\.ts|\.js)$/, '.ts'))
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

describe('the packed package, installed', () => {
	let work: string;
	let installed: string;
	beforeAll(() => {
		work = fs.mkdtempSync(path.join(os.tmpdir(), 'mgw-pack-'));
		const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
		const [{ filename }] = JSON.parse(out) as Array<{ filename: string }>;
		const app = path.join(work, 'app');
		fs.mkdirSync(app);
		fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
		// Offline: the package has no dependencies, and its peer n8n-workflow (which n8n provides) is
		// not installed by npm but linked from this repository afterwards, as n8n's own would be there.
		execFileSync('npm', ['install', path.join(work, path.basename(filename)), '--ignore-scripts', '--no-audit', '--no-fund', '--offline', '--legacy-peer-deps', '--no-package-lock'], {
			cwd: app,
			stdio: ['ignore', 'ignore', 'pipe'],
		});
		fs.symlinkSync(path.join(ROOT, 'node_modules', 'n8n-workflow'), path.join(app, 'node_modules', 'n8n-workflow'), 'dir');
		installed = path.join(app, 'node_modules', manifest.name);
	}, 120000);
	afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

	it('is installed from the tarball with index.js as its main', () => {
		expect(fs.lstatSync(installed).isSymbolicLink()).toBe(false);
		expect(manifest.main).toBe('index.js');
		expect(fs.existsSync(path.join(installed, 'index.js'))).toBe(true);
	});

	it("require('n8n-nodes-model-gateway') gives every node and credential class n8n loads", () => {
		// A separate Node process: the app's own module resolution, not jest's.
		const script = `const m = require(${JSON.stringify(manifest.name)}); console.log(JSON.stringify(Object.fromEntries(Object.entries(m).map(([k, C]) => { const o = new C(); return [k, o.description ? o.description.name : o.name]; }))))`;
		const out = execFileSync(process.execPath, ['-e', script], { cwd: path.dirname(path.dirname(installed)), encoding: 'utf8' });
		const exported = JSON.parse(out) as Record<string, string>;
		const expected: Record<string, string> = {};
		for (const file of [...manifest.n8n.nodes, ...manifest.n8n.credentials]) {
			const classes = require(path.join(ROOT, file)) as Record<string, new () => { name?: string; description?: { name: string } }>;
			for (const [key, Class] of Object.entries(classes)) {
				const instance = new Class();
				expected[key] = instance.description ? instance.description.name : (instance.name ?? '');
			}
		}
		expect(exported).toEqual(expected);
		expect(Object.keys(exported)).toEqual(expect.arrayContaining(['GatewayImageGenerate', 'GatewayVideoGenerate', 'GatewayChat', 'GatewayMessages', 'GatewayPlantCreate', 'GatewayAccount', 'GatewayApi']));
	});
});

describe('lint', () => {
	it("has no inline eslint-disable comment anywhere: n8n's scanner ignores them, so none may be needed", () => {
		const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '*.ts', '*.js', '*.mjs', '*.cjs'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
		const disabled = files.filter((file) => fs.existsSync(path.join(ROOT, file)) && /(\/\/|\/\*)\s*eslint-disable/.test(fs.readFileSync(path.join(ROOT, file), 'utf8')));
		expect(disabled).toEqual([]);
	});
});

describe('package.json', () => {
	it('has no runtime dependencies, n8n-workflow as a peer, the community keyword and MIT', () => {
		expect(manifest.dependencies ?? {}).toEqual({});
		// Peers are what n8n itself provides to community packages: n8n-workflow, and the AI node SDK
		// (n8n 2.16 and later) for the chat-model sub-node.
		expect(Object.keys(manifest.peerDependencies ?? {})).toContain('n8n-workflow');
		for (const peer of Object.keys(manifest.peerDependencies ?? {})) expect(['n8n-workflow', '@n8n/ai-node-sdk']).toContain(peer);
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
