/**
 * The layers of the package, as docs/ARCHITECTURE.md states them, kept by reading every import of
 * every file under nodes/ and credentials/: a folder of nodes/shared imports only from itself and
 * the folders listed before it in the table "nodes/shared/ by layer" (downward, never sideways nor
 * up); nodes/shared imports no node folder and not credentials/; no node folder imports another;
 * the only packages are n8n-workflow and @n8n/ai-node-sdk. The order is read from the document, so
 * the map and the code cannot drift apart: a folder missing from the table fails too.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

const ROOT = path.resolve(__dirname, '..', '..');
const PACKAGES = new Set(['n8n-workflow', '@n8n/ai-node-sdk']);

interface Import {
	/** Repository-relative path of the importing file, with forward slashes. */
	file: string;
	line: number;
	specifier: string;
}

/** The folders of nodes/shared in the order of the ARCHITECTURE.md table (each imports only from those before it). */
function layerOrderFrom(architecture: string): string[] {
	const section = /^### `nodes\/shared\/` by layer$([\s\S]*?)^#{1,3} /m.exec(architecture)?.[1] ?? '';
	return [...section.matchAll(/^\| `([a-z]+)\/` \|/gm)].map((row) => row[1]);
}

function importsOf(file: string, text: string): Import[] {
	const { importedFiles } = ts.preProcessFile(text, true, true);
	return importedFiles.map((imported) => ({
		file,
		line: text.slice(0, imported.pos).split('\n').length,
		specifier: imported.fileName,
	}));
}

/** Where a repository-relative path sits: a shared layer, a node folder, the credentials, or elsewhere. */
function placeOf(file: string): { kind: 'shared'; layer: string } | { kind: 'node'; folder: string } | { kind: 'credentials' } | { kind: 'outside' } {
	const parts = file.split('/');
	if (parts[0] === 'credentials' && parts.length > 1) return { kind: 'credentials' };
	if (parts[0] !== 'nodes' || parts.length < 3) return { kind: 'outside' };
	if (parts[1] === 'shared') return parts.length >= 4 ? { kind: 'shared', layer: parts[2] } : { kind: 'outside' };
	return { kind: 'node', folder: parts[1] };
}

/** Every broken rule, one sentence each naming the file, its line and the import. */
function layerViolations(imports: Import[], order: string[]): string[] {
	const rank = new Map(order.map((layer, index) => [layer, index]));
	const problems: string[] = [];
	for (const { file, line, specifier } of imports) {
		const at = `${file}:${line} imports '${specifier}'`;
		if (!specifier.startsWith('.')) {
			if (!PACKAGES.has(specifier)) problems.push(`${at}: only ${[...PACKAGES].join(' and ')} may be imported (no runtime dependencies)`);
			continue;
		}
		const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier));
		const from = placeOf(file);
		const to = placeOf(target);
		if (to.kind === 'outside') problems.push(`${at}: ${target} is outside nodes/ and credentials/`);
		else if (from.kind === 'shared' && to.kind !== 'shared') problems.push(`${at}: nodes/shared imports no node folder and not credentials/`);
		else if (from.kind === 'shared' && to.kind === 'shared' && to.layer !== from.layer) {
			const fromRank = rank.get(from.layer);
			const toRank = rank.get(to.layer);
			if (fromRank === undefined) problems.push(`${at}: nodes/shared/${from.layer}/ is not in the table of layers in docs/ARCHITECTURE.md`);
			else if (toRank === undefined) problems.push(`${at}: nodes/shared/${to.layer}/ is not in the table of layers in docs/ARCHITECTURE.md`);
			else if (toRank > fromRank) problems.push(`${at}: ${from.layer}/ imports only from the layers listed before it (${order.slice(0, fromRank).join(', ') || 'none'}), not from ${to.layer}/`);
		} else if (from.kind === 'node' && to.kind === 'node' && to.folder !== from.folder) problems.push(`${at}: a node folder does not import another node folder`);
		else if (from.kind === 'node' && to.kind === 'credentials') problems.push(`${at}: a node folder does not import credentials/`);
		else if (from.kind === 'credentials' && to.kind === 'node') problems.push(`${at}: credentials/ imports only from nodes/shared`);
	}
	return problems;
}

function sourceFiles(folder: string): string[] {
	return fs
		.readdirSync(path.join(ROOT, folder), { recursive: true, encoding: 'utf8' })
		.filter((name) => name.endsWith('.ts'))
		.map((name) => path.posix.join(folder, name.split(path.sep).join('/')))
		.sort();
}

const order = layerOrderFrom(fs.readFileSync(path.join(ROOT, 'docs', 'ARCHITECTURE.md'), 'utf8'));
const files = [...sourceFiles('nodes'), ...sourceFiles('credentials')];
const imports = files.flatMap((file) => importsOf(file, fs.readFileSync(path.join(ROOT, file), 'utf8')));

describe('the layers of nodes/ and credentials/', () => {
	it('the table in docs/ARCHITECTURE.md names every folder of nodes/shared, and only those', () => {
		const folders = fs
			.readdirSync(path.join(ROOT, 'nodes', 'shared'), { withFileTypes: true })
			.filter((entry) => entry.isDirectory())
			.map((entry) => entry.name);
		expect([...order].sort()).toEqual(folders.sort());
		expect(order[0]).toBe('credential');
	});

	it('every import goes downward: no layer imports a later one, no node folder another, only the allowed packages', () => {
		// the reading itself is checked: every file's imports are found (a reader that finds none would pass anything)
		expect(files.length).toBeGreaterThan(50);
		expect(new Set(imports.map((found) => found.file)).size).toBeGreaterThan(50);
		expect(imports.filter((found) => found.specifier === 'n8n-workflow').length).toBeGreaterThan(50);
		expect(layerViolations(imports, order)).toEqual([]);
	});

	it('names the file, the line and the import of each broken rule', () => {
		const text = [
			"import { sleep } from 'n8n-workflow';",
			"import type { Clock } from '../wire/timing';",
			'import {',
			'\tvalidate,',
			"} from '../items/validate';",
			"import { x } from '../../GatewayChat/chat';",
			"import axios from 'axios';",
			"export { y } from '../../../test/helpers/fakeClock';",
			"const later = async () => await import('../panel/models');",
		].join('\n');
		expect(layerViolations(importsOf('nodes/shared/wire/example.ts', text), ['credential', 'failures', 'wire', 'items', 'panel'])).toEqual([
			"nodes/shared/wire/example.ts:5 imports '../items/validate': wire/ imports only from the layers listed before it (credential, failures), not from items/",
			"nodes/shared/wire/example.ts:6 imports '../../GatewayChat/chat': nodes/shared imports no node folder and not credentials/",
			"nodes/shared/wire/example.ts:7 imports 'axios': only n8n-workflow and @n8n/ai-node-sdk may be imported (no runtime dependencies)",
			"nodes/shared/wire/example.ts:8 imports '../../../test/helpers/fakeClock': test/helpers/fakeClock is outside nodes/ and credentials/",
			"nodes/shared/wire/example.ts:9 imports '../panel/models': wire/ imports only from the layers listed before it (credential, failures), not from panel/",
		]);
		expect(layerViolations(importsOf('nodes/GatewayChat/chat.ts', "import { v } from '../GatewayMessages/request';\nimport { s } from '../shared/chat/chatCall';"), ['chat'])).toEqual([
			"nodes/GatewayChat/chat.ts:1 imports '../GatewayMessages/request': a node folder does not import another node folder",
		]);
	});
});
