/**
 * `npm test` (scripts/test-all.js): a red suite does not hide the others. Every suite runs whatever
 * the ones before it ended with, the closing line sums the tests of all suites, and the exit code
 * says whether any failed. The suites are stood in for by a runner that writes jest's report.
 */
import * as fs from 'node:fs';

import { SUITES, runAll } from '../../scripts/test-all';

interface Outcome {
	status: number;
	report?: object;
}

function standIn(outcomes: Record<string, Outcome>) {
	const ran: string[] = [];
	const run = (script: string, args: string[]) => {
		ran.push(script);
		const outcome = outcomes[script] ?? { status: 0 };
		const file = args.find((arg) => arg.startsWith('--outputFile='))?.slice('--outputFile='.length);
		if (file && outcome.report) fs.writeFileSync(file, JSON.stringify(outcome.report));
		return outcome.status;
	};
	return { run, ran };
}

const report = (passed: number, failed: number, extra: object = {}) => ({
	numPassedTests: passed,
	numFailedTests: failed,
	numRuntimeErrorTestSuites: 0,
	numPendingTests: 0,
	numTodoTests: 0,
	...extra,
});

function captured(work: () => number): { code: number; out: string } {
	const written: string[] = [];
	const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
		written.push(String(chunk));
		return true;
	});
	try {
		return { code: work(), out: written.join('') };
	} finally {
		spy.mockRestore();
	}
}

describe('npm test runs every suite', () => {
	it('runs lint, unit, integration, fuzz and e2e in that order, each through its own npm script', () => {
		expect(SUITES.map((suite) => suite.script)).toEqual(['lint', 'test:unit', 'test:integration', 'test:fuzz', 'test:e2e']);
		const manifest = JSON.parse(fs.readFileSync(`${__dirname}/../../package.json`, 'utf8')) as { scripts: Record<string, string> };
		expect(manifest.scripts.test).toBe('node scripts/test-all.js');
		for (const suite of SUITES) expect(manifest.scripts[suite.script]).toBeDefined();
	});

	it('a red integration suite does not skip fuzz and e2e; the closing line sums every suite; the exit code is 1', () => {
		const { run, ran } = standIn({
			'test:unit': { status: 0, report: report(800, 0) },
			'test:integration': { status: 1, report: report(300, 4) },
			'test:fuzz': { status: 0, report: report(20, 0) },
			'test:e2e': { status: 0, report: report(60, 0, { numPendingTests: 2 }) },
		});
		const { code, out } = captured(() => runAll([], run));
		expect(ran).toEqual(['lint', 'test:unit', 'test:integration', 'test:fuzz', 'test:e2e']);
		expect(code).toBe(1);
		const lines = out.trimEnd().split('\n');
		// lint has no tests: it counts as one check
		expect(lines.at(-1)).toBe('1181 passed, 4 failed');
		expect(out).toMatch(/^integration +FAIL \(exit 1\) +300 passed, 4 failed/m);
		expect(out).toMatch(/^e2e +PASS +60 passed, 0 failed, 2 skipped/m);
	});

	it('a suite that failed without a failed test (it did not compile, no report) still counts as a failure', () => {
		const { run } = standIn({
			lint: { status: 1 },
			'test:unit': { status: 1, report: report(10, 0, { numRuntimeErrorTestSuites: 1 }) },
			'test:integration': { status: 1 },
		});
		const { code, out } = captured(() => runAll(['lint', 'unit', 'integration'], run));
		expect(code).toBe(1);
		expect(out.trimEnd().split('\n').at(-1)).toBe('10 passed, 3 failed');
	});

	it('all green: exit code 0; an unknown suite name is refused before anything runs', () => {
		const { run, ran } = standIn({ 'test:unit': { status: 0, report: report(5, 0) } });
		expect(captured(() => runAll(['unit'], run))).toMatchObject({ code: 0, out: expect.stringMatching(/\n5 passed, 0 failed\n$/) });
		const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
		expect(runAll(['unti'], run)).toBe(2);
		stderr.mockRestore();
		expect(ran).toEqual(['test:unit']);
	});
});
