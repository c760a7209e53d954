// Three suites, run in this order by `npm test`: pure units, HTTP against the loopback gateway,
// and a real n8n executing workflows (slow: it installs n8n once into a cache folder). The e2e
// suite is one jest project per n8n line (e2e-n8n2, e2e-n8n1): the same test files, each reading
// the results of its own line; the shared globalSetup runs every line's batch once.
const { LINES } = require('./test/e2e/paths');

const tsJest = ['ts-jest', { tsconfig: 'tsconfig.test.json', diagnostics: { warnOnly: false } }];
// n8n user folders and demo output inside the repository hold package.json files jest must not index.
const base = {
	testEnvironment: 'node',
	transform: { '^.+\\.ts$': tsJest },
	modulePathIgnorePatterns: ['<rootDir>/\\.n8n-', '<rootDir>/demo-output/'],
};

// A test's time limit (jest's is global) is sized for a machine whose cores are busy with other work
// (jest's default, 5 s, is not): a limit guards against a hang, it is never what a test proves.
// Tests that prove a deadline bound it themselves, with a margin (test/helpers/busy.ts).
module.exports = {
	testTimeout: 60_000,
	projects: [
		{ ...base, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
		{ ...base, displayName: 'integration', testMatch: ['<rootDir>/test/integration/**/*.test.ts'] },
		// The generative hostile gateway (issue 18): a fixed seed here, more with `npm run fuzz`.
		{ ...base, displayName: 'fuzz', testMatch: ['<rootDir>/test/fuzz/**/*.test.ts'] },
		...LINES.map((line) => ({
			...base,
			displayName: `e2e-${line}`,
			testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
			globals: { MGW_E2E_LINE: line },
			// Runs every workflow once per n8n line before the test files read the results.
			globalSetup: '<rootDir>/test/e2e/globalSetup.js',
			globalTeardown: '<rootDir>/test/e2e/globalTeardown.js',
		})),
	],
};
