/**
 * The paid work of a video run, and the one listing of it that a failed run's error carries
 * (Generate and Submit alike): every task created, with its last known status; the tasks whose ID
 * was refused (they cannot be checked, but may be charged); the submits that failed after the
 * gateway may have created a task; and the items never submitted. Every task ID is listed whole.
 */
import type { IDataObject } from 'n8n-workflow';

import type { RunAddendum } from '../shared/failures/edge';
import { GatewayError } from '../shared/failures/errors';
import type { TaskRecord } from './task';

/** One created task, as the listing names it. */
export interface ListedTask extends IDataObject {
	item: number;
	task_id: string;
	status: string;
	progress: string | null;
}

/** The listing in words, and as data (the error's fields, the log line's metadata). */
export interface PaidWorkAddendum extends RunAddendum {
	fields: { tasks: ListedTask[]; unconfirmedItems: number[]; refusedTasks: Array<{ item: number; task_id: string }>; notSubmittedItems: number[] };
}

/** `item 3: task_9 (IN_PROGRESS, 40%)` */
export function taskLine(task: ListedTask): string {
	return `item ${task.item}: ${task.task_id} (${task.status}${task.progress ? `, ${task.progress}` : ''})`;
}

const itemsText = (items: number[]) => `item${items.length > 1 ? 's' : ''} ${[...items].sort((a, b) => a - b).join(', ')}`;

/** How a submit that may have created a task ended: answered with an error status, answered without a task ID, or not answered at all. */
function unconfirmedWords(status: number | undefined): string {
	if (status === 200) return 'was answered without a task ID';
	return status === undefined ? 'got no answer' : `was answered HTTP ${status}`;
}

export class PaidWork {
	/** The latest known state of every created task, by item. */
	protected readonly tasks = new Map<number, TaskRecord>();
	private readonly refused: Array<{ item: number; task_id: string }> = [];
	/** Submits that failed after they may have created a task, and how they ended ("got no answer"). */
	private readonly unconfirmed: Array<{ item: number; words: string }> = [];
	private readonly skipped: number[] = [];

	/** An item's task as it is now: just created, checked, or as its wait ended. */
	setTask(item: number, record: TaskRecord): void {
		this.tasks.set(item, record);
	}

	/**
	 * A failed submit that may have created a task: a task ID it answered but that was refused (it
	 * cannot be polled, yet names a task the gateway may run and charge) is kept, else the submit is named.
	 */
	submitFailed(item: number, error: unknown): void {
		if (!(error instanceof GatewayError) || !error.mayHaveActed) return;
		const taskId = error.fields.task_id;
		if (typeof taskId === 'string') this.refused.push({ item, task_id: taskId });
		else this.unconfirmed.push({ item, words: unconfirmedWords(error.status) });
	}

	/** An item never submitted: the run stopped before its turn. */
	skip(item: number): void {
		this.skipped.push(item);
	}

	/** Whether the gateway may run (and charge) anything of this run. */
	get mayBeCharged(): boolean {
		return this.tasks.size > 0 || this.refused.length > 0 || this.unconfirmed.length > 0;
	}

	/**
	 * The listing, in words and as data; the item that failed the run is left out of the words (its
	 * own error says it), kept in the data.
	 */
	addendum(failedItem?: number): PaidWorkAddendum {
		const tasks = [...this.tasks]
			.sort(([a], [b]) => a - b)
			.map(([item, record]) => ({ item, task_id: record.task_id, status: record.status, progress: record.progress ?? null }));
		const fields = { tasks, unconfirmedItems: this.unconfirmed.map(({ item }) => item), refusedTasks: [...this.refused], notSubmittedItems: [...this.skipped].sort((a, b) => a - b) };
		const text = this.text(tasks, failedItem);
		return text ? { text, fields } : { fields };
	}

	private text(tasks: ListedTask[], failedItem: number | undefined): string {
		const parts: string[] = [];
		const others = tasks.filter((task) => task.item !== failedItem);
		const whose = failedItem === undefined ? 'Video tasks of this run' : 'Tasks of the other items';
		if (others.length) parts.push(`${whose}, to fetch with Get Status or Download: ${others.map(taskLine).join('; ')}.`);
		const refused = this.refused.filter(({ item }) => item !== failedItem).map(({ item, task_id }) => `item ${item}: task "${task_id}"`);
		if (refused.length) parts.push(`Tasks that may be charged but cannot be checked (the gateway answered an ID that is no task path): ${refused.join('; ')}.`);
		const maybe = this.unconfirmed.filter(({ item }) => item !== failedItem);
		// One sentence per way the submits ended ("got no answer", "was answered HTTP 502").
		for (const words of new Set(maybe.map((entry) => entry.words))) {
			const items = maybe.filter((entry) => entry.words === words).map(({ item }) => item);
			parts.push(`The submit of ${itemsText(items)} ${words}: the gateway may have created a task (check its console).`);
		}
		if (this.skipped.length) parts.push(`Not submitted: ${itemsText(this.skipped)}.`);
		return parts.join(' ');
	}
}
