/**
 * A loopback HTTP server whose every answer a test scripts (e.g. a gateway that always says 429,
 * with any Retry-After), and that logs when each request arrived: what tests of deadlines and of
 * "no request after the run ended" read.
 */
import * as http from 'http';
import type { AddressInfo } from 'net';

export interface ScriptedRequest {
	method: string;
	path: string;
	body: string;
	/** Date.now() when the request's body had arrived. */
	time: number;
}

export interface Answer {
	status: number;
	headers?: Record<string, string>;
	body?: string;
	/** Milliseconds to wait before answering. */
	delayMs?: number;
}

export interface ScriptedServer {
	baseUrl: string;
	requests: ScriptedRequest[];
	close(): Promise<void>;
}

export async function startScriptedServer(answer: (request: ScriptedRequest, count: number) => Answer): Promise<ScriptedServer> {
	const requests: ScriptedRequest[] = [];
	const timers = new Set<NodeJS.Timeout>();
	const server = http.createServer((req, res) => {
		const parts: Buffer[] = [];
		req.on('data', (chunk: Buffer) => parts.push(chunk));
		req.on('end', () => {
			const request = { method: req.method ?? 'GET', path: req.url ?? '/', body: Buffer.concat(parts).toString('utf8'), time: Date.now() };
			requests.push(request);
			const { status, headers = {}, body = '', delayMs = 0 } = answer(request, requests.length);
			const send = () => {
				if (res.destroyed) return;
				res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body);
			};
			if (delayMs <= 0) return send();
			const timer = setTimeout(() => {
				timers.delete(timer);
				send();
			}, delayMs);
			timers.add(timer);
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		requests,
		close: async () => {
			for (const timer of timers) clearTimeout(timer);
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		},
	};
}

/** A bare 429, with a Retry-After header when one is given. */
export function tooManyRequests(retryAfter?: string): Answer {
	return { status: 429, headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter }, body: '' };
}

/**
 * `serve(answer)` for a test file: starts a scripted server, closed after each test. A test that
 * closes its server itself (to start another) calls `forget()`.
 */
export function useScriptedServer(): { serve: (answer: (request: ScriptedRequest, count: number) => Answer) => Promise<ScriptedServer>; forget: () => void } {
	let server: ScriptedServer | undefined;
	afterEach(async () => {
		await server?.close();
		server = undefined;
	});
	return {
		serve: async (answer) => {
			server = await startScriptedServer(answer);
			return server;
		},
		forget: () => {
			server = undefined;
		},
	};
}

/**
 * What a quick gateway answers a video submit or a chat request (by the request's path): a new
 * task, or a short chat completion. For loopback servers that measure what requests carry.
 */
export function acceptedAnswer(url: string | undefined, taskId: string): object {
	return url?.includes('video')
		? { task_id: taskId, status: 'SUBMITTED' }
		: { id: 'c', object: 'chat.completion', model: 'chat-sonnet-5', choices: [{ index: 0, message: { role: 'assistant', content: 'A red square' }, finish_reason: 'stop' }] };
}
