/**
 * The promises every generated run must keep, checked on what the run left behind (Outcome) and
 * on what the gateway saw (the run's request log). Each check returns violations in words, so a
 * failing property says which promise broke and where.
 */
import type { LoggedRequest, RunState, Secrets, Silence } from './gateway';
import { BALANCE_PATHS, expectedBalance } from './gateway';
import type { ExpectedBalance } from './gateway';
import { GRACE_MS, unfinishedOpen } from './drive';
import type { Outcome } from './drive';
import type { Scenario } from './scenario';
import { deadlineMs, idleMs, storeOf } from './scenario';
import { secretEncodings } from '../helpers/secretEncodings';

export type InvariantName = 'works' | 'secrets' | 'deadline' | 'lateRequest' | 'taskIds' | 'taskOfRecord' | 'paidOnce' | 'settingText' | 'otherHost' | 'malformedToolCall' | 'resultLink' | 'balance' | 'idle' | 'leftOpen';

export interface Violation {
	invariant: InvariantName;
	detail: string;
}

/** JSON of anything, cycles and functions skipped, Buffers left out (binary data is not shown text). */
export function visibleText(value: unknown): string {
	const seen = new WeakSet<object>();
	return (
		JSON.stringify(value, (key, v: unknown) => {
			if (key === 'data' && typeof v === 'string' && v.length > 200) return '[binary]';
			if (typeof v === 'function' || typeof v === 'bigint') return undefined;
			if (v && typeof v === 'object') {
				if (Buffer.isBuffer(v) || v instanceof Uint8Array) return '[bytes]';
				if (seen.has(v)) return undefined;
				seen.add(v);
			}
			return v;
		}) ?? ''
	);
}

/** What n8n shows or stores of an error: its message, description, context and data. */
export function errorFields(error: unknown): Record<string, unknown> {
	if (!error || typeof error !== 'object') return { value: error };
	const e = error as Record<string, unknown>;
	return { message: e.message, description: e.description, context: e.context, data: e.data, messages: e.messages };
}

/** Everything that leaves a run, by where it left. */
export function exits(outcome: Outcome): Record<string, string> {
	return {
		output: visibleText(outcome.output.map((item) => ({ json: item.json, binary: item.binary, error: item.error ? errorFields(item.error) : undefined }))),
		error: visibleText(outcome.error === undefined ? null : errorFields(outcome.error)),
		logs: visibleText(outcome.logs),
		customData: visibleText(outcome.customData),
		chunks: visibleText(outcome.chunks),
		model: visibleText(outcome.modelResults),
	};
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The forms of the secrets no exit may hold, with a name for each. */
export function secretForms(secrets: Secrets): Array<{ name: string; test: (text: string) => boolean }> {
	const { key, headerValue } = secrets;
	const secretPart = key.slice(3);
	const forms: Array<{ name: string; test: (text: string) => boolean }> = [];
	const contains = (name: string, needle: string) => forms.push({ name, test: (text) => text.includes(needle) || text.includes(JSON.stringify(needle).slice(1, -1)) });
	contains('the key', key);
	contains('the key URL-encoded', encodeURIComponent(key));
	contains('the key in base64', Buffer.from(key).toString('base64').replace(/=+$/, ''));
	contains('the secret part in base64', Buffer.from(secretPart).toString('base64').replace(/=+$/, ''));
	// The key's base64 cut short (a quote cut inside it): a base64 run that decodes to 8 characters of it.
	const keyPieces = Array.from({ length: Math.max(0, key.length - 7) }, (_, i) => key.slice(i, i + 8));
	forms.push({
		name: 'a base64 run that decodes to 8 characters of the key',
		test: (text) =>
			(text.match(/[A-Za-z0-9+/]{12,}/g) ?? []).some((run) => {
				const decoded = Buffer.from(run.slice(0, run.length - (run.length % 4)), 'base64').toString('latin1');
				return keyPieces.some((piece) => decoded.includes(piece));
			}),
	});
	for (let i = 0; i + 8 <= secretPart.length; i++) {
		// Without case too: a node that upper-cases gateway text must not unmask the key.
		const piece = secretPart.slice(i, i + 8).toLowerCase();
		forms.push({ name: `8 characters of the secret part (${i}..${i + 8}), in any case`, test: (text) => text.toLowerCase().includes(piece) });
		contains(`8 URL-encoded characters of the secret part (${i}..${i + 8})`, encodeURIComponent(secretPart.slice(i, i + 8)));
	}
	// The header value as a word, in any case, not inside a longer word. `_` and `-` bound it here,
	// though the masker keeps a short value glued by them (secrets.ts): the gateway quotes it as a
	// word of its own, so only the node's reshaping can glue it. A task id of the run may hold it
	// (the gateway's own): checkSecrets leaves those out first.
	const token = new RegExp(`(?<![A-Za-z0-9])${escapeRegExp(headerValue)}(?![A-Za-z0-9])`, 'i');
	forms.push({ name: 'the secret header value', test: (text) => token.test(text) });
	if (encodeURIComponent(headerValue) !== headerValue) contains('the secret header value URL-encoded', encodeURIComponent(headerValue));
	// In base64 too, by the same rule: a short value's base64 only as a whole token (docs/errors.md).
	if (headerValue.length >= 6) {
		const base64 = Buffer.from(headerValue).toString('base64').replace(/=+$/, '');
		if (headerValue.length >= 12) contains('the secret header value in base64', base64);
		else {
			const base64Token = new RegExp(`(?<![A-Za-z0-9+/])${escapeRegExp(base64)}=*(?![A-Za-z0-9+/])`);
			forms.push({ name: 'the secret header value in base64', test: (text) => base64Token.test(text) });
		}
	}
	// Issue 26: every form a relay or a log writes (quote, quote_plus, twice, PHP's \/, JSON \u) of
	// a cut of the header value from its start and of the key's start or any run of its part after
	// sk-, 8 characters or more that mix kinds (encodings go character by character, so the
	// shortest such cut stands for every longer one).
	const mixed = (cut: string) => [/[a-z]/, /[A-Z]/, /[0-9]/].filter((kind) => kind.test(cut)).length >= 2;
	const cuts = new Set<string>();
	for (let length = 8; length <= headerValue.length; length++) if (mixed(headerValue.slice(0, length))) cuts.add(headerValue.slice(0, length));
	for (let length = 8; length <= key.length; length++) if (mixed(key.slice(0, length))) cuts.add(key.slice(0, length));
	for (let i = 0; i + 8 <= secretPart.length; i++) if (mixed(secretPart.slice(i, i + 8))) cuts.add(secretPart.slice(i, i + 8));
	for (const cut of cuts) {
		for (const [encoding, form] of Object.entries(secretEncodings(cut))) if (encoding !== 'plain') contains(`${JSON.stringify(cut)} (a cut of a secret) written by ${encoding}`, form);
		if (!cut.startsWith('sk-') && !secretPart.includes(cut)) contains(`the first ${cut.length} characters of the secret header value`, cut);
	}
	return forms;
}

/**
 * `text` without the run's task ids that hold the secret header value (a gateway may issue
 * `task_<value>_1`; the policy keeps an id whole), as written, JSON-escaped and URL-encoded.
 */
function withoutIdsHoldingTheValue(text: string, scenario: Scenario, state: RunState): string {
	const value = scenario.secrets.headerValue.toLowerCase();
	const ids = [...state.requests.map((r) => r.submittedId), scenario.taskIdInput.trim()].filter((id): id is string => id !== undefined && id.toLowerCase().includes(value));
	const forms = [...new Set(ids.flatMap((id) => [id, JSON.stringify(id).slice(1, -1), encodeURIComponent(id)]))].sort((a, b) => b.length - a.length);
	return forms.reduce((rest, form) => rest.split(form).join(' '), text);
}

function checkSecrets(scenario: Scenario, outcome: Outcome, state: RunState): Violation[] {
	const violations: Violation[] = [];
	const forms = secretForms(scenario.secrets);
	for (const [exit, shown] of Object.entries(exits(outcome))) {
		const text = withoutIdsHoldingTheValue(shown, scenario, state);
		const found = forms.find((form) => form.test(text));
		if (found) violations.push({ invariant: 'secrets', detail: `${found.name} left through ${exit}: ${excerpt(text, scenario.secrets)}` });
	}
	return violations;
}

/** A little of the text around the first secret-looking part, for the report. */
function excerpt(text: string, secrets: Secrets): string {
	const part = secrets.key.slice(3, 11);
	const at = Math.max(text.indexOf(part), text.indexOf(secrets.headerValue), 0);
	return JSON.stringify(text.slice(Math.max(0, at - 80), at + 80));
}

function checkDeadline(scenario: Scenario, outcome: Outcome): Violation[] {
	const limit = deadlineMs(scenario);
	const violations: Violation[] = [];
	if (scenario.node === 'modelGenerate' || scenario.node === 'modelStream') {
		outcome.callDurations.forEach((ms, i) => {
			if (ms > limit + GRACE_MS) violations.push({ invariant: 'deadline', detail: `model call ${i + 1} took ${ms} ms with Timeout ${limit} ms` });
		});
	} else {
		const took = outcome.settledAt - outcome.startedAt;
		if (took > limit + GRACE_MS || outcome.hung) violations.push({ invariant: 'deadline', detail: `the run took ${took} ms${outcome.hung ? ' (stopped by the harness)' : ''}, limit ${limit} ms + ${GRACE_MS} ms` });
	}
	if (outcome.neverSettled) violations.push({ invariant: 'deadline', detail: 'the run did not end even after a Stop' });
	return violations;
}

/** A request whose head arrives this soon after the run ended may have been sent before it ended. */
export const IN_FLIGHT_MS = 20;

function checkLate(state: RunState): Violation[] {
	const settled = state.settledAt ?? Infinity;
	return state.requests.filter((r) => r.at > settled + IN_FLIGHT_MS).map((r) => ({ invariant: 'lateRequest' as const, detail: `${r.method} ${r.path} arrived ${r.at - settled} ms after the run ended` }));
}

const isSubmit = (r: LoggedRequest) => r.method === 'POST' && r.path === '/v1/video/generations';

/** Every string (and object key) of a JSON text: a token's neighbours are the string's own characters, not JSON's escapes. */
function stringsOf(jsonText: string): string[] {
	const strings: string[] = [];
	const walk = (value: unknown): void => {
		if (typeof value === 'string') strings.push(value);
		else if (Array.isArray(value)) value.forEach(walk);
		else if (value && typeof value === 'object')
			for (const [key, entry] of Object.entries(value)) {
				strings.push(key);
				walk(entry);
			}
	};
	walk(JSON.parse(jsonText === '' ? 'null' : jsonText));
	return strings;
}

/** The characters task ids are made of: next to one of them, an id is only part of a longer word. */
const ID_CHAR = '[A-Za-z0-9_~%-]';

/**
 * Whether `id` stands in one of `texts` as a whole token: no id character (nor a `.`) right before
 * it, none right after it, and a `.` after it only where a sentence ends (not `..`, not `.v2`).
 * So `.` is not "shown" by a sentence's full stop, nor `a` by a word that holds the letter.
 */
export function showsTaskId(texts: string[], id: string): boolean {
	const token = new RegExp(`(?<!${ID_CHAR}|[.])${escapeRegExp(id)}(?!${ID_CHAR}|[.](?:${ID_CHAR}|[.]))`);
	return texts.some((text) => token.test(text));
}

function checkTaskIds(scenario: Scenario, outcome: Outcome, state: RunState): Violation[] {
	const { output, error } = exits(outcome);
	const shown = [...stringsOf(output), ...stringsOf(error)];
	const logMessages = outcome.logs.map((line) => line.message);
	const violations: Violation[] = [];
	for (const r of state.requests) {
		if (!isSubmit(r) || !r.complete || r.answerKind !== 'clean' || r.submittedId === undefined) continue;
		const id = r.submittedId;
		// A long id may be shortened in words; the invariant holds for ids a person can read.
		if (id.length === 0 || id.length > 200) continue;
		// Answered, then the connection closed mid-body: Node's client may drop the answer with it; then
		// the node cannot know the id, and must say the task may have been created (and not submit again).
		if (r.early === 'close' && !showsTaskId(shown, id)) {
			if (!shown.some((text) => /may have created (the|a) task/i.test(text))) violations.push({ invariant: 'taskIds', detail: `submitted task ${JSON.stringify(id)} (answered before the body's end, then closed) is not shown, nor said to be possibly created` });
			continue;
		}
		if (!showsTaskId(shown, id)) violations.push({ invariant: 'taskIds', detail: `submitted task ${JSON.stringify(id)} is in neither the output nor the error` });
		if (!showsTaskId(logMessages, id)) violations.push({ invariant: 'taskIds', detail: `submitted task ${JSON.stringify(id)} is in no log line's message` });
	}
	// A task id typed into Get Status that merely looks like a key comes back whole (issue 26).
	const typed = scenario.taskIdInput.trim();
	if (scenario.node === 'videoStatus' && KEY_LIKE_ID.test(typed) && outcome.output.some((item) => item.json.task_id !== undefined) && !showsTaskId(stringsOf(output), typed)) {
		violations.push({ invariant: 'taskIds', detail: `the task ${JSON.stringify(typed)} typed into Get Status is not shown whole: ${output.slice(0, 200)}` });
	}
	return violations;
}

const KEY_LIKE_ID = /^(task-sk-[0-9a-f]+|sk-[A-Za-z0-9]+|task_sk-proj-[A-Za-z0-9]+)$/;

/** Status checks and downloads go to the task of record only: never a foreign id, never a dot segment. */
function checkTaskOfRecord(scenario: Scenario, state: RunState): Violation[] {
	const known = new Set<string>();
	for (const r of state.requests) if (r.submittedId !== undefined) known.add(r.submittedId);
	if (scenario.node === 'videoStatus' || scenario.node === 'videoDownload' || (scenario.node === 'videoGenerate' && scenario.resume)) known.add(scenario.taskIdInput.trim());
	const violations: Violation[] = [];
	for (const r of state.requests) {
		if (r.method !== 'GET' || r.path.startsWith('/files/') || r.path === '/v1/models') continue;
		// A balance read is no status check.
		if (scenario.node === 'account' && BALANCE_PATHS.test(r.path)) continue;
		const match = /^\/v1\/video\/generations\/([^/?#]+)$/.exec(r.path);
		if (!match) {
			violations.push({ invariant: 'taskOfRecord', detail: `a status check went to ${JSON.stringify(r.path.slice(0, 80))}, not one task's path` });
			continue;
		}
		let id = match[1];
		try {
			id = decodeURIComponent(id);
		} catch {
			// left as sent
		}
		if (id === '.' || id === '..' || !known.has(id)) violations.push({ invariant: 'taskOfRecord', detail: `a status check asked for ${JSON.stringify(id.slice(0, 80))}, not a task of this run (${[...known].map((k) => JSON.stringify(k.slice(0, 40))).join(', ')})` });
	}
	return violations;
}

const PAID = ['/v1/images/generations', '/v1/images/edits', '/v1/video/generations', '/plants'];

/**
 * An attempt whose answer says the gateway did not act on it: a 429, a redirect, or an error status
 * the gateway sent before it had read the body whole (it refused a request it never had).
 */
const refusedUnacted = (r: LoggedRequest) => r.status !== undefined && (r.status === 429 || (r.status >= 300 && r.status < 400) || (r.early !== undefined && r.status >= 400));

function checkPaidOnce(state: RunState): Violation[] {
	const violations: Violation[] = [];
	const attempts = new Map<string, LoggedRequest[]>();
	for (const r of state.requests) {
		if (r.method !== 'POST' || !PAID.includes(r.path)) continue;
		// A body answered before its end is logged cut: its start (the item's own fields) names it.
		const key = `${r.path} ${r.body.slice(0, 1000)}`;
		const earlier = attempts.get(key) ?? [];
		const acted = earlier.filter((e) => !refusedUnacted(e));
		if (acted.length > 0) {
			const first = acted[0];
			violations.push({ invariant: 'paidOnce', detail: `${r.path} sent again after an attempt the gateway may have acted on (${first.answerKind}, status ${first.status ?? 'none, cut before it'})` });
		}
		attempts.set(key, [...earlier, r]);
	}
	return violations;
}

/** The setting header's value ("openai") is no secret: sentences holding it reach the exits unchanged. */
function checkSettingText(outcome: Outcome, state: RunState): Violation[] {
	const all = Object.values(exits(outcome)).join('\n');
	const violations: Violation[] = [];
	const routed = /openai-routed:([a-z]{6})/.exec(state.plan.text);
	const sentences = [...state.settingTexts, ...(routed ? [routed[0]] : [])];
	for (const sentence of new Set(sentences)) {
		// Only sentences the run shows at all: the word before the setting value is the witness.
		const witness = sentence.replace(/openai.*$/, '');
		const tail = sentence.replace(/^.*openai/, '');
		const shownWitness = witness.trim() !== '' ? all.includes(witness) : all.includes(tail);
		// A gateway's words longer than an error shows are cut, with "…": a sentence cut there (past its witness) is shortened, not changed.
		const cutAtQuoteEnd = witness.trim() !== '' && Array.from({ length: sentence.length - witness.length }, (_, i) => `${sentence.slice(0, witness.length + i)}…`).some((cut) => all.includes(cut));
		if (shownWitness && !all.includes(sentence) && !cutAtQuoteEnd) {
			const at = all.indexOf(witness.trim() !== '' ? witness : tail);
			violations.push({ invariant: 'settingText', detail: `${JSON.stringify(sentence)} was changed: ${JSON.stringify(all.slice(Math.max(0, at - 20), at + 60))}` });
		}
	}
	// Whole chat answers the gateway sent without a quote reach the output as sent.
	const textAnswers = state.requests.filter((r) => r.text !== undefined && r.complete && r.answerKind === 'clean');
	const last = textAnswers[textAnswers.length - 1];
	if (outcome.text !== undefined && last && !last.textLeaked && outcome.error === undefined && textAnswers.length === 1 && outcome.text !== last.text) {
		violations.push({ invariant: 'settingText', detail: `the answer ${JSON.stringify(last.text)} reached the output as ${JSON.stringify(outcome.text)}` });
	}
	return violations;
}

/**
 * A tool call whose arguments cannot be run, answered whole, ends the model's run with an error,
 * never with a success (an empty answer); the error names the tool, unless the run had already
 * been given up on (the plan paused the gateway for more than half the limit).
 */
function checkMalformedToolCall(scenario: Scenario, outcome: Outcome, state: RunState): Violation[] {
	const malformed = state.requests.find((r) => r.malformedToolCall !== undefined && r.complete && r.answerKind === 'clean');
	if (!malformed) return [];
	if (outcome.error === undefined) return [{ invariant: 'malformedToolCall', detail: `a call of ${malformed.malformedToolCall} with arguments that are no JSON object ended as a success (answer ${JSON.stringify(outcome.text ?? '')})` }];
	const pausedMs = state.requests.reduce((sum, request) => sum + request.pausedMs, 0);
	const shown = visibleText(errorFields(outcome.error));
	if (pausedMs * 2 <= deadlineMs(scenario) && !shown.includes(`tool ${malformed.malformedToolCall}`)) {
		return [{ invariant: 'malformedToolCall', detail: `the error does not name the tool ${malformed.malformedToolCall}: ${shown.slice(0, 300)}` }];
	}
	return [];
}

/** A result_url given to the user is a whole http(s) link, never a sentence or a relative path. */
function checkResultLink(outcome: Outcome): Violation[] {
	return outcome.output
		.map((item) => item.json.result_url)
		.filter((link) => link !== undefined && !(typeof link === 'string' && /^https?:\/\/[^\s/]+\/\S*$/.test(link)))
		.map((link) => ({ invariant: 'resultLink' as const, detail: `result_url ${JSON.stringify(link)} is no whole http(s) link` }));
}

/** The key and the secret header go to the gateway's own origin only. */
function checkOtherHost(state: RunState, secrets: Secrets): Violation[] {
	return state.requests
		.filter((r) => r.origin === 'sibling' || !r.host.startsWith('127.0.0.1:'))
		.filter((r) => JSON.stringify(r.headers).includes(secrets.key.slice(3)) || r.headers[secrets.headerName] !== undefined)
		.map((r) => ({ invariant: 'otherHost' as const, detail: `${r.method} ${r.path} to ${r.host} carried the key or the secret header` }));
}

/** Ids a gateway may well issue, those that merely look like a key among them (issue 26). */
const ORDINARY_ID = new RegExp(`^task_(openai_)?\\d+$|${KEY_LIKE_ID.source}`);

/**
 * The run against a gateway that only answers well (quotes of secrets aside) succeeds: a guard
 * against a vacuous pass, where every run fails before any request and so breaks no promise.
 */
function checkWorks(scenario: Scenario, outcome: Outcome, state: RunState): Violation[] {
	const { plan } = scenario;
	// A gateway that answers well but, by plan, paused more than half the limit while answering
	// (keep-alives, drips, a head delay: what it really did, summed over the run) may rightly be
	// given up on under load: that is no failure to work.
	const pausedMs = state.requests.reduce((sum, request) => sum + request.pausedMs, 0);
	if (pausedMs * 2 > deadlineMs(scenario)) return [];
	// A stream silent about as long as its Idle Timeout rightly fails (checkIdle says whether in time, and in which words).
	if (mayGoIdle(scenario, state)) return [];
	// "SUCCESS detail … ***" is no status the node knows: it rightly reads the task as not done.
	if (state.requests.some((request) => request.statusQuoted)) return [];
	// A tool call the model garbled rightly fails the run (checkMalformedToolCall).
	if (state.requests.some((request) => request.malformedToolCall !== undefined)) return [];
	// A store that never gives the file fails the item; an answer on a connection closed mid-body may be lost.
	if (storeOf(scenario).stall !== 'none' || state.requests.some((request) => request.early === 'close')) return [];
	// The 8 MB frame drawn for the early-answer race is over the Messages format's 5 MB image limit
	// (counted on its Base64 text): the node rightly refuses it before any request.
	if (storeOf(scenario).large && scenario.node.startsWith('messages')) return [];
	const video = scenario.node.startsWith('video');
	const clean =
		plan.answers.every((a) => a.kind === 'clean') &&
		(!video ||
			(plan.video.submitIds.every((id) => ORDINARY_ID.test(id)) &&
				!plan.video.foreignId &&
				plan.video.terminal === 'SUCCESS' &&
				ORDINARY_ID.test(scenario.taskIdInput) &&
				// Download of a task still queued rightly fails ("not finished yet").
				(scenario.node !== 'videoDownload' || plan.video.pendingPolls === 0))) &&
		// A balance only where the gateway serves one, with its amounts as numbers.
		(scenario.node !== 'account' || (plan.balance !== undefined && plan.balance.route !== 'none' && plan.balance.amountForm === 'number'));
	if (!clean) return [];
	const failed = outcome.error !== undefined || outcome.output.some((item) => item.json.error !== undefined) || (!scenario.node.startsWith('model') && outcome.output.length === 0);
	// A run that ran out of its own limit, after the whole limit, kept it: on a busy machine a short
	// limit (1 s) and a dripped answer may rightly end so. Giving up before the limit is no excuse.
	if (failed && ranOutAfterItsLimit(scenario, outcome)) return [];
	return failed ? [{ invariant: 'works', detail: `a run against clean answers failed: ${visibleText(outcome.error === undefined ? outcome.output.map((i) => i.json.error) : errorFields(outcome.error)).slice(0, 300)}` }] : [];
}

/** Every failure of the run is its own limit running out (kind `timeout`), and the run took at least that limit. */
function ranOutAfterItsLimit(scenario: Scenario, outcome: Outcome): boolean {
	const kinds = [
		...(outcome.error === undefined ? [] : [(errorFields(outcome.error).context as { itemFields?: { kind?: unknown } } | undefined)?.itemFields?.kind]),
		...outcome.output.filter((item) => item.json.error !== undefined).map((item) => item.json.kind),
	];
	return kinds.length > 0 && kinds.every((kind) => kind === 'timeout') && outcome.settledAt - outcome.startedAt >= deadlineMs(scenario);
}

const BALANCE_UNITS = new Set(['USD', 'quota']);
const NEITHER_PATH = /\/api\/usage\/token\/[\s\S]*\/v1\/dashboard\/billing\/subscription/;

/** What one Gateway Account item came out as: a well-formed balance, or why not. */
function balanceProblem(json: Record<string, unknown>): string | undefined {
	if (json.error !== undefined) return typeof json.error === 'string' && json.error.trim() !== '' ? undefined : 'an error item without words';
	for (const name of ['available', 'used', 'granted']) {
		if (typeof json[name] !== 'number' || !Number.isFinite(json[name])) return `"${name}" is ${JSON.stringify(json[name])}`;
	}
	if (!BALANCE_UNITS.has(json.unit as string)) return `"unit" is ${JSON.stringify(json.unit)}`;
	if (typeof json.unlimited !== 'boolean') return '"unlimited" is not a boolean';
	if (json.expiresAt !== null && (typeof json.expiresAt !== 'string' || Number.isNaN(Date.parse(json.expiresAt)))) return `"expiresAt" is ${JSON.stringify(json.expiresAt)}`;
	return typeof json.source === 'string' ? undefined : '"source" is missing';
}

/** Equal within the 6 decimals money is rounded to (and float noise on large amounts). */
const sameAmount = (actual: unknown, expected: number) => typeof actual === 'number' && Math.abs(actual - expected) <= 1e-6 + Math.abs(expected) * 1e-9;

/** How a balance item differs from one the answers may mean, if it does. */
function differenceFrom(json: Record<string, unknown>, expected: ExpectedBalance): string | undefined {
	for (const name of ['unit', 'unlimited', 'expiresAt', 'source'] as const) {
		if (json[name] !== expected[name]) return `"${name}" is ${JSON.stringify(json[name])}, the gateway's answers mean ${JSON.stringify(expected[name])}`;
	}
	for (const [name, value] of Object.entries(expected.amounts ?? {})) {
		if (!sameAmount(json[name], value)) return `"${name}" is ${JSON.stringify(json[name])}, the gateway's answers mean ${value} ${expected.unit}`;
	}
	return undefined;
}

/**
 * How a well-formed balance item differs from what the plan's answers mean, if it does. Where a
 * fault hit /api/status (a page, text), the gateway may not have said its rate: the balance
 * without it is right too.
 */
function balanceMismatch(json: Record<string, unknown>, scenario: Scenario, state: RunState): string | undefined {
	const plan = scenario.plan.balance;
	const expected = expectedBalance(plan);
	if (!expected || json.error !== undefined) return undefined;
	const difference = differenceFrom(json, expected);
	const statusFaulted = state.requests.some((r) => r.path === '/api/status' && r.answerKind !== 'clean');
	const withoutRate = plan && statusFaulted ? expectedBalance({ ...plan, rate: false }) : undefined;
	return difference && withoutRate && differenceFrom(json, withoutRate) === undefined ? undefined : difference;
}

/** The balance is the key's: every item of a run gets the same one, read once when nothing failed. */
function balanceReads(outcome: Outcome, state: RunState, cleanAnswers: boolean): string | undefined {
	const balances = outcome.output.filter((item) => item.json.error === undefined).map((item) => JSON.stringify(item.json));
	if (new Set(balances).size > 1) return `the items got different balances: ${balances.join(' / ').slice(0, 300)}`;
	if (!cleanAnswers) return undefined;
	const counts = new Map<string, number>();
	for (const r of state.requests) if (BALANCE_PATHS.test(r.path)) counts.set(r.path, (counts.get(r.path) ?? 0) + 1);
	const twice = [...counts].filter(([, count]) => count > 1);
	return twice.length > 0 ? `without a fault, ${twice.map(([p, count]) => `${p} was read ${count} times`).join(', ')}` : undefined;
}

/**
 * Gateway Account: each item is a balance of finite numbers in a named unit, the one the gateway's
 * answers mean (unit, unlimited, expiry and amounts, from the plan), or an error with words; every
 * item the same balance, read once; a gateway that serves no balance route gets the error that
 * names both paths.
 */
function checkBalance(scenario: Scenario, outcome: Outcome, state: RunState): Violation[] {
	if (scenario.node !== 'account') return [];
	const violations: Violation[] = [];
	outcome.output.forEach((item, index) => {
		const problem = balanceProblem(item.json as Record<string, unknown>) ?? balanceMismatch(item.json as Record<string, unknown>, scenario, state);
		if (problem) violations.push({ invariant: 'balance', detail: `item ${index}: ${problem}` });
	});
	const errorText = outcome.error === undefined ? '' : visibleText(errorFields(outcome.error));
	if (outcome.error !== undefined && errorText.trim() === '') violations.push({ invariant: 'balance', detail: 'the error has no words' });
	const served = scenario.plan.balance !== undefined && scenario.plan.balance.route !== 'none';
	const cleanAnswers = scenario.plan.answers.every((answer) => answer.kind === 'clean');
	const reads = balanceReads(outcome, state, cleanAnswers);
	if (reads) violations.push({ invariant: 'balance', detail: reads });
	if (!served && cleanAnswers) {
		const said = `${errorText} ${outcome.output.map((item) => String(item.json.error ?? '')).join(' ')}`;
		if (!NEITHER_PATH.test(said)) violations.push({ invariant: 'balance', detail: `no balance route, but the error does not name both paths: ${said.slice(0, 200)}` });
	}
	return violations;
}

/** The node measures silence from the last byte it read, a moment before the gateway's silence began: this much either way. */
const IDLE_SLACK_MS = 700;
const IDLE_WORDS =
	/sent nothing for (\d+(?:\.\d+)?) s (after the request was sent|after the answer began, before its first event|after [\d,]+ events?(?:, \d+ tool calls? begun)?, before any text of the answer|after [\d,]+ characters of the answer \([\d,]+ events?(?:, \d+ tool calls? begun)?\)), the limit set by Idle Timeout \(Seconds\)/;

/** The answer's quiet times without a sign of life (no keep-alive), over the run. */
const lifeless = (state: RunState): Silence[] => state.requests.flatMap((request) => request.silences ?? []).filter((silence) => !silence.pings);

/** The run has an idle limit and a stream went silent about as long as it, or longer. */
function mayGoIdle(scenario: Scenario, state: RunState): boolean {
	const idle = idleMs(scenario);
	return idle !== undefined && lifeless(state).some((silence) => silence.plannedMs >= idle - IDLE_SLACK_MS);
}

/**
 * Idle Timeout (issue 28): where it applies (a streamed answer, shorter than Timeout), no silence
 * is sat through for longer than the limit plus the grace; an idle error comes only after a silence
 * about that long, only where the limit applies, says the limit's seconds and what had arrived in
 * the words of the nodes, and the request it ended is never sent again.
 */
function checkIdle(scenario: Scenario, outcome: Outcome, state: RunState): Violation[] {
	const idle = idleMs(scenario);
	const violations: Violation[] = [];
	const said = [outcome.error === undefined ? '' : visibleText(errorFields(outcome.error)), ...outcome.output.map((item) => visibleText(item.json.error ?? ''))].join(' ');
	if (said.includes('sent nothing for')) {
		const words = IDLE_WORDS.exec(said);
		if (idle === undefined) violations.push({ invariant: 'idle', detail: `an idle error where no idle limit applies: ${said.slice(0, 200)}` });
		else if (!words) violations.push({ invariant: 'idle', detail: `an idle error not in the nodes' words: ${said.slice(0, 300)}` });
		else if (Number(words[1]) * 1000 !== idle) violations.push({ invariant: 'idle', detail: `the error names ${words[1]} s, the limit is ${idle} ms` });
		else if (!mayGoIdle(scenario, state)) violations.push({ invariant: 'idle', detail: `an idle error, but no silence came near ${idle} ms: ${said.slice(0, 200)}` });
	}
	if (idle === undefined) return violations;
	for (const request of state.requests) {
		for (const silence of (request.silences ?? []).filter((one) => !one.pings)) {
			const waited = (silence.clientLeftAt ?? silence.startedAt + silence.plannedMs) - silence.startedAt;
			if (silence.plannedMs > idle + GRACE_MS && waited > idle + GRACE_MS) violations.push({ invariant: 'idle', detail: `sat through ${waited} ms of silence with Idle Timeout ${idle} ms` });
			const again = silence.clientLeftAt !== undefined && state.requests.some((later) => later.at > request.at && later.path === request.path && later.body === request.body);
			if (again) violations.push({ invariant: 'idle', detail: `the request given up on after ${waited} ms of silence was sent again` });
		}
	}
	return violations;
}

/**
 * No connection outlives the run: an answer the node stopped reading (an error body quoted in part,
 * a redirect, a reader that gave up) has its connection closed, not left to a gateway that stalls.
 */
function checkLeftOpen(state: RunState): Violation[] {
	return unfinishedOpen(state).map((request) => ({ invariant: 'leftOpen' as const, detail: `the connection of ${request.method} ${request.path} (answer ${request.answerKind}) was still open, its answer unfinished, after the run ended` }));
}

export function checkRun(scenario: Scenario, outcome: Outcome, state: RunState): Violation[] {
	return [
		...checkWorks(scenario, outcome, state),
		...checkSecrets(scenario, outcome, state),
		...checkDeadline(scenario, outcome),
		...checkLate(state),
		...checkTaskIds(scenario, outcome, state),
		...checkTaskOfRecord(scenario, state),
		...checkPaidOnce(state),
		...checkSettingText(outcome, state),
		...checkOtherHost(state, scenario.secrets),
		...checkMalformedToolCall(scenario, outcome, state),
		...checkResultLink(outcome),
		...checkBalance(scenario, outcome, state),
		...checkIdle(scenario, outcome, state),
		...checkLeftOpen(state),
	];
}
