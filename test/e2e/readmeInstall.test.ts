/**
 * What a user following only the README does: the README's route from a clone (its `npm pack`, then
 * its `npm install <tarball> --omit=peer` line, word for word, in a fresh folder), then one example
 * imported with the user's credential and run in n8n 2.x.
 *
 * Runs on the n8n2 line unless E2E_ONLY is set without a part that matches "readme"
 * (e.g. `E2E_ONLY=mgwExChat0001,readme`). Needs the npm registry (npm resolves the peers it leaves out).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import type { E2eWorkflowResult } from './harness';
import { E2E_LINE } from './harness';
import { ROOT, TESTED_VERSIONS } from './paths';
import { PACKAGE, installCommands } from '../helpers/readmeCommands';
import { runWorkflows } from '../../scripts/n8n/headless';
import { defaultDir, ensureRuntime } from '../../scripts/n8n/runtime';
import { EXAMPLE_CREDENTIAL, gatewayCredential, withExampleCredential } from '../../scripts/n8n/workflowSet';
import { startGateway } from '../gateway';
import type { Gateway } from '../gateway';

const only = (process.env.E2E_ONLY ?? '').toLowerCase();
const runs = E2E_LINE === 'n8n2' && (only === '' || only.split(',').some((part) => part.trim() !== '' && 'readme'.includes(part.trim())));

(runs ? describe : describe.skip)('the README, followed by a user: install the tarball, import an example, run it (n8n 2.x)', () => {
	let work: string;
	let tarballName: string;
	let installed: string;
	let gateway: Gateway;
	let result: E2eWorkflowResult;

	beforeAll(async () => {
		work = fs.mkdtempSync(path.join(os.tmpdir(), 'mgw-readme-'));
		const readme = installCommands();
		// The README's `npm pack` (the build before it is done: `npm test` builds first), written here
		// rather than into the clone; it must write the file the README's next line installs.
		const [npmPack, ...packArgs] = readme.pack.at(-1) ?? [];
		const packed = JSON.parse(execFileSync(npmPack, [...packArgs, '--json', '--ignore-scripts', '--pack-destination', work], { cwd: ROOT, encoding: 'utf8' })) as Array<{ filename: string }>;
		tarballName = path.basename(packed[0].filename);
		const tarball = path.join(work, tarballName);
		// `mkdir -p ~/.n8n/nodes && cd ~/.n8n/nodes`, then the README's line with the tarball's real path.
		const nodes = path.join(work, 'home', '.n8n', 'nodes');
		fs.mkdirSync(nodes, { recursive: true });
		const [npm, ...args] = ['npm', 'install', tarball, ...readme.tarball.options];
		// As a user runs it: not with this repository's npm settings (`npm test` passes ignore-scripts on).
		const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_config_ignore_scripts$/i.test(key)));
		execFileSync(npm, [...args, '--no-audit', '--no-fund'], { cwd: nodes, stdio: ['ignore', 'ignore', 'pipe'], env });
		installed = path.join(nodes, 'node_modules', PACKAGE);

		const version = TESTED_VERSIONS.n8n2;
		const runtime = await ensureRuntime({ version, dir: defaultDir(version), log: () => true });
		gateway = await startGateway();
		const example = withExampleCredential(JSON.parse(fs.readFileSync(path.join(ROOT, 'examples', 'chat-summariser.json'), 'utf8')));
		const results = await runWorkflows({
			runtime,
			packageDir: installed,
			credentials: [gatewayCredential(EXAMPLE_CREDENTIAL, { apiKey: 'sk-readme-user-1', baseUrl: gateway.baseUrl, customHeaders: undefined })],
			workflows: [example],
		});
		result = results[example.id] as E2eWorkflowResult;
	}, 15 * 60 * 1000);

	afterAll(async () => {
		await gateway?.close();
		if (work) fs.rmSync(work, { recursive: true, force: true });
	});

	it("`npm pack` writes the tarball the README's install line names", () => {
		expect(tarballName).toBe(path.basename(installCommands().tarball.file));
	});

	it('the command leaves out the peers n8n provides (no n8n-workflow, no isolated-vm build)', () => {
		expect(installCommands().tarball.options).toContain('--omit=peer');
		expect(fs.existsSync(path.join(installed, 'package.json'))).toBe(true);
		expect(fs.existsSync(path.join(path.dirname(installed), 'n8n-workflow'))).toBe(false);
		expect(fs.existsSync(path.join(path.dirname(installed), 'isolated-vm'))).toBe(false);
	});

	it('the installed package runs the imported example in n8n 2.x', () => {
		expect(result.status).toBe('success');
		const summary = result.nodes.Summarise?.items?.[0]?.json as { text?: string } | undefined;
		expect(summary?.text).toEqual(expect.any(String));
	});
});
