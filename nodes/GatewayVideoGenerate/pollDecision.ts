/**
 * What the wait loop decides, as pure functions (unit-tested without any clock or HTTP): how to
 * read the gateway's task answers, which states mean "keep polling", which poll failures are
 * passing, when to give up, when the next poll is due, and the words of every outcome.
 */
import type { IDataObject } from 'n8n-workflow';

/** A video task as this node reports it. `status` is always upper case. */
export interface TaskRecord {
	task_id: string;
	status: string;
	progress?: string;
	result_url?: string;
	fail_reason?: string;
}

export type TaskPhase = 'running' | 'success' | 'failure';

/**
 * The document lists QUEUED, IN_PROGRESS, SUCCESS and FAILURE. Relays also use the words of the
 * upstream APIs they wrap; those that plainly mean done or failed are read as such, and every
 * other state (NOT_START, SUBMITTED, UNKNOWN, anything new) as still running.
 */
const SUCCESS_STATES = new Set(['SUCCESS', 'SUCCEEDED', 'COMPLETED']);
const FAILURE_STATES = new Set(['FAILURE', 'FAILED']);

/** `queued`, ` in-progress ` -> `QUEUED`, `IN_PROGRESS`; nothing -> `UNKNOWN`. */
export function normaliseStatus(raw: unknown): string {
	const text = typeof raw === 'string' || typeof raw === 'number' ? String(raw).trim() : '';
	return text === '' ? 'UNKNOWN' : text.toUpperCase().replace(/[\s-]+/g, '_');
}

export function phaseOf(status: string): TaskPhase {
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

function withoutEmpty(record: TaskRecord): TaskRecord {
	const out = { ...record };
	for (const key of ['progress', 'result_url', 'fail_reason'] as const) if (out[key] === undefined) delete out[key];
	return out;
}

/** The task of a submit answer (2.4), or a problem in words when it carries no task id. */
export function readSubmitAnswer(body: unknown): { task?: TaskRecord & { model?: string }; problem?: string } {
	const answer = (body ?? {}) as IDataObject;
	const data = (typeof answer.data === 'object' && answer.data !== null ? answer.data : {}) as IDataObject;
	const taskId = text(answer.task_id) ?? text(answer.id) ?? text(data.task_id) ?? text(data.id);
	if (!taskId) {
		const said = text(answer.message) ?? text(answer.msg);
		return { problem: `the gateway accepted the request but returned no task id${said ? ` ("${said.slice(0, 200)}")` : ''}` };
	}
	const task: TaskRecord & { model?: string } = {
		task_id: taskId,
		status: normaliseStatus(answer.status ?? data.status ?? 'QUEUED'),
		progress: normaliseProgress(answer.progress ?? data.progress),
	};
	const model = text(answer.model);
	if (model) task.model = model;
	return { task: withoutEmpty(task) as TaskRecord & { model?: string } };
}

/**
 * The task of a status answer (2.5: `{code, data: {...}}`; a bare task record is accepted too),
 * or a problem in words when the answer reports an error instead of a task.
 */
export function readStatusAnswer(body: unknown, taskId: string): { task?: TaskRecord; problem?: string } {
	const answer = (body ?? {}) as IDataObject;
	const data = typeof answer.data === 'object' && answer.data !== null && !Array.isArray(answer.data) ? (answer.data as IDataObject) : undefined;
	const record = data ?? (answer.status !== undefined ? answer : undefined);
	const code = text(answer.code);
	if (!record || (code !== undefined && code.toLowerCase() !== 'success' && !data?.status)) {
		const said = text(answer.message) ?? text(answer.msg) ?? code;
		return { problem: `the gateway did not report the task${said ? `: "${said.slice(0, 200)}"` : ''}` };
	}
	const task: TaskRecord = {
		task_id: text(record.task_id) ?? text(record.id) ?? taskId,
		status: normaliseStatus(record.status),
		progress: normaliseProgress(record.progress),
		result_url: text(record.result_url) ?? text(record.url) ?? text(record.video_url),
		fail_reason: text(record.fail_reason) ?? text(record.error),
	};
	return { task: withoutEmpty(task) };
}

/** A newer answer over an older one: fields the newer one leaves out keep their last value. */
export function mergeRecords(previous: TaskRecord, next: TaskRecord): TaskRecord {
	const merged = { ...previous, ...Object.fromEntries(Object.entries(next).filter(([, v]) => v !== undefined)) } as TaskRecord;
	return withoutEmpty({ ...merged, status: normaliseStatus(merged.status) });
}

/**
 * A poll that failed for a passing reason is tried again at the next tick: rate limits, server
 * errors (502/503/504 pages from a proxy), an answer that was not JSON (a 200 HTML page), and
 * dropped or timed-out connections (no HTTP status at all). Anything else (401, 403, 404, other
 * 4xx) will not get better by waiting.
 */
export function isPassingPollFailure(httpStatus: number | undefined): boolean {
	if (httpStatus === undefined || !Number.isFinite(httpStatus)) return true;
	return httpStatus < 400 || httpStatus === 408 || httpStatus === 429 || httpStatus >= 500;
}

/**
 * A run of passing failures becomes fatal once polls have failed for two minutes in a row, and
 * at least three times: long enough to ride out a gateway restart or a burst of rate limiting,
 * short enough that a gateway that is really gone is reported while the task id still matters.
 */
export const FAILURE_RUN_LIMIT = { minFailedPolls: 3, minDurationMs: 120_000 };

export function failureRunIsFatal(failedPolls: number, failingSince: number, now: number, limit = FAILURE_RUN_LIMIT): boolean {
	return failedPolls >= limit.minFailedPolls && now - failingSince >= limit.minDurationMs;
}

/**
 * When the loop wakes next: at the earliest due poll, or a little later so that tasks due within
 * `coalesceMs` of it are polled in the same tick (never earlier than any of them is due).
 */
export function nextWakeAt(dueTimes: readonly number[], coalesceMs: number): number | undefined {
	if (dueTimes.length === 0) return undefined;
	const earliest = Math.min(...dueTimes);
	return Math.max(...dueTimes.filter((due) => due <= earliest + coalesceMs));
}

/** One task's waiting state between polls. */
export interface WatchState {
	record: TaskRecord;
	submittedAt: number;
	intervalMs: number;
	deadline: number;
	failedPolls: number;
	failingSince?: number;
}

export type PollAnswer = { task: TaskRecord } | { error: Error; passing: boolean };

export type TaskOutcome =
	| { kind: 'success' | 'failure'; record: TaskRecord }
	/** Still running when the next poll would have come after the deadline. */
	| { kind: 'timeout'; record: TaskRecord; waitedMs: number }
	/** Polling failed for good: a permanent error, or a long run of passing ones. */
	| { kind: 'unreachable'; record: TaskRecord; error: Error; failedPolls: number }
	/** The execution was cancelled, or the run stopped because another item failed. */
	| { kind: 'cancelled' | 'stopped'; record: TaskRecord };

export type PollDecision = { outcome: TaskOutcome } | { nextPollAt: number; state: WatchState };

/**
 * A poll due at the deadline still happens when the loop runs a little late (ticks gather tasks
 * due within a second of each other), so Max Wait counts whole intervals.
 */
const DEADLINE_GRACE_MS = 1000;

/**
 * After one poll at `tickAt`: finished, failed, given up, or the next poll's time. No poll is
 * planned past the deadline, so the loop never sleeps after the last poll.
 */
export function decideAfterPoll(state: WatchState, answer: PollAnswer, tickAt: number): PollDecision {
	let next: WatchState;
	if ('task' in answer) {
		const record = mergeRecords(state.record, answer.task);
		const phase = phaseOf(record.status);
		if (phase !== 'running') return { outcome: { kind: phase, record } };
		next = { ...state, record, failedPolls: 0, failingSince: undefined };
	} else {
		const failedPolls = state.failedPolls + 1;
		const failingSince = state.failingSince ?? tickAt;
		if (!answer.passing || failureRunIsFatal(failedPolls, failingSince, tickAt)) {
			return { outcome: { kind: 'unreachable', record: state.record, error: answer.error, failedPolls } };
		}
		next = { ...state, failedPolls, failingSince };
	}
	const nextPollAt = tickAt + state.intervalMs;
	if (nextPollAt > state.deadline + DEADLINE_GRACE_MS) return { outcome: { kind: 'timeout', record: next.record, waitedMs: tickAt - state.submittedAt } };
	return { nextPollAt, state: next };
}

// ---------- the words of each outcome ----------

function statusWithProgress(record: TaskRecord): string {
	return record.progress ? `${record.status}, progress ${record.progress}` : record.status;
}

function fetchLater(taskId: string): string {
	return `Nothing is lost: fetch the video later with the Get Status or Download operation and task ID ${taskId}.`;
}

export interface OutcomeWords {
	message: string;
	description: string;
}

/** The error words for every outcome but success. */
export function describeOutcome(outcome: Exclude<TaskOutcome, { kind: 'success' }>): OutcomeWords {
	const { record } = outcome;
	const id = record.task_id;
	switch (outcome.kind) {
		case 'failure':
			return {
				message: `Video task ${id} failed: ${record.fail_reason ?? 'the gateway gave no reason'} (the charge for a failed task is usually refunded automatically)`,
				description: `The gateway reported FAILURE for task ${id}. Check the prompt and the settings, then generate again.`,
			};
		case 'timeout':
			return {
				message: `Video task ${id} is still running after ${Math.round(outcome.waitedMs / 1000)} s (last status ${statusWithProgress(record)}), so the node stopped waiting`,
				description: `${fetchLater(id)} Or raise Max Wait (Seconds) in the options.`,
			};
		case 'unreachable': {
			const run = outcome.failedPolls > 1 ? ` (${outcome.failedPolls} polls in a row failed)` : '';
			return {
				message: `Could not check video task ${id}${run}: ${outcome.error.message}`,
				description: `The task may still be running (last status ${statusWithProgress(record)}). ${fetchLater(id)}`,
			};
		}
		case 'cancelled':
			return {
				message: `The wait for video task ${id} was cancelled (last status ${statusWithProgress(record)})`,
				description: `The task may still be running on the gateway. ${fetchLater(id)}`,
			};
		case 'stopped':
		default:
			return {
				message: `Stopped waiting for video task ${id} because another item failed (last status ${statusWithProgress(record)})`,
				description: fetchLater(id),
			};
	}
}

/** The fields an item keeps for its task, on success and on Continue On Fail alike. */
export function taskFields(record: TaskRecord): IDataObject {
	return withoutEmpty({ ...record }) as unknown as IDataObject;
}
