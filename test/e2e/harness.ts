/**
 * Read side of the e2e run. globalSetup.js has already executed every workflow of examples/ and
 * test/e2e/workflows/ in a real n8n and written the outcome to .n8n-e2e/results.json; the test
 * files only read it:
 *
 *   const results = loadE2eResults();
 *   describeWorkflow('mgwSmoke0001', 'built-in nodes', () => {
 *     it('squares', () => expect(nodeItems(results, 'mgwSmoke0001', 'Add Square')).toHaveLength(3));
 *   });
 */
import * as fs from 'node:fs';

import type { LoggedRequest } from '../gateway';
import { CREDENTIALS, RESULTS_FILE } from './paths';

export interface E2eError {
	message: string;
	description?: string;
	/** Name of the node that threw. */
	node?: string;
	name?: string;
	httpCode?: string;
	context?: Record<string, unknown>;
	stack?: string;
}

export interface E2eBinary {
	mimeType: string;
	fileName?: string;
	fileExtension?: string;
	fileType?: string;
	fileSize?: string;
	bytes?: number;
	/** Base64 bytes, in every binary data mode (read back from storage when n8n kept them there). */
	data?: string;
	/** Storage reference ("filesystem-v2:…") when n8n kept the bytes outside the run data. */
	id?: string;
	/** Set instead of `data` above MGW_N8N_INLINE_BINARY_MAX_BYTES (64 MiB). */
	storagePath?: string;
}

export interface E2eItem {
	json: Record<string, unknown>;
	binary?: Record<string, E2eBinary>;
	pairedItem?: { item: number; input?: number } | Array<{ item: number; input?: number }> | number;
	error?: E2eError;
}

export interface E2eNodeRun {
	/** Items of the first output (Continue On Fail items included, with `json.error`). */
	items: E2eItem[];
	/** Every output, present only when the node has more than one (e.g. an error output). */
	outputs?: Array<E2eItem[] | null>;
	error?: E2eError;
	status?: string;
	executionTimeMs: number;
	startTime: number;
	/** All runs, present only when the node ran more than once (the fields above are the last run). */
	runs?: E2eNodeRun[];
}

export interface E2eWorkflowResult {
	id: string;
	name: string;
	status: 'success' | 'error';
	/** n8n's own status: success, error, canceled, crashed… */
	n8nStatus?: string;
	executionId?: string;
	startedAt?: string;
	stoppedAt?: string;
	durationMs?: number;
	lastNodeExecuted?: string;
	error?: E2eError;
	nodes: Record<string, E2eNodeRun>;
}

export type E2eResults = Record<string, E2eWorkflowResult>;

export interface E2eRun {
	n8nVersion: string;
	createdAt: string;
	timing: { installMs: number; setupMs: number; batchMs: number; totalMs: number };
	gateway: { baseUrl: string; fileBaseUrl: string };
	/** `good` is accepted by the gateway, `bad` refused with 401. */
	credentials: Record<'good' | 'bad', { id: string; name: string; apiKey: string }>;
	/** Workflow file (relative to the repository) -> workflow id, for the files that ran. */
	files: Record<string, string>;
	userFolder?: string;
	batchSummary: unknown;
	results: E2eResults;
	/** Every request the loopback gateway received during the batch, in order. */
	gatewayRequests: LoggedRequest[];
}

export const E2E_CREDENTIALS = CREDENTIALS;

let cached: E2eRun | undefined;

/** The whole run record (cached). Throws when globalSetup has not produced one. */
export function loadE2eRun(): E2eRun {
	if (cached) return cached;
	if (!fs.existsSync(RESULTS_FILE)) {
		throw new Error(`${RESULTS_FILE} is missing: run the e2e suite with \`npm run test:e2e\` (its globalSetup writes it)`);
	}
	cached = JSON.parse(fs.readFileSync(RESULTS_FILE, 'utf8')) as E2eRun;
	return cached;
}

/** Results by workflow id. */
export function loadE2eResults(): E2eResults {
	return loadE2eRun().results;
}

/** Whether the workflow ran in this run (E2E_ONLY may have left it out). */
export function ranWorkflow(workflowId: string): boolean {
	return fs.existsSync(RESULTS_FILE) && workflowId in loadE2eRun().results;
}

/** `describe` for one workflow's tests, skipped when the workflow did not run (E2E_ONLY). */
export function describeWorkflow(workflowId: string, title: string, fn: () => void): void {
	(ranWorkflow(workflowId) ? describe : describe.skip)(`${workflowId}: ${title}`, fn);
}

export function workflowResult(results: E2eResults, workflowId: string): E2eWorkflowResult {
	const result = results[workflowId];
	if (!result) {
		throw new Error(`workflow ${workflowId} did not run (ran: ${Object.keys(results).join(', ')})`);
	}
	return result;
}

export function nodeRun(results: E2eResults, workflowId: string, nodeName: string): E2eNodeRun {
	const result = workflowResult(results, workflowId);
	const run = result.nodes[nodeName];
	if (!run) {
		const why = result.error ? ` (the workflow failed: ${result.error.message})` : '';
		throw new Error(
			`node "${nodeName}" did not run in ${workflowId}${why}; nodes that ran: ${Object.keys(result.nodes).join(', ')}`,
		);
	}
	return run;
}

/** Items of a node's first output. */
export function nodeItems(results: E2eResults, workflowId: string, nodeName: string): E2eItem[] {
	return nodeRun(results, workflowId, nodeName).items;
}

/** The error that stopped the workflow, or undefined when it succeeded. */
export function workflowError(results: E2eResults, workflowId: string): E2eError | undefined {
	return workflowResult(results, workflowId).error;
}

/** Decoded bytes of an item's binary property. */
export function binaryBuffer(item: E2eItem, property = 'data'): Buffer {
	const binary = item.binary?.[property];
	if (!binary) throw new Error(`item has no binary "${property}" (has: ${Object.keys(item.binary ?? {}).join(', ') || 'none'})`);
	if (binary.data === undefined) {
		if (binary.storagePath) return fs.readFileSync(binary.storagePath);
		throw new Error(`binary "${property}" carries no data`);
	}
	return Buffer.from(binary.data, 'base64');
}

/** The gateway's request log of the run, optionally filtered. */
export function gatewayRequests(filter?: (request: LoggedRequest) => boolean): LoggedRequest[] {
	const all = loadE2eRun().gatewayRequests;
	return filter ? all.filter(filter) : all;
}
