/**
 * The one copy of each node's field table: the page in docs/nodes/ that the node's Docs link opens.
 * Its table is made from the node description (scripts/docs-tables.js), and this test fails when a
 * field, a default, where it is shown or its description changed without the page following.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { INodeType } from 'n8n-workflow';

import { GatewayChat } from '../../nodes/GatewayChat/GatewayChat.node';
import { GatewayChatModel } from '../../nodes/GatewayChatModel/GatewayChatModel.node';
import { GatewayImageGenerate } from '../../nodes/GatewayImageGenerate/GatewayImageGenerate.node';
import { GatewayMessages } from '../../nodes/GatewayMessages/GatewayMessages.node';
import { GatewayAccount } from '../../nodes/GatewayAccount/GatewayAccount.node';
import { GatewayPlantCreate } from '../../nodes/GatewayPlantCreate/GatewayPlantCreate.node';
import { GatewayVideoGenerate } from '../../nodes/GatewayVideoGenerate/GatewayVideoGenerate.node';
import * as tables from '../../scripts/docs-tables';

const NODES: INodeType[] = [new GatewayAccount(), new GatewayChat(), new GatewayChatModel(), new GatewayImageGenerate(), new GatewayMessages(), new GatewayPlantCreate(), new GatewayVideoGenerate()];

describe.each(NODES.map((node) => [node.description.name, node] as const))('docs/nodes/%s.md', (name, node) => {
	const page = fs.readFileSync(tables.pagePath(name), 'utf8');

	it('has the field table of the node description (after changing a field: `npm run build && npm run docs`)', () => {
		expect(tables.tableIn(page)).toBe(tables.fieldsTable(node.description));
	});

	it('has a row for every field, named as the editor names it, with its default', () => {
		const table = tables.tableIn(page) ?? '';
		for (const field of node.description.properties) {
			if (field.type === 'notice' || field.type === 'hidden') continue;
			const children = field.type === 'collection' ? (field.options as Array<{ displayName: string }>).map((c) => `${field.displayName} → ${c.displayName}`) : [];
			for (const label of children.length ? children : field.type === 'fixedCollection' ? [] : [field.displayName]) {
				expect(table).toContain(`| ${label} |`);
			}
		}
	});

	it('holds no second copy of a field table outside the generated block', () => {
		const rest = page.replace(tables.tableIn(page) ?? '', '');
		expect(rest).not.toMatch(/^\| *Field *\|/m);
	});
});

describe('the README and the docs pages', () => {
	const ROOT = path.resolve(__dirname, '..', '..');
	const pages = ['README.md', 'CONTRIBUTING.md', ...fs.readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md')).map((f) => path.join('docs', f))];
	const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

	it('the README stays short: under 15 KB', () => {
		expect(Buffer.byteLength(readme)).toBeLessThan(15 * 1024);
	});

	it('the README links every example as a raw file n8n can import by URL', () => {
		const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { repository: { url: string } };
		const [, owner, repo] = /github\.com\/([^/]+)\/([^/.]+)/.exec(manifest.repository.url) ?? [];
		for (const file of fs.readdirSync(path.join(ROOT, 'examples')).filter((f) => f.endsWith('.json'))) {
			expect(readme).toContain(`(https://raw.githubusercontent.com/${owner}/${repo}/main/examples/${file})`);
		}
	});

	it.each(pages)('%s: every relative link and image points at a file that exists', (page) => {
		const text = fs.readFileSync(path.join(ROOT, page), 'utf8').replace(/```[\s\S]*?```/g, '');
		const targets = [...text.matchAll(/\]\(([^)\s]+)\)|(?:src|srcset)="([^"]+)"/g)].map((m) => m[1] ?? m[2]);
		const broken = targets
			.filter((t) => !/^(https?:|mailto:|#)/.test(t))
			.map((t) => t.split('#')[0])
			.filter((t) => !fs.existsSync(path.join(ROOT, path.dirname(page), t)));
		expect(broken).toEqual([]);
	});

	it.each(pages)('%s: every link to a heading (#anchor) finds that heading', (page) => {
		const text = fs.readFileSync(path.join(ROOT, page), 'utf8').replace(/```[\s\S]*?```/g, '');
		const anchors = [...text.matchAll(/\]\(([^)\s]*\.md|)#([^)\s]+)\)/g)].map(([, file, anchor]) => [file || path.basename(page), anchor, file ? path.join(path.dirname(page), file) : page]);
		const missing = anchors.filter(([, anchor, target]) => !headingAnchors(path.join(ROOT, target)).includes(anchor)).map(([file, anchor]) => `${file}#${anchor}`);
		expect(missing).toEqual([]);
	});
});

/** The anchors GitHub makes of a Markdown file's headings: lower case, punctuation dropped, spaces as "-". */
function headingAnchors(file: string): string[] {
	const text = fs.readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
	return [...text.matchAll(/^#{1,6} +(.+?) *$/gm)].map(([, heading]) =>
		heading
			.toLowerCase()
			.replace(/[^\p{L}\p{N} _-]/gu, '')
			.replace(/ /g, '-'),
	);
}
