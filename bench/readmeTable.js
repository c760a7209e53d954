'use strict';
// The README's benchmark table: one line per row of the last full `npm run bench`, written
// between two markers by that run (bench/run.js), so the table people read is a run's own output.
// docs/performance.md has the full table with how each row is measured.

const fs = require('node:fs');

/** A short name for each row (the full measurement is in docs/performance.md). */
const ROW_LABELS = {
	'1a': '100 Gateway Chat items at Concurrency 10 vs the ideal',
	'1b': 'the same items, Concurrency 10 vs 1',
	'1c': "Concurrency 100 vs n8n's HTTP Request node",
	2: '10 videos vs 1 (submit, wait, download)',
	3: 'a 512 MiB video download: memory growth / file size',
	'4a': 'reading a 20 MiB chat stream vs JSON.parse',
	'4b': 'the same, 40 MiB vs 20 MiB (linear)',
	'4c': 'reading a 20 MiB Messages stream vs JSON.parse',
	'4d': 'the same, 40 MiB vs 20 MiB (linear)',
	5: "200 plants one at a time vs n8n's HTTP Request node",
	'7a': '1,000 chat items at a gateway admitting 20/s, Concurrency 10',
	'7b': 'the same at Concurrency 50',
	'7c': "n8n's HTTP Request node batched by hand (reference)",
	'7d': 'the gateway\u2019s limit drops to 5/s half way',
	'8a': '200 videos: status checks per second vs the budget',
	'8b': '200 videos: first to last finish vs one round of checks',
	9: "AI Agent: Gateway Chat Model vs n8n's OpenAI Chat Model",
	'10a': 'streaming webhook: first text, Gateway Chat',
	'10b': 'streaming webhook: first text, Gateway Messages',
	'10c': "10a/10b up to the gateway vs n8n's HTTP Request node",
	'11a': '200 videos at a slow gateway: time vs limit',
	'11b': '1,000 videos at a slow gateway: time vs limit',
	'11c': '1,000 videos with a 10 MB first frame: peak memory vs bound',
	'11d': '1,000 chat items with a 10 MB image: peak memory vs bound',
	'11e': '1,000 videos, 429s on 1 in 7 submits and 1 in 2 checks',
	'11f': '11a in queue mode (Redis, a main, two workers)',
	'12a': 'masking a placeholder key\u2019s run (linear)',
	'12b': 'masking escapes vs plain text',
	'12c': 'masking %41 escapes (linear)',
};

const START = '<!-- bench table: written by a full `npm run bench`, do not edit -->';
const END = '<!-- end of bench table -->';

/** The table's text: the machine line, then one line per row. */
function readmeTable(rows, machine) {
	const cell = (text) => String(text).replace(/\|/g, '\\|');
	const lines = [
		START,
		machine,
		'',
		'| # | Measurement | Ours | Ratio | Goal | Result |',
		'|---|---|---|---|---|---|',
		...rows.map((r) => `| ${r.id} | ${cell(ROW_LABELS[r.id] ?? r.what)} | ${cell(String(r.ours).split(';')[0])} | ${cell(r.ratio)} | ${cell(String(r.goal).split(',')[0])} | **${r.result}** |`),
		END,
	];
	return lines.join('\n');
}

/** Replaces the table between the markers in `readmePath` (which must have them). */
function writeReadmeTable(readmePath, rows, machine) {
	const text = fs.readFileSync(readmePath, 'utf8');
	const start = text.indexOf(START);
	const end = text.indexOf(END);
	if (start < 0 || end < start) throw new Error(`${readmePath} has no bench table markers`);
	fs.writeFileSync(readmePath, `${text.slice(0, start)}${readmeTable(rows, machine)}${text.slice(end + END.length)}`);
}

module.exports = { ROW_LABELS, START, END, readmeTable, writeReadmeTable };
