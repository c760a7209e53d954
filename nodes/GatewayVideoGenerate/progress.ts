/**
 * Where a Generate run shows how its videos are doing while it waits, in the places n8n offers a
 * running node: the execution's custom data (saved with the execution, also after a Stop: n8n's
 * public API returns it as `customData`, and its executions list can filter by it where licensed)
 * and, in manual runs, a message to the editor. One key per node; the value holds the counts and as
 * many task ids as fit (n8n keeps 255 characters); every id is in n8n's log in any case.
 */
import type { IExecuteFunctions } from 'n8n-workflow';

import { phaseOf, shortTaskId } from './task';
import type { TaskRecord } from './task';

/** n8n logs an error and keeps no more for longer custom-data values. */
const VALUE_LIMIT = 255;

export class VideoProgress {
	private readonly key: string;
	private last = '';

	constructor(
		private readonly ctx: IExecuteFunctions,
		private readonly tasks: ReadonlyMap<number, TaskRecord>,
		private readonly total: number,
	) {
		// Custom data keys: letters, digits and `_`, at most 50 characters.
		this.key = `video_${ctx.getNode().name}`.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 50);
	}

	/** Shows the summary and the task ids as they are now, when they changed. */
	update(): void {
		const records = [...this.tasks].sort(([a], [b]) => a - b).map(([, record]) => record);
		const count = (phase: string) => records.filter((record) => phaseOf(record.status) === phase).length;
		const failed = count('failure');
		const summary = `${count('success')}/${this.total} done${failed ? `, ${failed} failed` : ''}, ${count('running')} waiting`;
		const ids: string[] = [];
		for (const record of records) {
			if (`${summary}: ${[...ids, shortTaskId(record.task_id)].join(' ')} +999 more`.length > VALUE_LIMIT) break;
			ids.push(shortTaskId(record.task_id));
		}
		const rest = records.length - ids.length;
		const value = `${summary}: ${ids.join(' ')}${rest ? ` +${rest} more` : ''}`;
		if (value === this.last) return;
		this.last = value;
		try {
			this.ctx.customData?.set(this.key, value);
		} catch {
			// a context without custom data (a tool run, a test)
		}
		try {
			this.ctx.sendMessageToUI?.(`${this.ctx.getNode().name}: ${summary}`);
		} catch {
			// not a manual run
		}
	}
}
