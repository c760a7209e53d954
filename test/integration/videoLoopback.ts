/**
 * A small scripted video gateway on loopback for the video tests: every answer is a function of
 * the request (so a test can answer another task's id, delay a submit, or answer 429), with
 * latencies in real time, and a log of every request with the time it arrived. Tasks are done a
 * fixed time after their submit, so a test can tell a check that came too late from one that never
 * came.
 */
import * as fs from 'fs';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as path from 'path';
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { VideoRuntime } from '../../nodes/GatewayVideoGenerate/generate';
import { executeVideo } from '../../nodes/GatewayVideoGenerate/router';
import type { Clock } from '../../nodes/shared/wire/timing';
import { createExecuteContext } from '../helpers/executeContext';
import { createFakeClock } from '../helpers/fakeClock';

export const SAMPLE_VIDEO = fs.readFileSync(path.join(__dirname, '../fixtures/sample-video.mp4'));
export const SUBMIT_PATH = '/v1/video/generations';

export interface LoggedVideoRequest {
	method: string;
	/** The request target as received (encoded), e.g. `/v1/video/generations/task_1`. */
	path: string;
	/** The task id of a status check (decoded), undefined for others. */
	taskId?: string;
	body: string;
	/** Arrival, ms since the epoch. */
	at: number;
	status?: number;
}

export interface Answer {
	status?: number;
	body?: unknown;
	headers?: Record<string, string>;
	/** Real milliseconds before the answer is sent. */
	delayMs?: number;
}

export interface ScriptedTask {
	id: string;
	/** Epoch ms when the submit arrived. */
	submittedAt: number;
	/** Epoch ms when the task is done (SUCCESS); Infinity: never. */
	doneAt: number;
}

export interface VideoScript {
	/** The submit's answer; default: a new task `task_<n>` done `doneAfterMs` after the submit. */
	submit?(n: number, body: string, gateway: ScriptedGateway): Answer | undefined;
	/** The status answer of a known or unknown task id; default: the task's state now. */
	status?(taskId: string, n: number, gateway: ScriptedGateway): Answer | undefined;
	/** Real ms a submit takes (default 0). */
	submitLatencyMs?: number;
	/** Real ms a status check takes (default 0). */
	statusLatencyMs?: number;
	/** A default task is done this long after its submit (default 0; Infinity: never). */
	doneAfterMs?: number;
}

export interface ScriptedGateway {
	baseUrl: string;
	requests: LoggedVideoRequest[];
	tasks: Map<string, ScriptedTask>;
	/** Creates a task as the default submit does and returns its submit answer. */
	createTask(id?: string): Answer;
	/** The default status answer of a task (404 for an unknown one). */
	taskState(taskId: string): Answer;
	submits(): LoggedVideoRequest[];
	checks(taskId?: string): LoggedVideoRequest[];
	close(): Promise<void>;
}

export async function startScriptedVideoGateway(script: VideoScript = {}): Promise<ScriptedGateway> {
	let submitCount = 0;
	let statusCount = 0;
	let taskCount = 0;
	const sockets = new Set<import('net').Socket>();
	const gateway = {} as ScriptedGateway;
	gateway.requests = [];
	gateway.tasks = new Map();
	gateway.createTask = (id = `task_${++taskCount}`) => {
		const now = Date.now();
		gateway.tasks.set(id, { id, submittedAt: now, doneAt: now + (script.doneAfterMs ?? 0) });
		return { body: { id, task_id: id, object: 'video', status: 'queued', progress: 0 } };
	};
	gateway.taskState = (taskId) => {
		const task = gateway.tasks.get(taskId);
		if (!task) return { status: 404, body: { code: 'task_not_exist', message: 'task_not_exist', data: null } };
		const done = Date.now() >= task.doneAt;
		const data = done
			? { task_id: taskId, status: 'SUCCESS', progress: '100%', result_url: `${gateway.baseUrl}/files/${encodeURIComponent(taskId)}.mp4` }
			: { task_id: taskId, status: 'IN_PROGRESS', progress: '50%' };
		return { body: { code: 'success', message: '', data } };
	};
	gateway.submits = () => gateway.requests.filter((r) => r.method === 'POST');
	gateway.checks = (taskId) => gateway.requests.filter((r) => r.taskId !== undefined && (taskId === undefined || r.taskId === taskId));

	const server = http.createServer({ maxHeaderSize: 256 * 1024 }, (req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const target = req.url ?? '/';
			const logged: LoggedVideoRequest = { method: req.method ?? 'GET', path: target, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
			gateway.requests.push(logged);
			let answer: Answer;
			let latency = 0;
			if (target.startsWith('/files/')) {
				answer = { status: 200, body: SAMPLE_VIDEO, headers: { 'content-type': 'video/mp4' } };
			} else if (logged.method === 'POST' && target === SUBMIT_PATH) {
				latency = script.submitLatencyMs ?? 0;
				answer = script.submit?.(++submitCount, logged.body, gateway) ?? gateway.createTask();
			} else if (logged.method === 'GET' && target.startsWith(`${SUBMIT_PATH}/`)) {
				latency = script.statusLatencyMs ?? 0;
				logged.taskId = decodeURIComponent(target.slice(SUBMIT_PATH.length + 1));
				answer = script.status?.(logged.taskId, ++statusCount, gateway) ?? gateway.taskState(logged.taskId);
			} else {
				answer = { status: 404, body: { error: { message: `no route ${logged.method} ${target}` } } };
			}
			const send = () => {
				if (res.destroyed) return;
				const status = answer.status ?? 200;
				logged.status = status;
				const body = Buffer.isBuffer(answer.body) ? answer.body : Buffer.from(JSON.stringify(answer.body ?? {}));
				res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(body.length), ...answer.headers });
				res.end(body);
			};
			const delay = (answer.delayMs ?? 0) + latency;
			if (delay > 0) setTimeout(send, delay);
			else send();
		});
	});
	server.on('connection', (socket) => {
		sockets.add(socket);
		socket.on('close', () => sockets.delete(socket));
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	gateway.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	gateway.close = async () => {
		for (const socket of sockets) socket.destroy();
		await new Promise<void>((resolve) => server.close(() => resolve()));
	};
	return gateway;
}

// ---------------------------------------------------------------------------------------------
// Running the node against it


export const VIDEO_KEY = 'sk-video-loopback-0123456789abcdef';

export interface LogLine {
	level: string;
	message: string;
	meta?: IDataObject;
}

export interface VideoRunOptions {
	items?: INodeExecutionData[] | number;
	continueOnFail?: boolean;
	clock?: Clock;
	abortSignal?: AbortSignal;
	/** Replaces or adds members of the execution context (binary helpers, …). */
	extend?: (ctx: IExecuteFunctions) => void;
	runtime?: Partial<VideoRuntime>;
}

export interface VideoRun {
	output: INodeExecutionData[];
	error?: Error & { description?: string; context?: IDataObject };
	logs: LogLine[];
	customData: Map<string, string>;
	uiMessages: string[];
	ms: number;
}

export async function runVideoNode(gateway: Pick<ScriptedGateway, 'baseUrl'>, parameters: IDataObject | ((itemIndex: number) => IDataObject), options: VideoRunOptions = {}): Promise<VideoRun> {
	const logs: LogLine[] = [];
	const customData = new Map<string, string>();
	const uiMessages: string[] = [];
	const items = typeof options.items === 'number' ? Array.from({ length: options.items }, (_, i) => ({ json: { i } })) : options.items;
	const context = createExecuteContext({
		parameters: (itemIndex) => ({
			operation: 'generate',
			model: { __rl: true, mode: 'id', value: 'video-2-0-fast-260128' },
			prompt: 'a paper boat',
			seconds: 5,
			size: '1280x720',
			...(typeof parameters === 'function' ? parameters(itemIndex) : parameters),
		}),
		items,
		continueOnFail: options.continueOnFail,
		abortSignal: options.abortSignal,
		credentials: { apiKey: VIDEO_KEY, baseUrl: gateway.baseUrl },
		nodeName: 'Make Videos',
		nodeType: 'n8n-nodes-model-gateway.gatewayVideoGenerate',
	});
	const ctx = context.ctx as IExecuteFunctions & { logger: Record<string, (message: string, meta?: IDataObject) => void> };
	for (const level of ['debug', 'info', 'warn', 'error']) ctx.logger[level] = (message, meta) => logs.push({ level, message, meta });
	Object.assign(ctx, {
		getExecutionId: () => 'exec-77',
		customData: { set: (key: string, value: string) => customData.set(key, value), setAll() {}, get: (key: string) => customData.get(key), getAll: () => Object.fromEntries(customData) },
		sendMessageToUI: (message: string) => uiMessages.push(message),
	});
	options.extend?.(ctx);
	const started = Date.now();
	let output: INodeExecutionData[] = [];
	let error: VideoRun['error'];
	try {
		[output] = await executeVideo(ctx, { clock: options.clock ?? createFakeClock(0, 5), ...options.runtime });
	} catch (caught) {
		error = caught as VideoRun['error'];
	}
	return { output, error, logs, customData, uiMessages, ms: Date.now() - started };
}
