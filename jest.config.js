// Three suites, run in this order by `npm test`: pure units, HTTP against the loopback gateway,
// and a real n8n executing workflows (slow: it installs n8n once into a cache folder).
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.test.json', diagnostics: { warnOnly: false } }];
const base = { testEnvironment: 'node', transform: { '^.+\\.ts$': tsJest } };

module.exports = {
	projects: [
		{ ...base, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
		{ ...base, displayName: 'integration', testMatch: ['<rootDir>/test/integration/**/*.test.ts'] },
		{
			...base,
			displayName: 'e2e',
			testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
			// Runs every workflow once in a real n8n before the test files read the results.
			globalSetup: '<rootDir>/test/e2e/globalSetup.js',
			globalTeardown: '<rootDir>/test/e2e/globalTeardown.js',
		},
	],
};
