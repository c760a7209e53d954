/**
 * The README's benchmark table is a full `npm run bench` run's own output (issue 19): the run
 * writes it between two markers. It names every row the benchmark makes, and each row's result.
 */
import * as fs from 'fs';
import * as path from 'path';

const { ROW_LABELS, START, END, readmeTable } = require('../../bench/readmeTable') as {
	ROW_LABELS: Record<string, string>;
	START: string;
	END: string;
	readmeTable(rows: Array<Record<string, string>>, machine: string): string;
};

const README = fs.readFileSync(path.join(__dirname, '../../README.md'), 'utf8');

describe("the README's benchmark table", () => {
	it('sits between the markers a full run writes between', () => {
		expect(README.indexOf(START)).toBeGreaterThan(0);
		expect(README.indexOf(END)).toBeGreaterThan(README.indexOf(START));
	});

	it('is a run: a machine line and one row for every row the benchmark makes, each with a result', () => {
		const table = README.slice(README.indexOf(START), README.indexOf(END));
		expect(table).toMatch(/^Measured \d{4}-\d\d-\d\d \d\d:\d\d UTC on \d+ CPUs/m);
		const ids = [...table.matchAll(/^\| (\w+) \| .* \| \*\*(PASS|FAIL|REFERENCE|[A-Z]+)\*\* \|$/gm)].map((m) => m[1]);
		expect(ids.sort()).toEqual(Object.keys(ROW_LABELS).sort());
	});

	it('quotes a row\'s figures without breaking the table (a "|" in a figure is escaped)', () => {
		const text = readmeTable([{ id: '1a', what: 'x', ours: '12 ms | odd; more', ratio: '1.0×', goal: '≤ 1.25×, more', result: 'PASS' }], 'Measured now');
		expect(text).toContain('| 1a | 100 Gateway Chat items at Concurrency 10 vs the ideal | 12 ms \\| odd | 1.0× | ≤ 1.25× | **PASS** |');
	});
});
