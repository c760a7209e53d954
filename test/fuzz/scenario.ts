/**
 * What one generated run is: which node and operation, its input and deadline, the credential's
 * key and headers, and the gateway's misbehaviour (a list of planned answers), all drawn by
 * fast-check so that a failure shrinks to the smallest plan that still breaks a promise.
 */
import fc from 'fast-check';

import type { Answer, BalancePlan, EarlyMode, Leak, PendingState, RunPlan, Secrets, SilencePlan, ToolArgsForm, ToolIndexForm } from './gateway';
import { HEADER_VALUE_SLOT } from './gateway';

export const NODE_KINDS = [
	'chat',
	'chatStream',
	'messages',
	'messagesStream',
	'modelGenerate',
	'modelStream',
	'image',
	'imageEdit',
	'videoGenerate',
	'videoSubmit',
	'videoStatus',
	'videoDownload',
	'plant',
	'account',
] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

/** Nodes whose only limit is the transport's default (minutes): their waits are drawn short. */
export const LONG_LIMIT_KINDS: NodeKind[] = ['image', 'imageEdit', 'videoSubmit', 'videoStatus', 'videoDownload', 'plant', 'account'];

export interface Scenario {
	node: NodeKind;
	secrets: Secrets;
	/** Timeout (Seconds) of the chat nodes and the model; Max Wait of Generate is at least 5. */
	deadlineSeconds: number;
	/** Idle Timeout (Seconds) of the chat nodes and the model (issue 28); unset: its default, 60, beyond every Timeout here. */
	idleSeconds?: number;
	items: number;
	continueOnFail: boolean;
	/** getStatus/download input, and Resume Task ID of generate when `resume` is set. */
	taskIdInput: string;
	resume: boolean;
	imageFormat: 'url' | 'b64_json';
	plan: RunPlan;
	/**
	 * A file n8n keeps outside the item (a video's first frame, a chat attachment), streamed into the
	 * request; the binary store may stall on its open or its first bytes (where the item's limit is short).
	 */
	store?: { frame: boolean; stall: 'none' | 'open' | 'firstBytes'; large?: boolean; slowMs?: number };
	/** An image edit (since issue 28): the stored file as one image or as two (two fields), with it as the mask too or not. */
	edit?: { images: 1 | 2; mask: boolean };
}

/** Nodes that send a file from the item: a first frame, an attachment, the images of an edit. */
export const FRAME_KINDS: NodeKind[] = ['videoSubmit', 'videoGenerate', 'chat', 'chatStream', 'messages', 'messagesStream', 'imageEdit'];
/** Nodes whose item limit is long (Submit's 120 s, an edit's 300 s): a store that stalls would hold the run for it. */
const NO_STALL_KINDS: NodeKind[] = ['videoSubmit', 'imageEdit'];

/**
 * The run's file as its node has it (the node is set last, per test): only nodes that send files
 * have one (an edit always: it edits it), a stall only where the item's own limit is short; a slow
 * store (each read of the 1 MB file late by `slowMs`) only for the edit, whose limit it fits.
 */
export function storeOf(scenario: Scenario): { frame: boolean; stall: 'none' | 'open' | 'firstBytes'; large: boolean; slowMs: number } {
	const frame = scenario.node === 'imageEdit' || (FRAME_KINDS.includes(scenario.node) && scenario.store?.frame === true);
	const large = frame && scenario.store?.large === true;
	return {
		frame,
		stall: frame && !NO_STALL_KINDS.includes(scenario.node) ? (scenario.store?.stall ?? 'none') : 'none',
		large,
		slowMs: scenario.node === 'imageEdit' && !large ? (scenario.store?.slowMs ?? 0) : 0,
	};
}

const SECRET_CHARS = [...'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789', '/', '+', '=', '_', '-'];
const HEADER_CHARS = [...'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789', '/', '+', '='];
const WORDS = ['The', 'fern', 'grows', 'in', 'shade', 'and', 'likes', 'water', 'every', 'day', 'ok'];

const chars = (alphabet: string[], min: number, max: number) => fc.array(fc.constantFrom(...alphabet), { minLength: min, maxLength: max }).map((a) => a.join(''));

/**
 * A key as gateways issue them: random characters. Drawn from a seed (not character by character),
 * so that shrinking a failing run gives another random key, never `sk-AAAA…`, which no gateway
 * issues and whose runs of one kind of character the masking deliberately leaves (docs/errors.md).
 */
function randomKey(seed: number, length: number): string {
	let state = seed >>> 0 || 1;
	let key = '';
	for (let i = 0; i < length; i++) {
		// xorshift32: plenty for spreading a seed over the alphabet.
		state ^= state << 13;
		state ^= state >>> 17;
		state ^= state << 5;
		key += SECRET_CHARS[(state >>> 0) % SECRET_CHARS.length];
	}
	return `sk-${key}`;
}

export const secretsArb: fc.Arbitrary<Secrets> = fc.record({
	key: fc.tuple(fc.integer({ min: 1, max: 0x7fffffff }), fc.integer({ min: 20, max: 48 })).map(([seed, length]) => randomKey(seed, length)),
	headerName: fc.constantFrom('x-api-token', 'x-auth-secret', 'x-session-key', 'x-signature'),
	headerValue: chars(HEADER_CHARS, 5, 24),
});

const leakArb: fc.Arbitrary<Leak> = fc.record({
	slot: fc.nat(5),
	form: fc.constantFrom('whole', 'secretPart', 'cutStart', 'cutEnd', 'url', 'base64', 'bearer', 'header', 'headerUrl', 'headerBase64', 'headerCut', 'headerEncoded', 'headerEncoded', 'keyEncoded'),
	cut: fc.integer({ min: 1, max: 43 }),
	encoding: fc.nat(20),
	pad: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 60 })),
});

/** Retry-After as gateways write it: absent, 0, small, huge, negative, an HTTP date, nonsense. */
const retryAfterArb = fc.oneof(
	fc.constant(null),
	fc.constantFrom('0', '1', '2', '-5', '3600', '99999999', 'soon', '1.5'),
	fc.integer({ min: -86_400, max: 86_400 }).map((seconds) => new Date(Date.now() + seconds * 1000).toUTCString()),
);

const answerArb: fc.Arbitrary<Answer> = fc.record({
	kind: fc.constantFrom('clean', 'error', 'errorCut', 'error200', 'rateLimit', 'rateLimit', 'reset', 'redirect', 'wrongType', 'stall', 'clean'),
	status: fc.constantFrom(400, 401, 403, 404, 413, 422, 500, 502, 503, 504),
	shape: fc.nat(20),
	retryAfter: retryAfterArb,
	resetAt: fc.double({ min: 0, max: 1, noNaN: true }),
	headDelayMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 300 })),
	dripChunk: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 64 })),
	dripIntervalMs: fc.integer({ min: 0, max: 30 }),
	keepAliveMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 600 })),
	stallMs: fc.integer({ min: 0, max: 4500 }),
	redirectTo: fc.constantFrom<'ip2' | 'hostName' | 'self'>('ip2', 'hostName', 'self'),
	contentType: fc.constantFrom(null, 'text/plain', 'text/html', 'application/octet-stream', 'application/json; charset=utf-16'),
	leak: fc.option(leakArb, { freq: 2 }),
});

/** Task ids that merely look like a key (issue 26): `task-sk-9f8e7d6c5b`, or a key-like run; they must come out whole. */
export const keyLikeIdArb = fc.oneof(
	fc.integer({ min: 0x10000000, max: 0x7fffffff }).map((n) => `task-sk-${n.toString(16)}`),
	chars(HEADER_CHARS.filter((c) => /[A-Za-z0-9]/.test(c)), 10, 20).map((run) => `sk-${run}`),
	chars(HEADER_CHARS.filter((c) => /[A-Za-z0-9]/.test(c)), 10, 20).map((run) => `task_sk-proj-${run}`),
);

/** Task ids a gateway answers a submit with: ordinary, holding a setting word, `sk-` or the secret header value glued to its words, odd but one segment, or malformed. */
const submitIdArb = fc.oneof(
	{ weight: 4, arbitrary: fc.integer({ min: 1, max: 99_999 }).map((n) => `task_${n}`) },
	{ weight: 2, arbitrary: keyLikeIdArb },
	{ weight: 2, arbitrary: fc.integer({ min: 1, max: 99 }).map((n) => `task_openai_${n}`) },
	{ weight: 1, arbitrary: fc.tuple(fc.constantFrom(`task_${HEADER_VALUE_SLOT}_#`, `${HEADER_VALUE_SLOT}-#`, `cgt-#_${HEADER_VALUE_SLOT}`), fc.integer({ min: 1, max: 99 })).map(([form, n]) => form.replace('#', String(n))) },
	{ weight: 1, arbitrary: fc.constantFrom('task.v2', 'cgt-2026_abc', 'T~1', '.', '..', 'a/b', '', 'x'.repeat(5000), 'task with space', 'task%2F..') },
);

/** Task ids a user types or maps into Get Status, Download or Resume Task ID. */
const taskIdInputArb = fc.oneof(
	{ weight: 4, arbitrary: fc.integer({ min: 1, max: 99_999 }).map((n) => `task_${n}`) },
	{ weight: 1, arbitrary: keyLikeIdArb },
	{ weight: 1, arbitrary: fc.constantFrom('task_openai_7', '.', '..', '../..', 'a/b', '%2e%2e', 'x'.repeat(20_000), ' task_5 ', '?x=1', '#frag') },
);

/** The balance a gateway reports (Gateway Account): which interface it serves, its money rule, and amounts as written, well or not. */
const balanceArb: fc.Arbitrary<BalancePlan> = fc.record({
	route: fc.constantFrom<BalancePlan['route']>('newapi', 'newapi', 'dashboard', 'none'),
	rate: fc.boolean(),
	display: fc.constantFrom<BalancePlan['display']>('USD', 'CNY', 'TOKENS'),
	granted: fc.oneof(fc.integer({ min: 0, max: 1e10 }), fc.double({ min: 0, max: 1e6, noNaN: true })),
	// Above 1: new-api charges after the answer, so a key can end below zero (used > granted).
	usedShare: fc.double({ min: 0, max: 1.25, noNaN: true }),
	unlimited: fc.boolean(),
	expiresAt: fc.constantFrom(-1, 0, 1_767_225_600, 4_102_444_800),
	amountForm: fc.constantFrom<BalancePlan['amountForm']>('number', 'number', 'number', 'string', 'missing', 'null'),
});

/**
 * Issue 28: streamed answers that go silent after some events, for up to 4 s, with keep-alives or
 * without; a keep-alive is a comment or a lone line end, every 100 or 400 ms (the Idle Timeout review).
 */
const silenceArb: fc.Arbitrary<SilencePlan> = fc.record({
	afterEvents: fc.nat(4),
	ms: fc.oneof({ weight: 1, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: fc.integer({ min: 100, max: 4000 }) }),
	pings: fc.boolean(),
	keepAlive: fc.constantFrom<NonNullable<SilencePlan['keepAlive']>>('comment', 'newline'),
	pingEveryMs: fc.constantFrom(100, 400),
});

const earlyArb = fc.constantFrom<EarlyMode>('none', 'keepReading', 'stopReading', 'close', 'nodeServer');

export const planArb: fc.Arbitrary<RunPlan> = fc.record({
	balance: balanceArb,
	silence: silenceArb,
	answers: fc.array(answerArb, { maxLength: 4 }),
	early: fc.array(earlyArb, { maxLength: 3 }),
	text: fc.tuple(fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 8 }), fc.boolean(), fc.stringMatching(/^[a-z]{6}$/)).map(([words, routed, tag]) => `${words.join(' ')}${routed ? ` openai-routed:${tag}` : ''}`),
	toolCall: fc.boolean(),
	toolArgs: fc.constantFrom<ToolArgsForm>('object', 'object', 'object', 'cut', 'text', 'list', 'string', 'null'),
	toolIndex: fc.constantFrom<ToolIndexForm>('given', 'given', 'zero', 'none'),
	video: fc.record({
		submitIds: fc.array(submitIdArb, { minLength: 1, maxLength: 2 }),
		pendingPolls: fc.integer({ min: 0, max: 1 }),
		terminal: fc.constantFrom('SUCCESS', 'FAILURE'),
		foreignId: fc.boolean(),
		resultOnSibling: fc.boolean(),
		relativeResult: fc.boolean(),
		reasonInResultUrl: fc.boolean(),
		firstPending: fc.constantFrom<PendingState>('QUEUED', 'NOT_START', 'SUBMITTED'),
	}),
});

/**
 * Long-limit nodes may rightly wait out their own backoff and a Retry-After they can afford:
 * their 429s carry either a short Retry-After (1 or 2 s, to be honoured) or one beyond any limit
 * (to fail at once), never an absent one, and their stalls stay short.
 */
function boundForLongLimit(answer: Answer): Answer {
	const affordable = answer.retryAfter === '1' || answer.retryAfter === '2' || answer.retryAfter === '3600' || answer.retryAfter === '99999999';
	return { ...answer, retryAfter: affordable ? answer.retryAfter : '99999999', stallMs: Math.min(answer.stallMs, 800) };
}

/** A scenario drawn for any node, its plan not yet bounded: a run gets its node through forNode. */
export const drawnScenarioArb: fc.Arbitrary<Scenario> = fc.record({
	node: fc.constantFrom(...NODE_KINDS),
	secrets: secretsArb,
	deadlineSeconds: fc.integer({ min: 1, max: 3 }),
	idleSeconds: fc.option(fc.integer({ min: 1, max: 2 }), { nil: undefined }),
	items: fc.oneof({ weight: 4, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.constant(2) }),
	continueOnFail: fc.boolean(),
	taskIdInput: taskIdInputArb,
	resume: fc.boolean(),
	imageFormat: fc.constantFrom('url', 'b64_json'),
	plan: planArb,
	store: fc.record({
		frame: fc.boolean(),
		stall: fc.constantFrom<'none' | 'open' | 'firstBytes'>('none', 'none', 'open', 'firstBytes'),
		large: fc.constantFrom(false, false, false, true),
		slowMs: fc.constantFrom(0, 0, 3, 20),
	}),
	edit: fc.record({ images: fc.constantFrom<1 | 2>(1, 2), mask: fc.boolean() }),
});

/** A scenario as its drawn node runs it. */
export const scenarioArb: fc.Arbitrary<Scenario> = drawnScenarioArb.map((scenario) => forNode(scenario, scenario.node));

/**
 * The scenario as `node` runs it: the plan bounded for that node (boundForLongLimit). Every run
 * gets its node here, so the bound follows the node that runs, not the one first drawn (the
 * property test draws for any node, then runs each of its own).
 */
export function forNode(scenario: Scenario, node: NodeKind): Scenario {
	const plan = LONG_LIMIT_KINDS.includes(node) ? { ...scenario.plan, answers: scenario.plan.answers.map(boundForLongLimit) } : scenario.plan;
	return { ...scenario, node, plan };
}

/**
 * The answers that decide what an attempt with a streamed file was (issue 26): a redirect, to the
 * same origin as often as elsewhere, a 5xx or a 4xx, a 429, a clean one.
 */
const uploadAnswerArb: fc.Arbitrary<Answer> = fc
	.tuple(
		answerArb,
		fc.constantFrom<Answer['kind']>('redirect', 'redirect', 'error', 'error', 'rateLimit', 'clean'),
		fc.constantFrom(500, 502, 503, 504, 400, 413),
		fc.constantFrom<Answer['redirectTo']>('self', 'self', 'ip2', 'hostName'),
	)
	.map(([answer, kind, status, redirectTo]) => ({ ...answer, kind, status, redirectTo }));

/**
 * Streamed uploads drawn on purpose: a node that sends a file from n8n's store (a paid one twice as
 * often; the store never stalls, so that every attempt is answered as planned), each attempt answered by one of the answers above, the first most often before its body
 * was read. Drawn among all scenarios, a sequence such as "a 307 before the body was read, then a
 * 502 with the whole body" comes once in tens of thousands of runs; here about once in 150.
 */
export const uploadScenarioArb: fc.Arbitrary<Scenario> = fc
	.record({
		scenario: drawnScenarioArb,
		node: fc.oneof({ weight: 2, arbitrary: fc.constantFrom<NodeKind>('imageEdit', 'videoSubmit', 'videoGenerate') }, { weight: 1, arbitrary: fc.constantFrom(...FRAME_KINDS) }),
		answers: fc.array(uploadAnswerArb, { minLength: 1, maxLength: 4 }),
		firstEarly: fc.constantFrom<EarlyMode>('keepReading', 'stopReading', 'keepReading', 'stopReading', 'close', 'nodeServer', 'none'),
		early: fc.array(earlyArb, { maxLength: 2 }),
	})
	.map(({ scenario, node, answers, firstEarly, early }) =>
		forNode({ ...scenario, store: { ...scenario.store, stall: 'none', frame: true }, plan: { ...scenario.plan, answers, early: [firstEarly, ...early] } }, node),
	);

/** The run's deadline in ms: the node's Timeout or Max Wait; for long-limit nodes, what the plan makes a correct node wait. */
/**
 * Generate's Max Wait: one 5 s poll interval per status answer the plan holds back, plus the one
 * that ends it (the node checks each task every interval from its own submit, the last check at
 * Max Wait), so a clean run can finish within it.
 */
export function generateMaxWaitSeconds(scenario: Scenario): number {
	return 5 * (1 + scenario.plan.video.pendingPolls);
}

export function deadlineMs(scenario: Scenario): number {
	if (scenario.node === 'videoGenerate') return generateMaxWaitSeconds(scenario) * 1000;
	if (!LONG_LIMIT_KINDS.includes(scenario.node)) return scenario.deadlineSeconds * 1000;
	let budget = 0;
	for (const answer of scenario.plan.answers) {
		budget += answer.headDelayMs + 400 + answer.keepAliveMs + (answer.kind === 'stall' ? answer.stallMs : 0);
		if (answer.kind === 'rateLimit') budget += answer.retryAfter === '1' ? 1000 : answer.retryAfter === '2' ? 2000 : 0;
		// A failure a node may rightly retry (a reset GET, a 5xx status check) after its own short backoff.
		if (answer.kind !== 'clean' && answer.kind !== 'wrongType') budget += 2500;
	}
	return (budget + sendingMs(scenario)) * scenario.items;
}

/** A large file (8 MB) sent, by a loaded machine (eight shards on two cores took about 1.1 s each). */
const LARGE_FILE_MS = 1500;
/** Reads of the 1 MB file, 64 KB each. */
const READS_PER_FILE = 16;

/** The time an item of a long-limit node rightly takes to send its files: each large one, or each read the slow store delays. */
function sendingMs(scenario: Scenario): number {
	const store = storeOf(scenario);
	if (!store.frame) return 0;
	const files = scenario.node === 'imageEdit' ? (scenario.edit?.images ?? 1) + (scenario.edit?.mask ? 1 : 0) : 1;
	return files * (store.large ? LARGE_FILE_MS : READS_PER_FILE * store.slowMs);
}

/** The kinds that read a streamed answer, where Idle Timeout applies. */
export const STREAM_KINDS: NodeKind[] = ['chatStream', 'messagesStream', 'modelStream'];

/** The run's idle limit in ms where it applies (a streamed answer, and shorter than Timeout: else Timeout comes first). */
export function idleMs(scenario: Scenario): number | undefined {
	if (!STREAM_KINDS.includes(scenario.node) || scenario.idleSeconds === undefined) return undefined;
	return scenario.idleSeconds < scenario.deadlineSeconds ? scenario.idleSeconds * 1000 : undefined;
}
