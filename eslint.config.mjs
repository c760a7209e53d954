// The lint that n8n applies to nodes: its classic node rules (eslint-plugin-n8n-nodes-base)
// on credentials and nodes, and the community-package rules n8n uses when it reviews a package.
import tsParser from '@typescript-eslint/parser';
import n8nNodesBase from 'eslint-plugin-n8n-nodes-base';
import { n8nCommunityNodesPlugin } from '@n8n/eslint-plugin-community-nodes';

const typescript = { parser: tsParser, parserOptions: { sourceType: 'module' } };

export default [
	{ ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'demo-output/**', '.n8n-*/**'] },
	{
		files: ['credentials/**/*.ts'],
		languageOptions: typescript,
		plugins: { 'n8n-nodes-base': n8nNodesBase },
		rules: {
			...n8nNodesBase.configs.credentials.rules,
			// "Only applicable to nodes in the main repository": ours links to the package page.
			'n8n-nodes-base/cred-class-field-documentation-url-miscased': 'off',
		},
	},
	{
		files: ['nodes/**/*.ts'],
		languageOptions: typescript,
		plugins: { 'n8n-nodes-base': n8nNodesBase },
		rules: {
			...n8nNodesBase.configs.nodes.rules,
			// Superseded: n8n's community rules require NodeConnectionTypes.Main instead of 'main'.
			'n8n-nodes-base/node-class-description-inputs-wrong-regular-node': 'off',
			'n8n-nodes-base/node-class-description-outputs-wrong': 'off',
		},
	},
	{
		...n8nCommunityNodesPlugin.configs.recommended,
		files: ['credentials/**/*.ts', 'nodes/**/*.ts'],
		languageOptions: typescript,
	},
	{
		// The rule's own advice is "remove it unless the field holds a secret", and Custom Headers do:
		// relays such as Portkey and Helicone take their keys in headers. Masked like the API key, so
		// the editor never shows them; n8n's scanner reports this as a warning, which does not fail it.
		files: ['credentials/GatewayApi.credentials.ts'],
		rules: { '@n8n/community-nodes/credential-unnecessary-password': 'off' },
	},
	// The manifest, as n8n's node CLI lints it: parsed as an expression, so the package.json rules
	// of both plugins (no runtime dependencies, n8n object complete, community keyword…) see it.
	{
		...n8nCommunityNodesPlugin.configs.recommended,
		files: ['package.json'],
		languageOptions: { parser: tsParser, parserOptions: { extraFileExtensions: ['.json'] } },
		plugins: { ...n8nCommunityNodesPlugin.configs.recommended.plugins, 'n8n-nodes-base': n8nNodesBase },
		rules: { ...n8nCommunityNodesPlugin.configs.recommended.rules, ...n8nNodesBase.configs.community.rules },
	},
];
