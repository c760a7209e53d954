/**
 * The README's commands work on a fresh clone: the ones on its first screen come first, every
 * `npm run` it (or another page) names exists, and the two install routes agree with the package
 * (`npm pack` writes the tarball the README installs; both routes leave the peers out).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { PACKAGE, ROOT, bashCommands, installCommands, readmeText } from '../helpers/readmeCommands';

const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; scripts: Record<string, string> };
const pages = ['README.md', 'CONTRIBUTING.md', 'test/gateway/README.md', 'test/e2e/README.md', ...fs.readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md')).map((f) => path.join('docs', f))];

describe("the README's first screen", () => {
	const readme = readmeText();

	it('gives set-up with a first run, and the tests, before anything else', () => {
		const secondHeading = [...readme.matchAll(/^## /gm)][1]?.index;
		const commands = bashCommands(readme.slice(0, secondHeading)).join('\n');
		expect(commands).toMatch(/^npm install && npm run demo$/m);
		expect(commands).toMatch(/^npm test$/m);
	});
});

describe('the install routes', () => {
	it('pack the clone into the tarball the README then installs', () => {
		const { pack, tarball } = installCommands();
		expect(pack.at(-1)).toEqual(['npm', 'pack']);
		expect(path.basename(tarball.file)).toBe(`${manifest.name}-${manifest.version}.tgz`);
		expect(manifest.name).toBe(PACKAGE);
	});

	it('leave out the peers n8n provides, the tarball and the npm name alike', () => {
		const { tarball, byName } = installCommands();
		expect(tarball.options).toContain('--omit=peer');
		expect(byName.options).toEqual(tarball.options);
	});
});

it.each(pages)('%s: every `npm run <script>` it names is a script of package.json', (page) => {
	const text = fs.readFileSync(path.join(ROOT, page), 'utf8');
	const named = [...text.matchAll(/\bnpm run ([\w:-]+)/g)].map(([, script]) => script);
	expect(named.filter((script) => !(script in manifest.scripts))).toEqual([]);
});
