/**
 * An imported example picks up the user's credential by itself. n8n's editor (1.123.81 and 2.41.1
 * alike, seen in a browser) fills in an imported node's credential by its id, else by its name when
 * exactly one of the user's credentials of that type has it; it never fills in the newest one for a
 * node that names a credential. So every example names its Model Gateway credential as n8n's
 * new-credential dialog names one, without an id, and the README says which name that is.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { GatewayApi } from '../../credentials/GatewayApi.credentials';
import { dialogCredentialName } from '../../scripts/n8n/workflowSet';

const ROOT = path.resolve(__dirname, '..', '..');
const EXAMPLES = fs.readdirSync(path.join(ROOT, 'examples')).filter((file) => file.endsWith('.json'));

type ExampleNode = { name: string; type: string; credentials?: Record<string, unknown> };

function gatewayNodes(file: string): ExampleNode[] {
	const workflow = JSON.parse(fs.readFileSync(path.join(ROOT, 'examples', file), 'utf8')) as { nodes: ExampleNode[] };
	return workflow.nodes.filter((node) => node.type.startsWith('n8n-nodes-model-gateway.'));
}

describe("the name n8n's new-credential dialog gives a credential", () => {
	it('is the type\'s display name without the words API, OAuth1, OAuth2 and MCP, plus "account"', () => {
		expect(dialogCredentialName('Model Gateway API')).toBe('Model Gateway account');
		expect(dialogCredentialName('Google Sheets OAuth2 API')).toBe('Google Sheets account');
		expect(dialogCredentialName('OpenAi')).toBe('OpenAi account');
	});
});

describe.each(EXAMPLES)('examples/%s', (file) => {
	const expected = { id: null, name: dialogCredentialName(new GatewayApi().displayName) };

	it('names its Model Gateway credential as the dialog names a new one, without an id, on every Gateway node', () => {
		const nodes = gatewayNodes(file);
		expect(nodes.length).toBeGreaterThan(0);
		for (const node of nodes) expect([node.name, node.credentials]).toEqual([node.name, { gatewayApi: expected }]);
	});
});

it('the README names the credential the examples pick up', () => {
	const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
	expect(readme).toContain(`*${dialogCredentialName(new GatewayApi().displayName)}*`);
});
