/**
 * The generative hostile gateway: a loopback server (127.0.0.1, with a sibling origin on
 * 127.0.0.2 and a second host name through test/hostile/dns-preload.js) that speaks the wire of
 * docs/gateway-interface.md and misbehaves exactly as a run's plan (data drawn by fast-check)
 * says. Nothing in a request's text changes what it does: the n-th request of a run gets the
 * n-th planned answer, then clean answers.
 *
 * Every run has its own base path (`/r<run>`), so one server serves every run and still knows
 * whose request it is, even one that arrives after its run ended. Each request is logged with the
 * moment it arrived, its host, headers and body, and what was answered (the status actually put
 * on the wire, and whether the whole answer left), which is what the invariants are checked on.
 * Responses are written raw on the socket (`Connection: close`) so they can be cut at any byte.
 */
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import * as diagnostics from 'node:diagnostics_channel';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { SHORT_SECRET } from '../../nodes/shared/credential/secrets';
import { secretEncodings } from '../helpers/secretEncodings';

// Makes *.example.test resolve to 127.0.0.1 in this process: a second host name on the same port.
require('../hostile/dns-preload');

export type LeakForm = 'whole' | 'secretPart' | 'cutStart' | 'cutEnd' | 'url' | 'base64' | 'bearer' | 'header' | 'headerUrl' | 'headerBase64' | 'headerCut' | 'headerEncoded' | 'keyEncoded';

export interface Leak {
	/** Which field of the answer quotes it (taken modulo the fields the answer has). */
	slot: number;
	form: LeakForm;
	/** For cut forms: how many characters are kept. */
	cut: number;
	/** For encoded forms: which of test/helpers/secretEncodings.ts (taken modulo their number). */
	encoding?: number;
	/** Words before the quote ("detail " each): a quote far into a long message, where shortening cuts. */
	pad: number;
}

/** `errorCut`: an error answer whose body breaks off (a reset) part way, at `resetAt` of the body. */
export type AnswerKind = 'clean' | 'error' | 'errorCut' | 'error200' | 'rateLimit' | 'reset' | 'redirect' | 'wrongType' | 'stall';

export interface Answer {
	kind: AnswerKind;
	status: number;
	/** Which error body shape (modulo the shapes). */
	shape: number;
	/** `null`: no Retry-After header. */
	retryAfter: string | null;
	/** For `reset`: where in the raw answer the connection is cut, 0..1. */
	resetAt: number;
	headDelayMs: number;
	/** Bytes per write and the pause between writes; chunk 0 writes the answer at once. */
	dripChunk: number;
	dripIntervalMs: number;
	/** Streams: keep-alive comments for this long before the first event. */
	keepAliveMs: number;
	/** For `stall`: head written, then nothing for this long (keep-alives on streams). */
	stallMs: number;
	/** Where a redirect points: the sibling origin (by IP or by name), or the gateway itself (`self`: a same-origin 307 re-sends the body). */
	redirectTo: 'ip2' | 'hostName' | 'self';
	contentType: string | null;
	leak: Leak | null;
}

/**
 * In a planned submit id, the secret header value: a gateway may issue ids that hold it glued to
 * their words (`task_<value>_1`), which the policy keeps whole. A value of SHORT_SECRET characters
 * or more is masked wherever it appears, so such a value gives its first 7 characters (no secret form).
 */
export const HEADER_VALUE_SLOT = '{headerValue}';
const valueInId = (headerValue: string) => (headerValue.length < SHORT_SECRET ? headerValue : headerValue.slice(0, 7));

export interface VideoPlan {
	/** The ids the submits return, in order (then `task_fuzz_<n>`); HEADER_VALUE_SLOT in one is the header value. */
	submitIds: string[];
	/** Status answers saying QUEUED/IN_PROGRESS before the end state. */
	pendingPolls: number;
	terminal: 'SUCCESS' | 'FAILURE';
	/** The status answer names another task (one this gateway also knows) in data.task_id. */
	foreignId: boolean;
	/** result_url on a sibling origin instead of the gateway's own. */
	resultOnSibling: boolean;
	/** result_url as a reference relative to the gateway's origin (`/r<run>/files/video.mp4`). */
	relativeResult?: boolean;
	/** A failed task's reason in result_url, as new-api writes it, instead of fail_reason. */
	reasonInResultUrl?: boolean;
	/** The state of the first pending answer (then IN_PROGRESS): the document's QUEUED, or new-api's NOT_START (0%) or SUBMITTED (10%). */
	firstPending?: PendingState;
}

export type PendingState = 'QUEUED' | 'NOT_START' | 'SUBMITTED';
/** The progress new-api reports with each first pending state (the document's QUEUED keeps this gateway's 40%). */
const PENDING_PROGRESS: Record<PendingState, string> = { QUEUED: '40%', NOT_START: '0%', SUBMITTED: '10%' };

/**
 * How the gateway answers a request with a large body (a streamed file): after its first 256 KB,
 * before reading the rest, then reading on, pausing, or closing the connection ('none': at its end);
 * 'nodeServer': the answer goes out through Node's own ServerResponse, whose server then does what
 * it does with the rest of an unread body (a `Connection: close` request's socket is closed under
 * it, a reset; a keep-alive one is drained). The plan's answer is sent whole, its timing not applied.
 */
export type EarlyMode = 'none' | 'keepReading' | 'stopReading' | 'close' | 'nodeServer';

export interface RunPlan {
	answers: Answer[];
	/** The k-th request with a large body is answered as `early[k]` says (then at its end). */
	early?: EarlyMode[];
	/** The text of clean chat answers. */
	text: string;
	/** Chat Model runs: the first answer to a request offering tools calls the tool. */
	toolCall: boolean;
	/** The form of that call's arguments: a JSON object, or what a model or relay garbles them into. */
	toolArgs: ToolArgsForm;
	/**
	 * How a streamed answer numbers its tool calls: `given`, one call in pieces at index 0 (OpenAI);
	 * `zero`, two parallel calls, each whole under its own id, both at index 0 (new-api before its
	 * PR #2701 for Gemini); `none`, the same without index (Gemini's OpenAI endpoint). Unset: given.
	 */
	toolIndex?: ToolIndexForm;
	video: VideoPlan;
	/** Gateway Account runs: the balance the gateway reports (unset: none, every balance path a 404). */
	balance?: BalancePlan;
	/** Streamed answers (issue 28, Idle Timeout): each goes silent as this says (unset, or `ms` 0: never). */
	silence?: SilencePlan;
}

/** After `afterEvents` events of a streamed answer, `ms` of silence: nothing at all, or keep-alives (`pings`). */
export interface SilencePlan {
	afterEvents: number;
	ms: number;
	pings: boolean;
	/** The keep-alive's form: a comment (the default), or a lone line end, as some relays send it (the Idle Timeout review). */
	keepAlive?: 'comment' | 'newline';
	/** How often a keep-alive is sent: 100 ms unless set. */
	pingEveryMs?: number;
}

/** The balance answers of a run: which interface answers, the money rule of /api/status, the amounts and how they are written. */
export interface BalancePlan {
	route: 'newapi' | 'dashboard' | 'none';
	/** Whether /api/status is served (with quota_per_unit). */
	rate: boolean;
	display: 'USD' | 'CNY' | 'TOKENS';
	/** Quota units granted; used is its share. */
	granted: number;
	usedShare: number;
	unlimited: boolean;
	expiresAt: number;
	/** How the amounts are written: numbers, or what a broken relay sends (text, nothing, null). */
	amountForm: 'number' | 'string' | 'missing' | 'null';
}

/** The paths a balance read asks for (Gateway Account, the credential test). */
export const BALANCE_PATHS = /^\/(api\/status|api\/usage\/token\/?|v1\/dashboard\/billing\/(subscription|usage))$/;

const QUOTA_PER_UNIT = 500_000;
const USD_EXCHANGE_RATE = 7.3;

/** An amount as the plan writes it. */
function writtenAmount(plan: BalancePlan, value: number): unknown {
	if (plan.amountForm === 'string') return String(value);
	if (plan.amountForm === 'null') return null;
	if (plan.amountForm === 'missing') return undefined;
	return value;
}

/** The balance routes' clean answers (new-api's and the dashboard pair's shapes); undefined for any other path. */
export function balanceAnswer(plan: BalancePlan | undefined, p: string, quote: string): { status: number; body: Record<string, unknown> } | undefined {
	if (!BALANCE_PATHS.test(p)) return undefined;
	const notServed = { status: 404, body: { error: { message: `Invalid URL (GET ${p})`, type: 'invalid_request_error' } } };
	if (!plan) return notServed;
	const used = Math.floor(plan.granted * plan.usedShare);
	const display = (quota: number) => (plan.display === 'TOKENS' ? quota : (quota / QUOTA_PER_UNIT) * (plan.display === 'CNY' ? USD_EXCHANGE_RATE : 1));
	if (p === '/api/status') {
		if (!plan.rate) return notServed;
		return { status: 200, body: { success: true, message: '', data: { quota_per_unit: QUOTA_PER_UNIT, quota_display_type: plan.display, display_in_currency: plan.display !== 'TOKENS', usd_exchange_rate: USD_EXCHANGE_RATE, system_name: `New API${quote}` } } };
	}
	if (p === '/api/usage/token/' && plan.route === 'newapi') {
		const data = { object: 'token_usage', name: `key${quote}`, total_granted: writtenAmount(plan, plan.granted), total_used: writtenAmount(plan, used), total_available: writtenAmount(plan, plan.granted - used), unlimited_quota: plan.unlimited, expires_at: plan.expiresAt };
		return { status: 200, body: { code: true, message: 'ok', data } };
	}
	if (p === '/v1/dashboard/billing/subscription' && plan.route === 'dashboard') {
		const limit = plan.unlimited ? 100_000_000 : display(plan.granted);
		return { status: 200, body: { object: `billing_subscription${quote}`, hard_limit_usd: writtenAmount(plan, limit), soft_limit_usd: limit, access_until: Math.max(0, plan.expiresAt) } };
	}
	if (p === '/v1/dashboard/billing/usage' && plan.route === 'dashboard') return { status: 200, body: { object: 'list', total_usage: writtenAmount(plan, display(used) * 100) } };
	return notServed;
}

/** What Gateway Account must report for a plan, worked out from the plan alone (not the node's code). */
export interface ExpectedBalance {
	unit: 'USD' | 'quota';
	unlimited: boolean;
	expiresAt: string | null;
	source: string;
	/** Undefined where the gateway gives no limit to compare (an unlimited key's dashboard mark). */
	amounts?: { available: number; used: number; granted: number };
}

/**
 * The balance a plan's answers mean, or undefined where they mean none (no route, amounts that are
 * not numbers) or are ambiguous (a limited key whose dashboard limit is exactly the unlimited mark).
 * Money wherever /api/status gives its rate, whatever the route and the site's display; without
 * it, new-api's raw units, or the dashboard's numbers as its fields name them (USD).
 */
export function expectedBalance(plan: BalancePlan | undefined): ExpectedBalance | undefined {
	if (!plan || plan.route === 'none' || plan.amountForm !== 'number') return undefined;
	const used = Math.floor(plan.granted * plan.usedShare);
	const expiresAt = plan.expiresAt > 0 ? new Date(plan.expiresAt * 1000).toISOString() : null;
	const inUsd = (quota: number) => quota / QUOTA_PER_UNIT;
	const amountsIn = (convert: (quota: number) => number) => ({ available: convert(plan.granted) - convert(used), used: convert(used), granted: convert(plan.granted) });
	if (plan.route === 'newapi') {
		return { unit: plan.rate ? 'USD' : 'quota', unlimited: plan.unlimited, expiresAt, source: '/api/usage/token/', amounts: amountsIn(plan.rate ? inUsd : (quota) => quota) };
	}
	const written = (quota: number) => (plan.display === 'TOKENS' ? quota : inUsd(quota) * (plan.display === 'CNY' ? USD_EXCHANGE_RATE : 1));
	if (!plan.unlimited && written(plan.granted) === 100_000_000) return undefined;
	const amounts = plan.unlimited ? undefined : amountsIn(plan.rate ? inUsd : written);
	return { unit: 'USD', unlimited: plan.unlimited, expiresAt, source: '/v1/dashboard/billing/subscription', amounts };
}

export type ToolIndexForm = 'given' | 'zero' | 'none';

export type ToolArgsForm = 'object' | 'cut' | 'text' | 'list' | 'string' | 'null';

/** A tool call's arguments in the planned form, the quote (if any) inside them. */
export function toolArguments(form: ToolArgsForm, quote: string): string {
	const object = JSON.stringify({ input: `2 + 3${quote}` });
	switch (form) {
		case 'object':
			return object;
		case 'cut':
			return object.slice(0, object.length - 3);
		case 'text':
			return `input=2+3${quote}`;
		case 'list':
			return JSON.stringify([`2 + 3${quote}`]);
		case 'string':
			return JSON.stringify(`2 + 3${quote}`);
		case 'null':
			return 'null';
	}
}

export interface Secrets {
	key: string;
	headerName: string;
	headerValue: string;
}

export interface LoggedRequest {
	run: number;
	method: string;
	/** Path after the run's base path, as it arrived (not decoded). */
	path: string;
	host: string;
	/** Which listener: the gateway's own origin or the sibling on 127.0.0.2. */
	origin: 'own' | 'sibling';
	headers: http.IncomingHttpHeaders;
	body: string;
	at: number;
	/** The status put on the wire, or undefined when the connection was cut before it. */
	status?: number;
	/** The whole answer left (the last byte was handed to the socket). */
	complete: boolean;
	answerKind: AnswerKind | 'late';
	/** Clean chat text sent (whole answers and streams), with whether a leak was put into it. */
	text?: string;
	textLeaked?: boolean;
	/** A task id a submit answered with (cleanly, whole). */
	submittedId?: string;
	/** For late requests: when their run had ended. */
	settledAt?: number;
	/** How long the gateway paused while answering, by plan (head delay, keep-alives, drips, stall). */
	pausedMs: number;
	/** Each time the answer went quiet after its head (a stall, a silence): planned length, keep-alives or none, when the client left during it. */
	silences?: Silence[];
	/** A secret was quoted into a video task's status (which then names no state the node knows). */
	statusQuoted?: boolean;
	/** The answer called this tool with arguments that cannot be run (not a JSON object). */
	malformedToolCall?: string;
	/** Answered before its body was read whole, and how the gateway went on. */
	early?: EarlyMode;
	/** When either end of its connection closed while its answer was being written. */
	closedAt?: number;
}

export interface Silence {
	startedAt: number;
	plannedMs: number;
	/** Keep-alive comments were sent during it (a sign of life). */
	pings: boolean;
	/** The client closed the connection during it. */
	clientLeftAt?: number;
}

export interface RunState {
	run: number;
	plan: RunPlan;
	secrets: Secrets;
	requests: LoggedRequest[];
	submitCount: number;
	polls: Map<string, number>;
	/** Requests with a large body seen so far (which `plan.early` applies to). */
	largeBodies?: number;
	/** When the run's promise settled; requests after it are late. */
	settledAt?: number;
	/** Sentences put into answers that hold a setting header's value (must reach the output unchanged). */
	settingTexts: string[];
}

const PNG_1X1 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const MP4 = fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'sample-video.mp4'));
/** A task another run owns: what a foreign id in a status answer points at. */
export const FOREIGN_TASK_ID = 'task_foreign_77';
const SETTING_WORD = 'openai';

/** The key or the secret header in the form the plan asks for. */
export function leakValue(secrets: Secrets, leak: Leak): string {
	const { key, headerValue } = secrets;
	switch (leak.form) {
		case 'whole':
			return key;
		case 'secretPart':
			return key.slice(3);
		case 'cutStart':
			return key.slice(0, Math.min(key.length, leak.cut));
		case 'cutEnd':
			return key.slice(Math.max(0, key.length - leak.cut));
		case 'url':
			return encodeURIComponent(key);
		case 'base64':
			return Buffer.from(key).toString('base64');
		case 'bearer':
			return `Bearer ${key}`;
		case 'header':
			return headerValue;
		case 'headerUrl':
			return encodeURIComponent(headerValue);
		case 'headerBase64':
			return Buffer.from(headerValue).toString('base64');
		// Issue 26: a relay quotes the header value cut to its first characters (8 or more), or
		// encodes it (quote, quote_plus, twice, PHP's \/, JSON \u), or the key's start so.
		case 'headerCut':
			return headerValue.slice(0, Math.max(8, leak.cut));
		case 'headerEncoded':
			return encodedLeak(headerValue.slice(0, Math.max(8, leak.cut)), leak.encoding ?? 0);
		case 'keyEncoded':
			return encodedLeak(key.slice(0, Math.max(11, leak.cut)), leak.encoding ?? 0);
	}
}

function encodedLeak(value: string, encoding: number): string {
	const forms = Object.values(secretEncodings(value));
	return forms[encoding % forms.length];
}

interface Reply {
	status: number;
	headers: Record<string, string>;
	/** Whole body, or SSE frames written one by one (a stream). */
	body: Buffer | string[];
}

const json = (status: number, value: unknown, extra: Record<string, string> = {}): Reply => ({
	status,
	headers: { 'content-type': 'application/json', ...extra },
	body: Buffer.from(JSON.stringify(value)),
});

/** Fields an answer can quote a secret in, and the answer built with the quote in one of them. */
type Builder = (quote: (slot: string) => string) => Reply;

const ERROR_SHAPES: Array<(status: number, q: (slot: string) => string) => { body: Buffer; type: string }> = [
	(status, q) => ({ body: Buffer.from(JSON.stringify({ error: { message: `Request failed: ${q('message')}`, type: 'invalid_request_error', code: status } })), type: 'application/json' }),
	(_s, q) => ({ body: Buffer.from(JSON.stringify({ message: `upstream said ${q('message')}` })), type: 'application/json' }),
	(_s, q) => ({ body: Buffer.from(JSON.stringify({ error: `bad thing ${q('message')}` })), type: 'application/json' }),
	(status, q) => ({ body: Buffer.from(JSON.stringify({ error: status, message: `plant refused ${q('message')}` })), type: 'application/json' }),
	(_s, q) => ({ body: Buffer.from(JSON.stringify({ code: 'error', success: false, msg: `quota ${q('message')}`, data: null })), type: 'application/json' }),
	(_s, q) => ({ body: Buffer.from(`<html><body><h1>Bad Gateway</h1><p>${q('message')}</p></body></html>`), type: 'text/html' }),
	(_s, q) => ({ body: Buffer.from(`plain failure ${q('message')}`), type: 'text/plain' }),
	() => ({ body: Buffer.alloc(0), type: 'application/json' }),
	(status, q) => ({
		body: Buffer.from(JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: `${q('message')} is not supported by ${SETTING_WORD}` }, status })),
		type: 'application/json',
	}),
];

export class FuzzGateway {
	private readonly runs = new Map<number, RunState>();
	private servers: http.Server[] = [];
	private sockets = new Set<Socket>();
	private nextRun = 1;
	/** Requests that arrived for a run after it had settled, from any run. */
	readonly late: LoggedRequest[] = [];
	port = 0;
	siblingPort = 0;

	async start(): Promise<void> {
		const own = http.createServer((req, res) => this.handle(req, res, 'own'));
		const sibling = http.createServer((req, res) => this.handle(req, res, 'sibling'));
		for (const server of [own, sibling]) {
			server.on('connection', (socket) => {
				this.sockets.add(socket);
				socket.on('close', () => this.sockets.delete(socket));
			});
		}
		await new Promise<void>((resolve) => own.listen(0, '127.0.0.1', resolve));
		await new Promise<void>((resolve) => sibling.listen(0, '127.0.0.2', resolve));
		this.port = (own.address() as AddressInfo).port;
		this.siblingPort = (sibling.address() as AddressInfo).port;
		this.servers = [own, sibling];
	}

	async close(): Promise<void> {
		for (const socket of this.sockets) socket.destroy();
		await Promise.all(this.servers.map((server) => new Promise((resolve) => server.close(resolve))));
	}

	/** A new run: its base URL is the gateway's own origin with the run's path. */
	open(plan: RunPlan, secrets: Secrets): RunState & { baseUrl: string } {
		const run = this.nextRun++;
		const state: RunState = { run, plan, secrets, requests: [], submitCount: 0, polls: new Map(), largeBodies: 0, settingTexts: [] };
		this.runs.set(run, state);
		return Object.assign(state, { baseUrl: `http://127.0.0.1:${this.port}/r${run}` });
	}

	settle(state: RunState): void {
		state.settledAt = Date.now();
	}

	/** Forgets a run's bodies (kept: its late-request watch). */
	forget(state: RunState): void {
		state.requests = state.requests.map((r) => ({ ...r, body: r.body.slice(0, 200) }));
	}

	private siblingBase(run: number, to: 'ip2' | 'hostName'): string {
		return to === 'ip2' ? `http://127.0.0.2:${this.siblingPort}/r${run}` : `http://files.example.test:${this.port}/r${run}`;
	}

	private handle(req: http.IncomingMessage, res: http.ServerResponse, origin: 'own' | 'sibling'): void {
		// A request starts when its head arrives: one sent before its run ended may finish arriving after.
		const arrived = Date.now();
		const parts: Buffer[] = [];
		let received = 0;
		let answered = false;
		const match = /^\/r(\d+)(\/.*)?$/.exec(req.url ?? '');
		const state = match ? this.runs.get(Number(match[1])) : undefined;
		const log = (early?: EarlyMode): LoggedRequest | undefined => {
			const socket = req.socket;
			if (!match || !state) {
				writeRaw(socket, { status: 404, headers: { 'content-type': 'text/plain' }, body: Buffer.from('no such run') }, 0, 0);
				return undefined;
			}
			const logged: LoggedRequest = {
				run: state.run,
				method: req.method ?? 'GET',
				path: match[2] ?? '/',
				host: req.headers.host ?? '',
				origin,
				headers: req.headers,
				body: Buffer.concat(parts).toString('utf8'),
				at: arrived,
				complete: false,
				answerKind: 'clean',
				pausedMs: 0,
				early,
			};
			state.requests.push(logged);
			watchClose(socket, logged);
			if (state.settledAt !== undefined && logged.at > state.settledAt) {
				logged.answerKind = 'late';
				this.late.push({ ...logged, settledAt: state.settledAt });
			}
			return logged;
		};
		req.on('data', (chunk: Buffer) => {
			if (answered) return;
			parts.push(chunk);
			received += chunk.length;
			// Decided once per request, when its body passes EARLY_AT.
			if (received < EARLY_AT || received - chunk.length >= EARLY_AT || !state) return;
			const mode = state.plan.early?.[state.largeBodies ?? 0] ?? 'none';
			state.largeBodies = (state.largeBodies ?? 0) + 1;
			if (mode === 'none') return;
			answered = true;
			const logged = log(mode);
			if (!logged) return;
			if (mode === 'stopReading') req.pause();
			if (mode === 'nodeServer') return void this.answerThroughServer(state, logged, res);
			void this.answer(state, logged, req.socket, res).then(() => {
				if (mode === 'close') req.socket.destroy();
			});
		});
		req.on('end', () => {
			if (answered) return;
			answered = true;
			const logged = log();
			if (logged && state) void this.answer(state, logged, req.socket, res);
		});
	}

	/** The planned answer written by Node's http server itself (`plan.early` 'nodeServer'). */
	private answerThroughServer(state: RunState, logged: LoggedRequest, res: http.ServerResponse): void {
		const reply = this.reply(state, logged);
		res.on('error', () => undefined);
		res.writeHead(reply.status, reply.headers);
		logged.status = reply.status;
		res.end(Buffer.isBuffer(reply.body) ? reply.body : reply.body.join(''), () => {
			completed(logged);
		});
	}

	private async answer(state: RunState, logged: LoggedRequest, socket: Socket, res: http.ServerResponse): Promise<void> {
		await deliver(socket, this.reply(state, logged), state.plan.answers[this.ownIndex(state, logged)] ?? CLEAN, logged, res, state.plan.silence);
	}

	private ownIndex(state: RunState, logged: LoggedRequest): number {
		return state.requests.filter((r) => r.origin === 'own').indexOf(logged);
	}

	/** The run's planned answer to a request, as a reply. */
	private reply(state: RunState, logged: LoggedRequest): Reply {
		// Files on the sibling origin are served clean: the attack there is who asks, not the answer.
		const index = this.ownIndex(state, logged);
		const planned = logged.origin === 'own' ? state.plan.answers[index] : undefined;
		const answer: Answer = planned ?? CLEAN;
		logged.answerKind = logged.answerKind === 'late' ? 'late' : answer.kind;
		const quoteOf = (slots: string[]) => {
			const leak = answer.leak;
			const chosen = leak ? slots[leak.slot % slots.length] : undefined;
			// A quote in a task's status makes it a status the node does not know: no clean answer.
			if (leak && chosen === 'status') logged.statusQuoted = true;
			return (slot: string) => (leak && slot === chosen ? ` ${'detail '.repeat(leak.pad ?? 0)}${leakValue(state.secrets, leak)} ` : '');
		};
		let reply: Reply;
		switch (answer.kind) {
			case 'error':
			case 'errorCut':
			case 'error200': {
				const shape = ERROR_SHAPES[answer.shape % ERROR_SHAPES.length];
				const { body, type } = shape(answer.status, quoteOf(['message']));
				if (answer.shape % ERROR_SHAPES.length === ERROR_SHAPES.length - 1) state.settingTexts.push(`is not supported by ${SETTING_WORD}`);
				reply = { status: answer.kind === 'error200' ? 200 : answer.status, headers: { 'content-type': type }, body };
				break;
			}
			case 'rateLimit': {
				const headers: Record<string, string> = { 'content-type': 'application/json' };
				if (answer.retryAfter !== null) headers['retry-after'] = answer.retryAfter;
				const quote = quoteOf(['message']);
				reply = { status: 429, headers, body: Buffer.from(JSON.stringify({ error: { message: `Too many requests${quote('message')}`, type: 'rate_limit' } })) };
				break;
			}
			case 'redirect': {
				const base = answer.redirectTo === 'self' ? `http://127.0.0.1:${this.port}/r${state.run}` : this.siblingBase(state.run, answer.redirectTo);
				// With a short page as its body, which the plan's stall holds back (deliver).
				reply = { status: logged.method === 'GET' ? 302 : 307, headers: { location: `${base}${logged.path}`, 'content-type': 'text/html' }, body: Buffer.from('<p>Moved</p>') };
				break;
			}
			default:
				reply = this.route(state, logged, quoteOf);
				if (answer.kind === 'wrongType' && answer.contentType !== null) reply.headers['content-type'] = answer.contentType;
				else if (answer.kind === 'wrongType') delete reply.headers['content-type'];
		}
		return reply;
	}

	/** The clean answer of an endpoint, with a quote in one of its fields when the plan says so. */
	private route(state: RunState, logged: LoggedRequest, quoteOf: (slots: string[]) => (slot: string) => string): Reply {
		const { method, path: p } = logged;
		let body: Record<string, unknown> = {};
		try {
			body = JSON.parse(logged.body || '{}') as Record<string, unknown>;
		} catch {
			// not JSON: answered as if empty
		}
		const plan = state.plan;
		if (method === 'POST' && p === '/v1/chat/completions') return this.chat(state, logged, body, quoteOf);
		if (method === 'POST' && p === '/v1/messages') return this.messages(state, logged, body, quoteOf);
		// An edit's text fields are multipart parts: read as the JSON fields of a generation.
		if (method === 'POST' && p === '/v1/images/edits') body = formFields(logged.body);
		if (method === 'POST' && (p === '/v1/images/generations' || p === '/v1/images/edits')) {
			const q = quoteOf(['revised_prompt', 'url']);
			const n = typeof body.n === 'number' && body.n >= 1 && body.n <= 4 ? body.n : 1;
			const data = Array.from({ length: n }, (_, i) =>
				body.response_format === 'b64_json'
					? { b64_json: PNG_1X1.toString('base64'), revised_prompt: `A fern${q('revised_prompt')}, served by ${SETTING_WORD}` }
					: { url: `http://127.0.0.1:${this.port}/r${state.run}/files/image-${i}.png${q('url') ? `?sig=${encodeURIComponent(q('url').trim())}` : ''}`, revised_prompt: `A fern${q('revised_prompt')}` },
			);
			if (body.response_format === 'b64_json') state.settingTexts.push(`served by ${SETTING_WORD}`);
			return json(200, { created: 1, data });
		}
		if (method === 'POST' && p === '/v1/video/generations') {
			const q = quoteOf(['status', 'model']);
			const id = (plan.video.submitIds[state.submitCount] ?? `task_fuzz_${state.submitCount}`).replace(HEADER_VALUE_SLOT, valueInId(state.secrets.headerValue));
			state.submitCount++;
			logged.submittedId = id;
			return json(200, { task_id: id, id, object: 'video', model: `${String(body.model)}${q('model')}`, status: `queued${q('status')}` });
		}
		const status = /^\/v1\/video\/generations\/([^/?]+)$/.exec(p);
		if (method === 'GET' && status) {
			const id = decodeURIComponent(status[1]);
			const q = quoteOf(['fail_reason', 'status', 'progress', 'result_url']);
			const polls = state.polls.get(id) ?? 0;
			state.polls.set(id, polls + 1);
			const foreign = id === FOREIGN_TASK_ID;
			const done = foreign || polls >= plan.video.pendingPolls;
			const terminal = foreign ? 'SUCCESS' : plan.video.terminal;
			const firstPending = plan.video.firstPending ?? 'QUEUED';
			const base = plan.video.resultOnSibling ? this.siblingBase(state.run, 'hostName') : `http://127.0.0.1:${this.port}/r${state.run}`;
			const data: Record<string, unknown> = {
				task_id: plan.video.foreignId && !foreign ? FOREIGN_TASK_ID : id,
				status: done ? `${terminal}${q('status')}`.trim() : polls === 0 ? firstPending : 'IN_PROGRESS',
				progress: done ? `100%${q('progress')}` : polls === 0 ? PENDING_PROGRESS[firstPending] : '40%',
			};
			const relative = plan.video.relativeResult && !plan.video.resultOnSibling;
			if (done && terminal === 'SUCCESS') data.result_url = `${relative ? `/r${state.run}` : base}/files/${foreign ? 'other' : 'video'}.mp4${q('result_url') ? `?sig=${encodeURIComponent(q('result_url').trim())}` : ''}`;
			if (done && terminal === 'FAILURE') data[plan.video.reasonInResultUrl ? 'result_url' : 'fail_reason'] = `content policy${q('fail_reason')}, routed by ${SETTING_WORD}`;
			if (done && terminal === 'FAILURE') state.settingTexts.push(`routed by ${SETTING_WORD}`);
			return json(200, { code: 'success', data });
		}
		if (method === 'GET' && p.startsWith('/files/')) {
			const q = quoteOf(['filename']);
			const isImage = p.includes('.png');
			const headers: Record<string, string> = { 'content-type': isImage ? 'image/png' : 'video/mp4' };
			if (q('filename')) headers['content-disposition'] = `attachment; filename="clip-${q('filename').trim().replace(/["\r\n]/g, '')}.mp4"`;
			return { status: 200, headers, body: isImage ? PNG_1X1 : MP4 };
		}
		if (method === 'POST' && p === '/plants') {
			const q = quoteOf(['tag', 'name']);
			state.settingTexts.push(`grown by ${SETTING_WORD}`);
			return json(200, { id: body.id, name: `${String(body.name)}${q('name')}`, tag: `fern${q('tag')} grown by ${SETTING_WORD}` });
		}
		const balance = method === 'GET' ? balanceAnswer(plan.balance, p, quoteOf(['name'])('name')) : undefined;
		if (balance) return json(balance.status, balance.body);
		if (method === 'GET' && p === '/v1/models') return json(200, { object: 'list', data: [] });
		return json(404, { error: { message: `no route ${method} ${p}` } });
	}

	private chat(state: RunState, logged: LoggedRequest, body: Record<string, unknown>, quoteOf: (slots: string[]) => (slot: string) => string): Reply {
		const messages = Array.isArray(body.messages) ? (body.messages as Array<Record<string, unknown>>) : [];
		const hasToolResult = messages.some((m) => m.role === 'tool');
		const callsTool = state.plan.toolCall && Array.isArray(body.tools) && body.tools.length > 0 && !hasToolResult;
		const model = String(body.model ?? 'chat-sonnet-5');
		const text = state.plan.text;
		if (callsTool && (state.plan.toolArgs ?? 'object') !== 'object') logged.malformedToolCall = 'Calculator';
		if (body.stream === true) {
			const q = quoteOf(['delta', 'toolArgs', 'usage', 'model', 'reasoning']);
			const frames: string[] = [];
			const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
				`data: ${JSON.stringify({ id: 'chatcmpl-fuzz', object: 'chat.completion.chunk', model: `${model}${q('model')}`, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
			if (q('reasoning')) frames.push(chunk({ role: 'assistant', reasoning_content: `thinking${q('reasoning')}` }));
			if (callsTool) {
				const args = toolArguments(state.plan.toolArgs ?? 'object', q('toolArgs'));
				const indexForm = state.plan.toolIndex ?? 'given';
				if (indexForm === 'given') {
					frames.push(chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_fuzz_1', type: 'function', function: { name: 'Calculator', arguments: '' } }] }));
					for (let i = 0; i < args.length; i += 7) frames.push(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(i, i + 7) } }] }));
				} else {
					for (const id of ['call_fuzz_1', 'call_fuzz_2']) {
						frames.push(chunk({ role: 'assistant', tool_calls: [{ ...(indexForm === 'zero' ? { index: 0 } : {}), id, type: 'function', function: { name: 'Calculator', arguments: args } }] }));
					}
				}
				frames.push(chunk({}, 'tool_calls'));
			} else {
				streamWords(text, q('delta'), logged).forEach((piece, i) => frames.push(chunk(i === 0 ? { role: 'assistant', content: piece } : { content: piece })));
				frames.push(chunk({}, 'stop'));
			}
			frames.push(`data: ${JSON.stringify({ id: 'chatcmpl-fuzz', object: 'chat.completion.chunk', model, choices: [], usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12, ...(q('usage') ? { note: q('usage') } : {}) } })}\n\n`);
			frames.push('data: [DONE]\n\n');
			return { status: 200, headers: { 'content-type': 'text/event-stream' }, body: frames };
		}
		const q = quoteOf(['text', 'toolArgs', 'usage', 'model', 'reasoning']);
		const message: Record<string, unknown> = { role: 'assistant', content: callsTool ? null : `${text}${q('text')}` };
		if (q('reasoning')) message.reasoning_content = `thinking${q('reasoning')}`;
		if (callsTool) message.tool_calls = [{ id: 'call_fuzz_1', type: 'function', function: { name: 'Calculator', arguments: toolArguments(state.plan.toolArgs ?? 'object', q('toolArgs')) } }];
		else {
			logged.text = `${text}${q('text')}`;
			logged.textLeaked = q('text') !== '';
		}
		return json(200, {
			id: 'chatcmpl-fuzz',
			object: 'chat.completion',
			model: `${model}${q('model')}`,
			choices: [{ index: 0, message, finish_reason: callsTool ? 'tool_calls' : 'stop' }],
			usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12, ...(q('usage') ? { note: q('usage') } : {}) },
		});
	}

	private messages(_state: RunState, logged: LoggedRequest, body: Record<string, unknown>, quoteOf: (slots: string[]) => (slot: string) => string): Reply {
		const state = _state;
		const model = String(body.model ?? 'chat-sonnet-5');
		const text = state.plan.text;
		if (body.stream === true) {
			const q = quoteOf(['delta', 'usage', 'model', 'thinking']);
			const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
			const frames: string[] = [event('message_start', { message: { id: 'msg_fuzz', type: 'message', role: 'assistant', model: `${model}${q('model')}`, content: [], usage: { input_tokens: 5, output_tokens: 0 } } })];
			let block = 0;
			if (q('thinking')) {
				frames.push(event('content_block_start', { index: block, content_block: { type: 'thinking', thinking: '' } }));
				frames.push(event('content_block_delta', { index: block, delta: { type: 'thinking_delta', thinking: `pondering${q('thinking')}` } }));
				frames.push(event('content_block_stop', { index: block }));
				block++;
			}
			frames.push(event('content_block_start', { index: block, content_block: { type: 'text', text: '' } }));
			for (const piece of streamWords(text, q('delta'), logged)) frames.push(event('content_block_delta', { index: block, delta: { type: 'text_delta', text: piece } }));
			frames.push(event('content_block_stop', { index: block }));
			frames.push(event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 7, ...(q('usage') ? { note: q('usage') } : {}) } }));
			frames.push(event('message_stop', {}));
			return { status: 200, headers: { 'content-type': 'text/event-stream' }, body: frames };
		}
		const q = quoteOf(['text', 'usage', 'model', 'thinking']);
		const content: Array<Record<string, unknown>> = [];
		if (q('thinking')) content.push({ type: 'thinking', thinking: `pondering${q('thinking')}`, signature: 'sig' });
		content.push({ type: 'text', text: `${text}${q('text')}` });
		logged.text = `${text}${q('text')}`;
		logged.textLeaked = q('text') !== '';
		return json(200, {
			id: 'msg_fuzz',
			type: 'message',
			role: 'assistant',
			model: `${model}${q('model')}`,
			content,
			stop_reason: 'end_turn',
			usage: { input_tokens: 5, output_tokens: 7, ...(q('usage') ? { note: q('usage') } : {}) },
		});
	}
}

/** A text streamed a word a delta, the quote (if any) in the middle one; logs what was sent. */
function streamWords(text: string, quote: string, logged: LoggedRequest): string[] {
	const words = text.split(/(?<= )/);
	const middle = Math.floor(words.length / 2);
	const pieces = words.map((word, i) => (i === middle ? `${word}${quote}` : word));
	logged.text = pieces.join('');
	logged.textLeaked = quote !== '';
	return pieces;
}

export const CLEAN: Answer = {
	kind: 'clean',
	status: 200,
	shape: 0,
	retryAfter: null,
	resetAt: 1,
	headDelayMs: 0,
	dripChunk: 0,
	dripIntervalMs: 0,
	keepAliveMs: 0,
	stallMs: 0,
	redirectTo: 'ip2',
	contentType: null,
	leak: null,
};

const REASONS: Record<number, string> = { 200: 'OK', 302: 'Found', 307: 'Temporary Redirect', 429: 'Too Many Requests' };

function head(reply: Reply): string {
	const lines = [`HTTP/1.1 ${reply.status} ${REASONS[reply.status] ?? http.STATUS_CODES[reply.status] ?? 'Status'}`];
	for (const [name, value] of Object.entries(reply.headers)) lines.push(`${name}: ${value}`);
	if (Buffer.isBuffer(reply.body)) lines.push(`content-length: ${reply.body.length}`);
	lines.push('connection: close', '', '');
	return lines.join('\r\n');
}

const DRIP_BUDGET_MS = 400;
/** A body this large is a streamed file: it may be answered before it is read whole (`plan.early`). */
const EARLY_AT = 256 * 1024;

/** The text parts of a multipart body (`name="n"` then its value; a number where it is one), enough to answer it. */
function formFields(body: string): Record<string, unknown> {
	const fields: Record<string, unknown> = {};
	for (const match of body.matchAll(/Content-Disposition: form-data; name="([^"]+)"\r\n\r\n([^\r]*)\r\n/g)) fields[match[1]] = /^\d+$/.test(match[2]) ? Number(match[2]) : match[2];
	return fields;
}

const wait = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms));

function writeRaw(socket: Socket, reply: Reply, _a: number, _b: number): void {
	if (socket.destroyed) return;
	socket.end(Buffer.concat([Buffer.from(head(reply)), Buffer.isBuffer(reply.body) ? reply.body : Buffer.from(reply.body.join(''))]));
}

/**
 * The client end of each connection the node opens, found by its local port: a server that stopped
 * reading a request (`early` 'stopReading') never reads the FIN of a client that leaves, so a quiet
 * time watches the client's own socket close too. The node runs in this process, so every socket
 * its HTTP client opens passes Node's `net.client.socket` channel.
 */
const clientSockets = new Map<number, Socket>();
diagnostics.channel('net.client.socket').subscribe((message) => {
	const socket = (message as { socket: Socket }).socket;
	socket.once('connect', () => {
		const port = socket.localPort;
		if (port === undefined) return;
		clientSockets.set(port, socket);
		socket.once('close', () => clientSockets.get(port) === socket && clientSockets.delete(port));
	});
});

/** Calls `left` once either end of a server-side connection closes. */
function onEitherClose(socket: Socket, left: () => void): () => void {
	const client = socket.remotePort === undefined ? undefined : clientSockets.get(socket.remotePort);
	socket.once('close', left);
	client?.once('close', left);
	return () => {
		socket.removeListener('close', left);
		client?.removeListener('close', left);
	};
}

/** Notes in `logged.closedAt` when its connection closes, until its answer is written whole (`completed`). */
const closeWatches = new WeakMap<LoggedRequest, () => void>();
function watchClose(socket: Socket, logged: LoggedRequest): void {
	closeWatches.set(logged, onEitherClose(socket, () => (logged.closedAt ??= Date.now())));
}

/** The whole answer left: its connection is the client's to keep or close. */
function completed(logged: LoggedRequest): void {
	logged.complete = true;
	closeWatches.get(logged)?.();
}

/** Writes the answer as planned: after a delay, dripped, with keep-alives, cut, or stalled. */
async function deliver(socket: Socket, reply: Reply, answer: Answer, logged: LoggedRequest, _res: http.ServerResponse, silence?: SilencePlan): Promise<void> {
	const streamed = !Buffer.isBuffer(reply.body);
	const headBytes = Buffer.from(head(reply));
	const pieces: Buffer[] = [headBytes, ...(Buffer.isBuffer(reply.body) ? [reply.body] : reply.body.map((frame) => Buffer.from(frame)))];
	const total = pieces.reduce((sum, piece) => sum + piece.length, 0);
	const cutAt =
		answer.kind === 'reset' ? Math.floor(answer.resetAt * total) : answer.kind === 'errorCut' ? headBytes.length + Math.floor(answer.resetAt * (total - headBytes.length)) : Infinity;
	const gone = () => socket.destroyed || socket.writableEnded;
	const write = async (bytes: Buffer): Promise<boolean> => {
		if (gone()) return false;
		return await new Promise((resolve) => socket.write(bytes, (error) => resolve(!error)));
	};
	// Every pause the plan makes is logged: a clean answer that was slowed this much may miss a short limit.
	const paused = async (ms: number) => {
		logged.pausedMs += ms;
		await wait(ms);
	};
	/** A quiet time after the head, logged with when the client left during it: keep-alives (a comment every 100 ms unless the plan says), or nothing. */
	const quiet = async (ms: number, pings: boolean, form: Pick<SilencePlan, 'keepAlive' | 'pingEveryMs'> = {}) => {
		const silence: Silence = { startedAt: Date.now(), plannedMs: ms, pings };
		(logged.silences ??= []).push(silence);
		const left = () => (silence.clientLeftAt ??= Date.now());
		const unwatch = onEitherClose(socket, left);
		const keepAlive = Buffer.from(form.keepAlive === 'newline' ? '\n' : ': keep-alive\n\n');
		const every = form.pingEveryMs ?? 100;
		for (const until = Date.now() + ms; Date.now() < until && !gone(); await paused(Math.min(every, until - Date.now()))) if (pings) await write(keepAlive);
		unwatch();
		if (gone()) left();
	};
	if (answer.headDelayMs > 0) await paused(answer.headDelayMs);
	// Drips are bounded: at most DRIP_BUDGET_MS of pauses for the whole answer.
	const writesAllowed = answer.dripIntervalMs > 0 ? Math.max(1, Math.floor(DRIP_BUDGET_MS / answer.dripIntervalMs)) : Infinity;
	const dripChunk = answer.dripChunk > 0 ? Math.max(answer.dripChunk, Math.ceil(total / writesAllowed)) : 0;
	let written = 0;
	let headSent = false;
	// The pauses of a drip stop once the budget is spent (a stream of many frames pauses per frame too).
	let pausedMs = 0;
	const pause = async (ms: number) => {
		const allowed = Math.min(ms, DRIP_BUDGET_MS - pausedMs);
		if (allowed <= 0) return;
		pausedMs += allowed;
		await paused(allowed);
	};
	for (let p = 0; p < pieces.length; p++) {
		const piece = pieces[p];
		// The first event of a stream may be preceded by keep-alive comments, and a stall.
		if (p === 1 && streamed && answer.keepAliveMs > 0) {
			for (const until = Date.now() + answer.keepAliveMs; Date.now() < until && !gone(); await paused(100)) await write(Buffer.from(': keep-alive\n\n'));
		}
		if (p === 1 && answer.kind === 'stall') await quiet(answer.stallMs, streamed);
		// A redirect's page held back: the node follows the Location at once and must close this connection, not leave it to the gateway.
		if (p === 1 && answer.kind === 'redirect') for (const until = Date.now() + answer.stallMs; Date.now() < until && !gone(); ) await paused(Math.min(100, until - Date.now()));
		if (streamed && silence && silence.ms > 0 && p === 1 + silence.afterEvents) await quiet(silence.ms, silence.pings, silence);
		const chunk = dripChunk > 0 ? dripChunk : piece.length;
		for (let at = 0; at < piece.length; at += chunk) {
			let bytes = piece.subarray(at, Math.min(piece.length, at + chunk));
			if (written + bytes.length > cutAt) bytes = bytes.subarray(0, Math.max(0, cutAt - written));
			if (bytes.length > 0 && !(await write(bytes))) return;
			written += bytes.length;
			if (!headSent && written >= headBytes.length) {
				headSent = true;
				logged.status = reply.status;
			}
			if (written >= cutAt) {
				if (!socket.destroyed) socket.resetAndDestroy();
				return;
			}
			if (dripChunk > 0 && answer.dripIntervalMs > 0) await pause(answer.dripIntervalMs);
		}
		if (streamed && answer.dripIntervalMs > 0 && dripChunk === 0) await pause(answer.dripIntervalMs);
	}
	if (gone()) return;
	await new Promise<void>((resolve) => socket.end(() => resolve()));
	completed(logged);
}
