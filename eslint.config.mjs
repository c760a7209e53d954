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
		rules: n8nNodesBase.configs.credentials.rules,
	},
	{
		files: ['nodes/**/*.ts'],
		languageOptions: typescript,
		plugins: { 'n8n-nodes-base': n8nNodesBase },
		rules: {
			...n8nNodesBase.configs.nodes.rules,
			// Our nodes publish an error item with `json.error` on Continue On Fail from one shared
			// runner, so the rule's per-file pattern match does not apply.
		},
	},
	{
		...n8nCommunityNodesPlugin.configs.recommended,
		files: ['credentials/**/*.ts', 'nodes/**/*.ts'],
		languageOptions: typescript,
	},
];
