/**
 * Read side of the e2e run. globalSetup.js has already executed every workflow of examples/ and
 * test/e2e/workflows/ in a real n8n, once per n8n line (2.x and 1.x), and written the outcome to
 * .n8n-e2e/<line>/results.json. Every test file runs once per line, as the jest project
 * `e2e-<line>`; these functions read the results of the line the file runs under:
 *
 *   const results = () => loadE2eResults();
 *   describeWorkflow('mgwSmoke0001', 'built-in nodes', () => {
 *     it('squares', () => expect(nodeItems(results(), 'mgwSmoke0001', 'Add Square')).toHaveLength(3));
 *   });
 */
import { secretEncodings } from '../helpers/secretEncodings';
import * as fs from 'node:fs';

import type { LoggedRequest } from '../gateway';
import type { HostileRequest } from '../hostile';
import { CREDENTIALS, TESTED_VERSIONS, resultsFile, selectedLines } from './paths';

// Set per jest project in jest.config.js (`globals`).
declare const MGW_E2E_LINE: string | undefined;

/** The n8n line this test file runs under: 'n8n2' or 'n8n1'. */
export const E2E_LINE: string = typeof MGW_E2E_LINE === 'string' ? MGW_E2E_LINE : 'n8n2';
/** The n8n version of that line, e.g. '2.41.1'. */
export const E2E_N8N_VERSION: string = (TESTED_VERSIONS as Record<string, string>)[E2E_LINE];
/** Its major version, for the few places where n8n lines differ (e.g. 2 or 1). */
export const E2E_N8N_MAJOR = Number(E2E_N8N_VERSION.split('.')[0]);

const RESULTS_FILE = resultsFile(E2E_LINE);
const LINE_SELECTED = selectedLines().includes(E2E_LINE);

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
	/**
	 * Sub-nodes (a chat model, a node in tool form): their outputs on AI connections, by
	 * connection type, e.g. `ai_tool: [[{ json: { response: … } }]]`.
	 */
	connectionOutputs?: Record<string, Array<E2eItem[] | null>>;
	/** What the root node handed a sub-node, by connection type (a tool: the arguments the model chose). */
	inputOverride?: Record<string, Array<E2eItem[] | null>>;
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
	/** 'n8n2' or 'n8n1'. */
	line: string;
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
	/** The hostile gateway of the hostile-*.json workflows: its secrets and every request it received. */
	hostile: { baseUrl: string; siblingUrl: string; apiKey: string; headerSecret: string; requests: HostileRequest[] };
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

/** Whether the workflow ran in this run (E2E_ONLY may have left it out, E2E_N8N_LINES this line). */
export function ranWorkflow(workflowId: string): boolean {
	return LINE_SELECTED && workflowId in loadE2eRun().results;
}

/** `describe` for one workflow's tests on this file's n8n line, skipped when the workflow did not run. */
export function describeWorkflow(workflowId: string, title: string, fn: () => void): void {
	(ranWorkflow(workflowId) ? describe : describe.skip)(`${workflowId} on n8n ${E2E_N8N_VERSION}: ${title}`, fn);
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

/**
 * The key, every 8-character run of its part after sk- that mixes letters and digits or cases (as
 * runs of a random key do; `-hostile` is a word), its base64, and the custom header value; and
 * the shortest mixed cut from the start of the key and of the header value in every encoder's form
 * (issue 26: encodings go character by character, so it stands for every longer cut).
 */
export function secretForms(apiKey: string, headerSecret: string): string[] {
	const secretPart = apiKey.slice(3);
	const mixed = (run: string) => [/[a-z]/, /[A-Z]/, /[0-9]/].filter((kind) => kind.test(run)).length >= 2;
	const runs = Array.from({ length: secretPart.length - 7 }, (_, start) => secretPart.slice(start, start + 8)).filter(mixed);
	const firstMixedCut = (value: string) => Array.from({ length: Math.max(0, value.length - 7) }, (_, extra) => value.slice(0, 8 + extra)).find(mixed);
	const encoded = [firstMixedCut(apiKey), firstMixedCut(headerSecret)].flatMap((cut) => (cut ? Object.entries(secretEncodings(cut)).filter(([name]) => name !== 'plain').map(([, form]) => form) : []));
	return [...new Set([apiKey, secretPart, Buffer.from(apiKey).toString('base64').slice(0, 24), headerSecret, ...runs, ...encoded])];
}
