// Rows 12a–12c: masking costs about what it costs on plain text, whatever the text holds. The
// masker runs on every answer, stream chunk and error that leaves a node, so an input that makes it
// slower than linear (a long run of a placeholder key's one character, a stream full of escapes)
// would stall a run. Runs the built masker (dist/) in this process, before n8n starts; each ratio is
// the median of paired runs, the two sides alternating, so the machine's noise hits both alike.
'use strict';

const path = require('node:path');

const { median } = require('./aggregation');

const DIST_SECRETS = path.join(__dirname, '..', 'dist', 'nodes', 'shared', 'credential', 'secrets.js');
const PLAIN_LINE = 'The fern grows in shade and likes water every day. ';

function timeMs(run) {
	const started = process.hrtime.bigint();
	run();
	return Number(process.hrtime.bigint() - started) / 1e6;
}

/** The median over `repeats` of ours/baseline, measured side by side (one warm-up pair first). */
function pairedRatio(ours, baseline, repeats) {
	ours();
	baseline();
	const pairs = [];
	for (let i = 0; i < repeats; i++) {
		const oursMs = timeMs(ours);
		const baselineMs = timeMs(baseline);
		pairs.push({ oursMs, baselineMs, ratio: oursMs / baselineMs });
	}
	return { ratio: median(pairs.map((pair) => pair.ratio)), oursMs: median(pairs.map((pair) => pair.oursMs)), baselineMs: median(pairs.map((pair) => pair.baselineMs)) };
}

/** The three rows' figures; each check of the masked text runs before any time is taken. */
function measureMasking({ repeats }) {
	const { SecretMasker } = require(DIST_SECRETS);
	const placeholder = SecretMasker.of({ apiKey: `sk-${'x'.repeat(48)}` });
	const run = 'x'.repeat(PLAIN_LINE.length * 8_000);
	const doubleRun = run + run;
	if (/x{48}/.test(placeholder.mask(doubleRun))) throw new Error("masking: a run of the placeholder key's character must be masked");

	const masker = SecretMasker.of({ apiKey: 'sk-Zq8v3LmN0pRt5XwY2bKc7HdJ9fGs4AeU', customHeaders: { 'x-relay-secret': 'pk/Se+cr=Va lue-0042/x' } });
	const plain = PLAIN_LINE.repeat(100_000);
	const escaped = 'The fern grows \\/ in %2F shade \\u0041nd likes water. '.repeat(100_000);
	if (masker.mask(escaped) !== escaped) throw new Error('masking: escapes of ordinary text must stay whole');

	const percent = '%41'.repeat(2_500_000 / 3);
	const doublePercent = percent + percent;
	return {
		placeholderRun: { chars: run.length, ...pairedRatio(() => placeholder.mask(doubleRun), () => placeholder.mask(run), repeats) },
		escapes: { chars: escaped.length, ...pairedRatio(() => masker.mask(escaped), () => masker.mask(plain), repeats) },
		percentRun: { chars: percent.length, ...pairedRatio(() => masker.mask(doublePercent), () => masker.mask(percent), repeats) },
	};
}

module.exports = { measureMasking };
