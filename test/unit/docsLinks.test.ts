/**
 * The Docs links, as n8n shows them: every built node and the credential link to their own page in
 * the repository's docs/ folder, made from package.json's repository URL (the one place for the
 * package's links) by the build. n8n's editor opens a node's `documentationUrl` as it is, and
 * appends its tracking query to a codex `primaryDocumentation` link: so no `#anchor` anywhere.
 * Needs the build (`npm test` builds before the unit suite).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ICredentialType, INodeTypeDescription } from 'n8n-workflow';

const ROOT = path.resolve(__dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
	homepage: string;
	bugs: { url: string };
	repository: { url: string };
	n8n: { nodes: string[]; credentials: string[] };
};
const gulpfile = require(path.join(ROOT, 'gulpfile.js')) as { 'build:links': { source: () => string } };

const REPOSITORY = manifest.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
const DOCS_PREFIX = `${REPOSITORY}/blob/main/docs/`;

function built<T>(file: string): T {
	const full = path.join(ROOT, file);
	if (!fs.existsSync(full)) throw new Error(`${file} is not built: run \`npm run build\` first`);
	const exported = require(full) as Record<string, new () => T>;
	return new (Object.values(exported)[0])();
}

/** The file in this repository that a Docs URL points at. */
function target(url: string): string {
	expect(url.startsWith(DOCS_PREFIX)).toBe(true);
	expect(url).not.toMatch(/[#?]/);
	return path.join(ROOT, 'docs', url.slice(DOCS_PREFIX.length));
}

describe('the one place for links', () => {
	it('package.json holds the repository, and homepage and bugs are in it', () => {
		expect(REPOSITORY).toMatch(/^https:\/\/github\.com\/[^/]+\/[^/]+$/);
		expect(manifest.homepage.startsWith(REPOSITORY)).toBe(true);
		expect(manifest.bugs.url).toBe(`${REPOSITORY}/issues`);
	});

	it('nodes/shared/panel/links.ts is what the build makes from package.json and docs/ (run `npm run build` after changing them)', () => {
		expect(fs.readFileSync(path.join(ROOT, 'nodes', 'shared', 'panel', 'links.ts'), 'utf8')).toBe(gulpfile['build:links'].source());
	});

	it('no source file links to the npm page or to a README anchor instead', () => {
		const files = ['credentials', 'nodes'].flatMap((dir) =>
			fs.readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' }).filter((f) => /\.(ts|json)$/.test(f)).map((f) => path.join(dir, f)),
		);
		for (const file of files) expect([file, fs.readFileSync(path.join(ROOT, file), 'utf8')]).not.toEqual([file, expect.stringMatching(/npmjs\.com\/package|README\.md#/)]);
	});
});

describe('Docs links of the built package', () => {
	describe.each(manifest.n8n.nodes)('%s', (file) => {
		const { description } = built<{ description: INodeTypeDescription }>(file);
		const codex = JSON.parse(fs.readFileSync(path.join(ROOT, file.replace(/\.js$/, '.json')), 'utf8'));

		it("links the node's own page in docs/nodes/, which exists", () => {
			const url = description.documentationUrl ?? '';
			expect(url).toBe(`${DOCS_PREFIX}nodes/${description.name}.md`);
			expect(fs.existsSync(target(url))).toBe(true);
		});

		it('has the same page in its codex file, and the credential page beside it', () => {
			expect(codex.resources.primaryDocumentation).toEqual([{ url: description.documentationUrl }]);
			const credentialUrl = codex.resources.credentialDocumentation[0].url;
			expect(credentialUrl).toBe(`${DOCS_PREFIX}credentials/gatewayApi.md`);
			expect(fs.existsSync(target(credentialUrl))).toBe(true);
		});
	});

	it.each(manifest.n8n.credentials)("%s links the credential's own page in docs/credentials/, which exists", (file) => {
		const credential = built<ICredentialType>(file);
		const url = credential.documentationUrl ?? '';
		expect(url).toBe(`${DOCS_PREFIX}credentials/${credential.name}.md`);
		expect(fs.existsSync(target(url))).toBe(true);
	});
});

describe('the docs pages', () => {
	const pages = ['nodes', 'credentials'].flatMap((dir) => fs.readdirSync(path.join(ROOT, 'docs', dir)).map((f) => path.join('docs', dir, f)));

	it('exist for every node and credential the package registers, and for nothing else', () => {
		const expected = [
			...manifest.n8n.nodes.map((f) => built<{ description: INodeTypeDescription }>(f).description.name).map((n) => `docs/nodes/${n}.md`),
			...manifest.n8n.credentials.map((f) => `docs/credentials/${built<ICredentialType>(f).name}.md`),
		];
		expect(pages.map((p) => p.split(path.sep).join('/')).sort()).toEqual(expected.sort());
	});

	it.each(pages)('%s: its relative links lead to files that exist', (page) => {
		const text = fs.readFileSync(path.join(ROOT, page), 'utf8');
		const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map(([, link]) => link).filter((link) => !/^[a-z]+:/.test(link));
		for (const link of links) expect([link, fs.existsSync(path.resolve(ROOT, path.dirname(page), link.split('#')[0]))]).toEqual([link, true]);
	});
});
