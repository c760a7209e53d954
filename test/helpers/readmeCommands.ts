/**
 * The README's install commands, word for word as a user copies them: the unit test checks they
 * agree with package.json, and test/e2e/readmeInstall.test.ts runs them on a fresh folder.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');
export const PACKAGE = 'n8n-nodes-model-gateway';

export function readmeText(): string {
	return fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
}

/** The text under the first `## <title…>` heading, up to the next `## ` heading. */
export function section(markdown: string, title: string): string {
	const start = new RegExp(`^## ${title}\\b.*$`, 'm').exec(markdown);
	if (!start) throw new Error(`the README has no "## ${title}" section`);
	const rest = markdown.slice(start.index + start[0].length);
	const end = rest.search(/^## /m);
	return end < 0 ? rest : rest.slice(0, end);
}

/** The commands of a section's ```bash blocks, one per line, comments cut off. */
export function bashCommands(text: string): string[] {
	return [...text.matchAll(/```bash\n([\s\S]*?)```/g)]
		.flatMap(([, block]) => block.split('\n'))
		.map((line) => line.replace(/\s+#.*$/, '').trim())
		.filter((line) => line !== '' && !line.startsWith('#'));
}

export interface InstallCommands {
	/** The clone's command that packs it, split at `&&`: its last step is `npm pack`. */
	pack: string[][];
	/** `npm install <path>/<tarball> <options>` in the n8n user folder. */
	tarball: { file: string; options: string[] };
	/** `npm install n8n-nodes-model-gateway <options>`, for once the package is published. */
	byName: { options: string[] };
}

export function installCommands(readme = readmeText()): InstallCommands {
	const commands = bashCommands(section(readme, 'Install'));
	const words = (line: string) => line.split(/\s+/);
	const packLine = commands.find((line) => /(^|&&\s*)npm pack$/.test(line));
	const tarballLine = commands.find((line) => new RegExp(`^npm install \\S*${PACKAGE}-[^\\s/]+\\.tgz\\b`).test(line));
	const nameLine = commands.find((line) => line.startsWith(`npm install ${PACKAGE} `) || line === `npm install ${PACKAGE}`);
	if (!packLine || !tarballLine || !nameLine) {
		throw new Error(`the README's Install section lacks ${[!packLine && 'the `npm pack` line', !tarballLine && 'the tarball install line', !nameLine && `the \`npm install ${PACKAGE}\` line`].filter(Boolean).join(' and ')}`);
	}
	const [, , tarballPath, ...tarballOptions] = words(tarballLine);
	return {
		pack: packLine.split('&&').map((step) => words(step.trim())),
		tarball: { file: tarballPath, options: tarballOptions },
		byName: { options: words(nameLine).slice(3) },
	};
}
