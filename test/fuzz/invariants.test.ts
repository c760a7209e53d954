/**
 * The checks themselves can fail: each invariant is shown a run that breaks it (and the near
 * misses it must let pass), without any node, so a green property test means the nodes kept the
 * promise, not that the check looked away.
 */
import type { IDataObject } from 'n8n-workflow';

import type { Outcome } from './drive';
import type { LoggedRequest, RunState } from './gateway';
import { checkRun } from './invariants';
import type { InvariantName } from './invariants';
import { FIXED_SECRETS, scenario } from './cases';

const KEY = FIXED_SECRETS.key;

function outcome(overrides: Partial<Outcome> = {}): Outcome {
	return { output: [], logs: [], customData: [], chunks: [], modelResults: [], callDurations: [], startedAt: 0, settledAt: 100, hung: false, neverSettled: false, ...overrides };
}

function request(overrides: Partial<LoggedRequest>): LoggedRequest {
	return { run: 1, method: 'POST', path: '/v1/chat/completions', host: '127.0.0.1:1', origin: 'own', headers: {}, body: '{}', at: 50, status: 200, complete: true, answerKind: 'clean', pausedMs: 0, ...overrides };
}

function state(requests: LoggedRequest[], settledAt = 100): RunState {
	return { run: 1, plan: scenario('chat').plan, secrets: FIXED_SECRETS, requests, submitCount: 0, polls: new Map(), settledAt, settingTexts: [] };
}

/** The invariants a run breaks; `works` (a clean run succeeds) has its own test below. */
const broken = (node: Parameters<typeof scenario>[0], o: Outcome, s: RunState, all = false): InvariantName[] => [
	...new Set(checkRun(scenario(node), o, s).map((v) => v.invariant).filter((name) => all || name !== 'works')),
];

describe('works', () => {
	it('finds a run that fails against clean answers (a vacuous pass), and lets a successful one pass', () => {
		expect(broken('chat', outcome({ error: new Error('The credential is invalid') }), state([]), true)).toEqual(['works']);
		expect(broken('chat', outcome({ output: [{ json: { text: 'The fern grows' } }] }), state([]), true)).toEqual([]);
	});
});

describe('secrets', () => {
	it.each([
		['the key', KEY],
		['the secret part', KEY.slice(3)],
		['8 characters of it', `…${KEY.slice(9, 17)}…`],
		['the key URL-encoded', encodeURIComponent(KEY)],
		['the key in base64', Buffer.from(KEY).toString('base64')],
		['the secret header value as a word', 'token Qk7v9 refused'],
	])('finds %s in an output item', (_name, text) => {
		expect(broken('chat', outcome({ output: [{ json: { text } }] }), state([]))).toEqual(['secrets']);
	});

	it.each([
		['a log line', { logs: [{ level: 'info', message: `sent ${KEY}` }] }],
		['a log line\'s metadata', { logs: [{ level: 'info', message: 'sent', meta: { key: KEY.slice(5, 20) } }] }],
		['custom data', { customData: [{ key: 'k', value: KEY }] }],
		['a streamed chunk', { chunks: [{ type: 'item', itemIndex: 0, content: KEY }] }],
		['the error description', { error: Object.assign(new Error('failed'), { description: `quoted ${KEY}` }) }],
		['the model\'s tool input', { modelResults: [{ type: 'tool-call-delta', argumentsDelta: KEY }] }],
	])('finds the key in %s', (_name, overrides) => {
		expect(broken('chat', outcome(overrides as Partial<Outcome>), state([]))).toEqual(['secrets']);
	});

	it('lets a short secret header value pass inside a longer word, and 7 characters of the key', () => {
		expect(broken('chat', outcome({ output: [{ json: { text: `xQk7v9y ${KEY.slice(3, 10)}` } }] }), state([]))).toEqual([]);
	});

	it('finds a short secret header value glued to a word or in another case (the node reshaped what the gateway quoted as a word), and lets a task id of the run that holds it pass', () => {
		for (const status of ['QUEUED_Qk7v9', 'QUEUED_QK7V9', 'QUEUED QK7V9']) expect(broken('videoSubmit', outcome({ output: [{ json: { status } }] }), state([]))).toEqual(['secrets']);
		const submitted = request({ path: '/v1/video/generations', submittedId: 'task_Qk7v9_1', at: 10 });
		const shown = { output: [{ json: { task_id: 'task_Qk7v9_1', status: 'QUEUED ***' } }], logs: [{ level: 'info', message: 'Video task task_Qk7v9_1 submitted; GET /v1/video/generations/task_Qk7v9_1' }] };
		expect(broken('videoSubmit', outcome(shown), state([submitted]))).toEqual([]);
		expect(broken('videoSubmit', outcome({ ...shown, output: [{ json: { task_id: 'task_Qk7v9_1', status: 'QUEUED_QK7V9' } }] }), state([submitted]))).toEqual(['secrets']);
	});
});

describe('deadlines and late requests', () => {
	it('finds a run that took longer than its Timeout plus 2 s', () => {
		expect(broken('chat', outcome({ settledAt: 4100 }), state([]))).toEqual(['deadline']);
		expect(broken('chat', outcome({ settledAt: 3900 }), state([]))).toEqual([]);
	});

	it('finds a request that arrived after the run ended', () => {
		expect(broken('chat', outcome(), state([request({ at: 150 })]))).toEqual(['lateRequest']);
	});
});

describe('the task of record', () => {
	const submit = (id: string) => request({ path: '/v1/video/generations', submittedId: id, at: 10 });

	it('finds a submitted task id missing from the output, or from every log message', () => {
		const logged = { logs: [{ level: 'info', message: 'task task_9 created' }] };
		expect(broken('videoSubmit', outcome(logged), state([submit('task_9')]))).toEqual(['taskIds']);
		expect(broken('videoSubmit', outcome({ output: [{ json: { task_id: 'task_9' } }], logs: [{ level: 'info', message: 'created', meta: { taskId: 'task_9' } }] }), state([submit('task_9')]))).toEqual(['taskIds']);
		expect(broken('videoSubmit', outcome({ output: [{ json: { task_id: 'task_9' } }], ...logged }), state([submit('task_9')]))).toEqual([]);
	});

	it('finds a task id that is only part of a longer word or sentence: "." ends every sentence, "a" is in most words (was a false pass)', () => {
		const sentences = { output: [{ json: { error: 'The video task failed at the gateway.' } }], logs: [{ level: 'warn', message: 'Video task failed at the gateway.' }] };
		expect(broken('videoSubmit', outcome(sentences), state([submit('.')]))).toEqual(['taskIds']);
		expect(broken('videoSubmit', outcome(sentences), state([submit('a')]))).toEqual(['taskIds']);
		const named = (id: string) => ({ output: [{ json: { task_id: id, status: 'QUEUED' } }], logs: [{ level: 'info', message: `Video task "${id}" submitted.` }] });
		expect(broken('videoSubmit', outcome(named('.')), state([submit('.')]))).toEqual([]);
		expect(broken('videoSubmit', outcome(named('task_9')), state([submit('task_9')]))).toEqual([]);
		expect(broken('videoSubmit', outcome({ ...named('task_9'), logs: [{ level: 'info', message: 'Submitted task_9.' }] }), state([submit('task_9')]))).toEqual([]);
		expect(broken('videoSubmit', outcome({ ...named('task_9'), logs: [{ level: 'info', message: 'Submitted task_90' }] }), state([submit('task_9')]))).toEqual(['taskIds']);
	});

	it('finds a status check of a foreign id or of a dot segment', () => {
		const shown = { output: [{ json: { task_id: 'task_9' } }], logs: [{ level: 'info', message: 'task_9' }] };
		expect(broken('videoGenerate', outcome(shown), state([submit('task_9'), request({ method: 'GET', path: '/v1/video/generations/task_other', at: 20 })]))).toEqual(['taskOfRecord']);
		expect(broken('videoStatus', outcome(), state([request({ method: 'GET', path: '/v1/video/generations/', at: 20 })]))).toEqual(['taskOfRecord']);
	});
});

describe('paid requests', () => {
	const post = (status: number | undefined) => request({ path: '/v1/images/generations', body: '{"prompt":"a"}', status, at: 10 });

	it('lets a POST be sent again after a 429 only', () => {
		expect(broken('image', outcome(), state([post(429), post(200)]))).toEqual([]);
		expect(broken('image', outcome(), state([post(502), post(200)]))).toEqual(['paidOnce']);
		expect(broken('image', outcome(), state([post(undefined), post(200)]))).toEqual(['paidOnce']);
	});
});

describe('setting headers and other hosts', () => {
	it('finds an answer whose setting word was rewritten', () => {
		const s = state([request({ text: 'The fern openai-routed:abcdef', textLeaked: false })]);
		s.plan = { ...s.plan, text: 'The fern openai-routed:abcdef' };
		expect(broken('chat', outcome({ text: 'The fern ***-routed:abcdef', output: [{ json: { text: 'The fern ***-routed:abcdef' } }] }), s)).toEqual(['settingText']);
		expect(broken('chat', outcome({ text: 'The fern openai-routed:abcdef', output: [{ json: { text: 'The fern openai-routed:abcdef' } }] }), s)).toEqual([]);
	});

	it('finds the key sent to a sibling host', () => {
		expect(broken('image', outcome(), state([request({ method: 'GET', path: '/files/x.png', origin: 'sibling', host: '127.0.0.2:9', headers: { authorization: `Bearer ${KEY}` }, at: 10 })]))).toEqual(['otherHost']);
	});
});

describe('malformedToolCall', () => {
	const garbled = request({ malformedToolCall: 'Calculator' });
	it('finds a garbled tool call that ended as a success, or in an error that does not name the tool', () => {
		expect(broken('modelGenerate', outcome({ text: '' }), state([garbled]))).toEqual(['malformedToolCall']);
		expect(broken('modelStream', outcome({ error: new Error('The chat model request failed') }), state([garbled]))).toEqual(['malformedToolCall']);
		expect(broken('modelStream', outcome({ error: new Error('the model called the tool Calculator with arguments that are not JSON') }), state([garbled]))).toEqual([]);
	});

	it('lets a run pass whose garbled answer was cut before its end', () => {
		expect(broken('modelGenerate', outcome({ text: '' }), state([{ ...garbled, complete: false, closedAt: 90 }]))).toEqual([]);
	});
});

describe('leftOpen', () => {
	it('finds an unfinished answer whose connection neither end closed, and lets closed or whole ones pass', () => {
		expect(broken('chat', outcome(), state([request({ complete: false })]))).toEqual(['leftOpen']);
		expect(broken('chat', outcome(), state([request({ complete: false, closedAt: 120 })]))).toEqual([]);
		expect(broken('chat', outcome(), state([request({ complete: true })]))).toEqual([]);
		// A request that came after the run ended is lateRequest's, found with the gateway's late list.
		expect(broken('chat', outcome(), state([request({ complete: false, answerKind: 'late' })]))).toEqual([]);
	});
});

describe('resultLink', () => {
	it('finds a result_url that is a sentence or a relative path, and lets a whole link pass', () => {
		expect(broken('videoStatus', outcome({ output: [{ json: { task_id: 'task_1', status: 'FAILURE', result_url: 'content policy, routed by openai' } }] }), state([]))).toEqual(['resultLink']);
		expect(broken('videoStatus', outcome({ output: [{ json: { task_id: 'task_1', status: 'SUCCESS', result_url: '/r1/files/video.mp4' } }] }), state([]))).toEqual(['resultLink']);
		expect(broken('videoStatus', outcome({ output: [{ json: { task_id: 'task_1', status: 'SUCCESS', result_url: 'http://127.0.0.1:9/r1/files/video.mp4' } }] }), state([]))).toEqual([]);
	});
});

describe('balance', () => {
	const good = { available: 12.34, used: 0.66, granted: 13, unit: 'USD', unlimited: false, expiresAt: null, source: '/api/usage/token/' };
	it.each([
		['an amount that is text', { ...good, available: '12.34' }],
		['an amount that is not finite', { ...good, used: Number.NaN }],
		['an unnamed unit', { ...good, unit: 'CNY' }],
		['an expiry that is no date', { ...good, expiresAt: 'never' }],
		['an error item without words', { error: '' }],
	])('finds %s', (_name, json) => {
		expect(broken('account', outcome({ output: [{ json: json as never }] }), state([]))).toEqual(['balance']);
	});

	describe('the balance the answers mean', () => {
		const plan = { route: 'dashboard', rate: true, display: 'TOKENS', granted: 200_000_000, usedShare: 0.5, unlimited: false, expiresAt: -1, amountForm: 'number' } as const;
		const right = { available: 200, used: 200, granted: 400, unit: 'USD', unlimited: false, expiresAt: null, source: '/v1/dashboard/billing/subscription' };
		const brokenWith = (json: IDataObject, requests: LoggedRequest[] = [], balance: typeof plan | { [K in keyof typeof plan]: unknown } = plan) =>
			[...new Set(checkRun(scenario('account', { balance: balance as typeof plan, items: 2 }), outcome({ output: [{ json }, { json: { ...json } }] }), state(requests)).map((v) => v.invariant))];
		const read = (path: string) => request({ method: 'GET', path });

		it.each([
			['a large limited key read as unlimited (a site showing tokens)', { ...right, unlimited: true }],
			['raw units where /api/status gives the rate', { ...right, unit: 'quota', available: 100_000_000, used: 100_000_000, granted: 200_000_000 }],
			['an amount off by more than the rounding', { ...right, available: 200.01 }],
			['another expiry', { ...right, expiresAt: '2026-01-01T00:00:00.000Z' }],
		])('finds %s, and lets the right balance pass', (_name, json) => {
			expect(brokenWith(json)).toEqual(['balance']);
			expect(brokenWith(right)).toEqual([]);
			expect(brokenWith({ ...right, available: 200.0000004 })).toEqual([]);
		});

		it('a fault on /api/status (a page, text) may leave the gateway\'s rate unsaid: the balance without it passes too', () => {
			const withoutRate = { ...right, available: 100_000_000, used: 100_000_000, granted: 200_000_000 };
			expect(brokenWith(withoutRate)).toEqual(['balance']);
			expect(brokenWith(withoutRate, [{ ...read('/api/status'), answerKind: 'error200' }])).toEqual([]);
		});

		it('finds items with different balances, and a balance path read twice without a fault', () => {
			const outcomeOf = (second: IDataObject) => outcome({ output: [{ json: right }, { json: second }] });
			expect(checkRun(scenario('account', { balance: plan, items: 2 }), outcomeOf({ ...right, source: '/api/usage/token/' }), state([])).map((v) => v.invariant)).toContain('balance');
			expect(brokenWith(right, [read('/api/status'), read('/api/status')])).toEqual(['balance']);
			expect(brokenWith(right, [read('/api/usage/token/'), read('/v1/dashboard/billing/subscription'), read('/v1/dashboard/billing/usage'), read('/api/status')])).toEqual([]);
		});

		it('a new-api key in raw units without a rate; amounts not checked where they mean nothing (text, the unlimited mark)', () => {
			const raw = { ...plan, route: 'newapi', rate: false, granted: 10, usedShare: 1.2 };
			expect(brokenWith({ ...right, available: -2, used: 12, granted: 10, unit: 'quota', source: '/api/usage/token/' }, [], raw)).toEqual([]);
			expect(brokenWith({ ...right, available: 5, used: 0, granted: 5, unit: 'USD', unlimited: true }, [], { ...plan, unlimited: true })).toEqual([]);
		});
	});

	it('finds an error that does not name both paths where the gateway serves no balance route, and lets the right one pass', () => {
		expect(broken('account', outcome({ error: new Error('Reading the balance failed: the gateway refused the request') }), state([]))).toEqual(['balance']);
		const named = "Reading the key's balance failed: the gateway answers neither GET /api/usage/token/ (new-api) nor GET /v1/dashboard/billing/subscription (OpenAI-style, one-api)";
		expect(broken('account', outcome({ error: new Error(named) }), state([]))).toEqual([]);
		expect(broken('account', outcome({ output: [{ json: good }] }), state([]))).toEqual(['balance']);
	});
});

describe('idle (issue 28)', () => {
	const streamed = scenario('chatStream', { deadlineSeconds: 3, idleSeconds: 1 });
	const brokenIdle = (s: typeof streamed, o: Outcome, r: RunState) => [...new Set(checkRun(s, o, r).map((v) => v.invariant).filter((name) => name !== 'works'))];
	const silent = (plannedMs: number, clientLeftAt?: number, pings = false) => request({ silences: [{ startedAt: 10, plannedMs, pings, clientLeftAt }] });
	const idleWords = 'The chat request failed: the gateway sent nothing for 1 s after 12 characters of the answer (3 events), the limit set by Idle Timeout (Seconds)';

	it('finds a silence sat through far past the idle limit, and lets one ended in time pass', () => {
		expect(brokenIdle(streamed, outcome({ settledAt: 2900 }), state([silent(4000, 3500)], 4000))).toEqual(['idle']);
		expect(brokenIdle(streamed, outcome({ error: new Error(idleWords), settledAt: 1200 }), state([silent(4000, 1100)], 1300))).toEqual([]);
		// With keep-alives the silence is no silence: Timeout ends it.
		expect(brokenIdle(streamed, outcome({ settledAt: 2900 }), state([silent(4000, 3000, true)], 4000))).toEqual([]);
	});

	it('finds idle words where no silence came near the limit, where no limit applies, or with the wrong seconds', () => {
		expect(brokenIdle(streamed, outcome({ error: new Error(idleWords) }), state([silent(150, 160)]))).toEqual(['idle']);
		expect(brokenIdle(scenario('chat', { deadlineSeconds: 3, idleSeconds: 1 }), outcome({ error: new Error(idleWords) }), state([silent(4000, 1100)]))).toEqual(['idle']);
		expect(brokenIdle(streamed, outcome({ error: new Error(idleWords.replace('for 1 s', 'for 2 s')) }), state([silent(4000, 1100)]))).toEqual(['idle']);
		expect(brokenIdle(streamed, outcome({ error: new Error('The chat request failed: the gateway sent nothing for 1 s') }), state([silent(4000, 1100)]))).toEqual(['idle']);
	});

	it('finds a request given up on after a silence that was sent again', () => {
		const first = request({ body: '{"a":1}', at: 10, silences: [{ startedAt: 20, plannedMs: 4000, pings: false, clientLeftAt: 1100 }] });
		expect(brokenIdle(streamed, outcome({ error: new Error(idleWords), settledAt: 1200 }), state([first, request({ body: '{"a":1}', at: 1150 })], 1300))).toEqual(['idle']);
	});
});
