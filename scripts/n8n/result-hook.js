// n8n external hook file (loaded by n8n itself through EXTERNAL_HOOK_FILES, see headless.js).
//
// Why a hook and not `execute-batch --snapshot`: the snapshot is written only for workflows that
// succeed, so a failing workflow would leave nothing but a one-line error. `workflow.postExecute`
// sees the full run data of every execution, success or not, inside the n8n process, where
// binary data kept outside the run data (filesystem mode) can still be read back.
//
// Writes <MGW_N8N_RESULTS_DIR>/<workflowId>--<executionId>.json:
//   { workflowId, workflowName, executionId, mode, status, startedAt, stoppedAt, runData, error, lastNodeExecuted }
// with errors flattened to plain objects and binary data inlined as base64 (`data`).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { createRequire } = require('node:module');

// Above this size a binary stays a reference (`id`, `storagePath`): a long video would bloat the file.
const INLINE_MAX = Number(process.env.MGW_N8N_INLINE_BINARY_MAX_BYTES || 64 * 1024 * 1024);

function serializeError(error) {
	if (!error || typeof error !== 'object') return error === undefined ? undefined : { message: String(error) };
	const json = typeof error.toJSON === 'function' ? error.toJSON() : {};
	return {
		...json,
		name: error.name,
		message: error.message,
		description: error.description ?? json.description,
		// NodeApiError / NodeOperationError carry the node; toJSON() leaves it out.
		node: error.node?.name,
		httpCode: error.httpCode,
		stack: typeof error.stack === 'string' ? error.stack.split('\n').slice(0, 8).join('\n') : undefined,
	};
}

// The same module instances n8n uses: resolved from n8n's own folder, not from ours.
function binaryDataService() {
	const req = createRequire(require.main?.filename || path.join(process.cwd(), 'x.js'));
	const { Container } = req('@n8n/di');
	const { BinaryDataService } = req('n8n-core');
	return Container.get(BinaryDataService);
}

async function inlineBinary(binary) {
	// Kept in the run data ("default" mode): `data` is already base64. Stored elsewhere: `id` says
	// where ("filesystem-v2:…", "database:…") and `data` holds only the mode name, so it is
	// replaced by the bytes, or dropped (never left looking like base64) when they are not inlined.
	if (!binary?.id) return binary;
	const { data: _modeName, ...out } = binary;
	try {
		const service = binaryDataService();
		// n8n records `bytes` on stored binaries, so a huge one is not even read.
		const buffer = (binary.bytes ?? 0) > INLINE_MAX ? null : await service.getAsBuffer(binary);
		if (buffer && buffer.length <= INLINE_MAX) out.data = buffer.toString('base64');
		else out.storagePath = service.getPath(binary.id);
	} catch (error) {
		out.inlineError = String(error?.message || error);
	}
	return out;
}

async function cleanOutputs(outputs) {
	const cleaned = [];
	for (const output of Array.isArray(outputs) ? outputs : []) {
		const items = [];
		for (const item of output || []) {
			const copy = { ...item };
			if (item.error) copy.error = serializeError(item.error);
			if (item.binary) {
				copy.binary = {};
				for (const [key, value] of Object.entries(item.binary)) copy.binary[key] = await inlineBinary(value);
			}
			items.push(copy);
		}
		cleaned.push(output === null ? null : items);
	}
	return cleaned;
}

async function cleanTask(task) {
	const cleaned = {
		startTime: task.startTime,
		executionTime: task.executionTime,
		executionStatus: task.executionStatus,
		error: task.error ? serializeError(task.error) : undefined,
		hints: task.hints,
		source: task.source,
		outputs: await cleanOutputs(task.data?.main),
	};
	// Sub-nodes (a chat model, a node in tool form) report on their AI connection (`ai_tool`,
	// `ai_languageModel`…) instead of `main`, and what the agent handed them in `inputOverride`.
	for (const [type, outputs] of Object.entries(task.data || {})) {
		if (type !== 'main') (cleaned.connectionOutputs ||= {})[type] = await cleanOutputs(outputs);
	}
	if (task.inputOverride) {
		cleaned.inputOverride = {};
		for (const [type, inputs] of Object.entries(task.inputOverride)) cleaned.inputOverride[type] = await cleanOutputs(inputs);
	}
	return cleaned;
}

async function postExecute(fullRunData, workflowData, executionId) {
	const dir = process.env.MGW_N8N_RESULTS_DIR;
	if (!dir) return;
	const resultData = fullRunData?.data?.resultData || {};
	const runData = {};
	for (const [nodeName, tasks] of Object.entries(resultData.runData || {})) {
		runData[nodeName] = [];
		for (const task of tasks) runData[nodeName].push(await cleanTask(task));
	}
	const record = {
		workflowId: workflowData?.id,
		workflowName: workflowData?.name,
		executionId,
		mode: fullRunData?.mode,
		status: fullRunData?.status,
		finished: fullRunData?.finished,
		startedAt: fullRunData?.startedAt,
		stoppedAt: fullRunData?.stoppedAt,
		lastNodeExecuted: resultData.lastNodeExecuted,
		error: serializeError(resultData.error),
		runData,
	};
	const file = path.join(dir, `${record.workflowId}--${executionId}.json`);
	// Written under a temporary name first, so a reader never sees half a file.
	fs.writeFileSync(`${file}.tmp`, JSON.stringify(record));
	fs.renameSync(`${file}.tmp`, file);
}

module.exports = { workflow: { postExecute: [postExecute] } };
