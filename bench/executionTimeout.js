// Preloaded into `n8n execute-batch` (NODE_OPTIONS=--require) by the rows that run longer than
// the 3 minutes execute-batch gives each workflow before it abandons it (the 1,000-video rows of
// issue 19): sets that limit to MGW_BENCH_EXECUTION_TIMEOUT_MS when n8n loads the command.
'use strict';

const Module = require('node:module');

const timeoutMs = Number(process.env.MGW_BENCH_EXECUTION_TIMEOUT_MS);
if (timeoutMs > 0) {
	const load = Module._load;
	Module._load = function loadAndStretch(request, ...rest) {
		const exported = load.call(this, request, ...rest);
		if (/commands[\\/]execute-batch(\.js)?$/.test(request) && exported?.ExecuteBatch) exported.ExecuteBatch.executionTimeout = timeoutMs;
		return exported;
	};
}
