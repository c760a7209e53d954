/**
 * The video task as this node sees it: the record it reports, how the gateway's states are read
 * (normalised, and sorted into running, success and failure), and how the submit (2.4) and status
 * (2.5) answers become a record. Pure functions, unit-tested without HTTP.
 */
import type { IDataObject } from 'n8n-workflow';

import { resolveLink } from '../shared/credential/url';

/** A video task as this node reports it. `status` is always upper case. */
export interface TaskRecord {
	task_id: string;
	status: string;
	progress?: string;
	result_url?: string;
	/** What a finished task's result_url held when it was no link: quoted, never fetched. */
	result_text?: string;
	fail_reason?: string;
}

export type SubmittedTask = TaskRecord & { model?: string };

/**
 * The document lists QUEUED, IN_PROGRESS, SUCCESS and FAILURE. Relays also pass on the words of
 * the upstream APIs they wrap: those that plainly mean done, or ended without a video (failed,
 * cancelled, expired, timed out, rejected), are read as such; every other state (NOT_START,
 * SUBMITTED, UNKNOWN, anything new) as still running.
 */
const SUCCESS_STATES = new Set(['SUCCESS', 'SUCCEEDED', 'COMPLETED']);
export const FAILURE_STATES: ReadonlySet<string> = new Set([
	'FAILURE',
	'FAILED',
	'CANCELLED',
	'CANCELED',
	'EXPIRED',
	'ERROR',
	'TIMEOUT',
	'TIMED_OUT',
	'REJECTED',
]);

/**
 * Why a task id cannot name one task in the status path, or undefined when it can: it is sent as
 * one path segment (encoded), so `.` and `..` (which a URL resolves as dot segments: `..` polled
 * `GET /v1/video/`, another task's answer), a `/`, control characters and text that has no UTF-8
 * form are refused.
 */
export function taskIdProblem(taskId: string): string | undefined {
	if (taskId === '') return 'is empty';
	if (taskId === '.' || taskId === '..') return `is "${taskId}", which a URL reads as a folder step, not a task`;
	if (taskId.includes('/') || taskId.includes('\\')) return 'contains a slash; a task ID is one path segment';
	// Control characters (C0, DEL, C1), by code point: a regex of them trips no-control-regex.
	const isControl = (code: number) => code < 0x20 || (code >= 0x7f && code < 0xa0);
	if ([...taskId].some((character) => isControl(character.charCodeAt(0)))) return 'contains control characters';
	// A lone surrogate has no UTF-8 form: encoding it for the path would throw, not send.
	if (/\p{Cs}/u.test(taskId)) return 'contains a broken character (a lone UTF-16 surrogate)';
	return undefined;
}

/**
 * Task ids longer than this are shortened in headlines; the item, the log line and the error's
 * description keep them whole (edge.ts adds the whole id to a description that lacks it).
 */
const MESSAGE_ID_LIMIT = 100;

/** A task id as messages quote it: whole up to 100 characters, else its start and end. */
export function shortTaskId(taskId: string): string {
	if (taskId.length <= MESSAGE_ID_LIMIT) return taskId;
	return `${taskId.slice(0, 60)}…${taskId.slice(-20)} (${taskId.length} characters)`;
}

/** What a status check is called: every failed check's headline reads `Checking video task task_9 failed…`. */
export const checkingWhat = (taskId: string): string => `Checking video task ${shortTaskId(taskId)}`;

/** The running states the document and new-api name (every other state that is no end runs too). */
const RUNNING_STATES = ['QUEUED', 'IN_PROGRESS', 'NOT_START', 'SUBMITTED', 'UNKNOWN'];
const KNOWN_STATES: ReadonlySet<string> = new Set([...SUCCESS_STATES, ...FAILURE_STATES, ...RUNNING_STATES]);

/**
 * `queued`, ` in-progress ` -> `QUEUED`, `IN_PROGRESS`; nothing -> `UNKNOWN`. Words are joined by
 * `_` only into a state this node knows; any other state keeps its words apart: joined, a word the
 * gateway quoted after the state would become one token with it, and the secret policy keeps a
 * short secret that is part of a longer token (credential/secrets.ts).
 */
export function normaliseStatus(raw: unknown): string {
	const text = typeof raw === 'string' || typeof raw === 'number' ? String(raw).trim().toUpperCase() : '';
	if (text === '') return 'UNKNOWN';
	const joined = text.replace(/[\s-]+/g, '_');
	return KNOWN_STATES.has(joined) ? joined : text.replace(/\s+/g, ' ');
}

export function phaseOf(status: string): 'running' | 'success' | 'failure' {
	const normalised = normaliseStatus(status);
	if (SUCCESS_STATES.has(normalised)) return 'success';
	if (FAILURE_STATES.has(normalised)) return 'failure';
	return 'running';
}

/** Progress as the gateway's percentage string (`50%`); a bare number gets its `%`. */
export function normaliseProgress(raw: unknown): string | undefined {
	if (typeof raw === 'number' && Number.isFinite(raw)) return `${raw}%`;
	if (typeof raw !== 'string' || raw.trim() === '') return undefined;
	const text = raw.trim();
	return /^\d+(\.\d+)?$/.test(text) ? `${text}%` : text;
}

function text(value: unknown): string | undefined {
	if (typeof value === 'string' && value.trim() !== '') return value.trim();
	if (typeof value === 'number' && Number.isFinite(value)) return String(value);
	return undefined;
}

function isRecord(value: unknown): value is IDataObject {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A copy without the fields that are undefined. */
function withoutEmpty<T extends TaskRecord>(record: T): T {
	return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as T;
}

/** The task of a submit answer (2.4, or the same inside `data`); undefined when it has no task id. */
export function readSubmitAnswer(body: unknown): SubmittedTask | undefined {
	const answer = isRecord(body) ? body : {};
	const data = isRecord(answer.data) ? answer.data : {};
	const taskId = text(answer.task_id) ?? text(answer.id) ?? text(data.task_id) ?? text(data.id);
	if (!taskId) return undefined;
	return withoutEmpty<SubmittedTask>({
		task_id: taskId,
		status: normaliseStatus(answer.status ?? data.status ?? 'QUEUED'),
		progress: normaliseProgress(answer.progress ?? data.progress),
		model: text(answer.model) ?? text(data.model),
	});
}

/**
 * The task id a status answer names: `task_id`, or a string `id` (a number there is a relay's row
 * number, not the task); undefined when it names none.
 */
function namedTaskId(record: IDataObject): string | undefined {
	return text(record.task_id) ?? (typeof record.id === 'string' ? text(record.id) : undefined);
}

/**
 * The task of a status answer (2.5: `{code, data: {...}}`; a bare task record is accepted too);
 * undefined when the answer holds no task record (error bodies were refused by the transport).
 * The record keeps the id asked for (the task of record); `answeredFor` is the id the answer
 * named, so the caller can refuse an answer about another task. `result_url` is a link resolved
 * against the gateway (`baseUrl`: its origin); a failed task has none, and what its result_url
 * held (new-api writes the failure sentence there) is its reason when it gives no other.
 */
export function readStatusAnswer(body: unknown, taskId: string, baseUrl?: string): (TaskRecord & { answeredFor?: string }) | undefined {
	const answer = isRecord(body) ? body : {};
	const data = isRecord(answer.data) ? answer.data : undefined;
	const record = data ?? (answer.status !== undefined ? answer : undefined);
	if (!record || (record.status === undefined && text(record.task_id) === undefined && text(record.id) === undefined)) return undefined;
	// A record in `data` that names no task is about the one its wrapper names, if that names one.
	const named = namedTaskId(record) ?? (record !== answer ? text(answer.task_id) : undefined);
	const status = normaliseStatus(record.status);
	const failed = phaseOf(status) === 'failure';
	const result = text(record.result_url) ?? text(record.url) ?? text(record.video_url);
	const link = result === undefined || failed ? undefined : resolveLink(result, baseUrl);
	const unusable = link === undefined ? result : undefined;
	return withoutEmpty<TaskRecord & { answeredFor?: string }>({
		task_id: taskId,
		answeredFor: named !== undefined && named !== taskId ? named : undefined,
		status,
		progress: normaliseProgress(record.progress),
		result_url: link,
		result_text: failed ? undefined : unusable,
		fail_reason: text(record.fail_reason) ?? text(record.error) ?? (failed ? unusable : undefined),
	});
}

/**
 * A newer answer over an older one: fields the newer one leaves out keep their last value. The
 * task id stays the one of record, whatever the newer answer says.
 */
export function mergeRecords(previous: TaskRecord, next: TaskRecord): TaskRecord {
	const merged = { ...previous, ...withoutEmpty(next) };
	return withoutEmpty({ ...merged, task_id: previous.task_id, status: normaliseStatus(merged.status) });
}

/** The fields an item keeps for its task, on success and on Continue On Fail alike. */
export function taskFields(record: TaskRecord): IDataObject {
	return withoutEmpty(record) as unknown as IDataObject;
}

/** `IN_PROGRESS, progress 60%`: the status as messages quote it. */
export function statusWithProgress(record: TaskRecord): string {
	return record.progress ? `${record.status}, progress ${record.progress}` : record.status;
}
