/**
 * The state of one Generate run, in one place: its paid work (paidWork.ts), the item each task
 * belongs to, and the failure that ends the run. Promises:
 * - every change of a task's state shows in the run's progress at once (progress.ts);
 * - the first failure (without Continue On Fail) ends the run; nothing is submitted after it or a Stop;
 * - the run's error lists the paid work in its words and its data, built once at the edge (masked),
 *   and a warning lists every task in its message text (n8n keeps no node output after a failure,
 *   nothing at all after a Stop).
 */
import type { IExecuteFunctions, INode } from 'n8n-workflow';

import type { SecretMasker } from '../shared/credential/secrets';
import { asNodeError } from '../shared/failures/edge';
import type { NodeError } from '../shared/failures/edge';
import { GatewayError } from '../shared/failures/errors';
import { PaidWork, taskLine } from './paidWork';
import type { PaidWorkAddendum } from './paidWork';
import type { PollAnswer } from './poller';
import { VideoProgress } from './progress';
import { mergeRecords } from './task';
import type { TaskRecord } from './task';
import { logVideo, placeText } from './taskApi';
import type { LogPlace } from './taskApi';

/** Task lines per log line: a run of 1,000 videos logs its list in readable pieces. */
const TASKS_PER_LOG_LINE = 100;

export class VideoRun extends PaidWork {
	private readonly itemOfTask = new Map<string, number>();
	private readonly progress: VideoProgress;
	private failure?: { error: unknown; itemIndex: number };

	constructor(
		private readonly ctx: IExecuteFunctions,
		items: number,
		private readonly settings: { cancelSignal?: AbortSignal; continueOnFail: boolean },
	) {
		super();
		this.progress = new VideoProgress(ctx, this.tasks, items);
	}

	/** The execution was stopped: reported once, for the whole run (endError). */
	get cancelled(): boolean {
		return this.settings.cancelSignal?.aborted === true;
	}

	override setTask(itemIndex: number, record: TaskRecord): void {
		this.itemOfTask.set(record.task_id, itemIndex);
		super.setTask(itemIndex, record);
		this.progress.update();
	}

	/** A status check of a task of this run, sent for its item: its answer merged into what is known of it, handed back as it came. */
	async check(taskId: string, send: (itemIndex: number) => Promise<PollAnswer>): Promise<PollAnswer> {
		const item = this.itemOfTask.get(taskId);
		const answer = await send(item ?? 0);
		const known = item === undefined ? undefined : this.tasks.get(item);
		if ('task' in answer && known && item !== undefined) this.setTask(item, mergeRecords(known, answer.task));
		return answer;
	}

	/** An item whose turn came once the run was failing or stopped is never submitted (nothing more is paid for): its error. */
	refuseIfHalted(itemIndex: number): void {
		if (this.failure === undefined && !this.cancelled) return;
		this.skip(itemIndex);
		throw new GatewayError({ kind: 'cancelled', headline: `Item ${itemIndex} was not submitted: the run stopped before it`, itemIndex });
	}

	/**
	 * An item failed. Without Continue On Fail the first failure fails the run (after a Stop, the
	 * Stop does): recorded where it happens, before the item's slot passes to a waiting submit.
	 */
	failed(itemIndex: number, error: unknown): void {
		if (!this.failure && !this.settings.continueOnFail && !this.cancelled) this.failure = { error, itemIndex };
	}

	/** The run's error once every item has settled: after a Stop, or its first failure; undefined when neither came. */
	endError(node: INode, masker: SecretMasker, place: LogPlace): NodeError | undefined {
		if (this.cancelled) return this.stoppedError(node, masker, place);
		if (!this.failure) return undefined;
		const { error, itemIndex } = this.failure;
		const added = this.addendum(itemIndex);
		if (this.tasks.size) this.logTasks(`video run failed at item ${itemIndex}; its tasks`, place, masker, added);
		return asNodeError(node, error, itemIndex, masker, added);
	}

	private stoppedError(node: INode, masker: SecretMasker, place: LogPlace): NodeError {
		// n8n keeps nothing a node returns or throws after a Stop (see the README): the log keeps the
		// list, in the text of its lines, and the execution's custom data keeps what fits.
		this.progress.update();
		const added = this.addendum();
		const count = this.tasks.size;
		const plural = count === 1 ? '' : 's';
		this.logTasks(`video run stopped while ${count} task${plural} may still be running`, place, masker, added);
		const error = new GatewayError({
			kind: 'cancelled',
			headline: count ? `The run was stopped while waiting for ${count} video task${plural}` : 'The run was stopped before the gateway confirmed any video task',
			hint: this.mayBeCharged ? 'The tasks may still be running on the gateway (and be charged).' : 'No video task was created.',
		});
		return asNodeError(node, error, undefined, masker, added);
	}

	/** Warns with the run's tasks in the message text itself (n8n's default log format prints only the message), 100 a line. */
	private logTasks(headline: string, place: LogPlace, masker: SecretMasker, { fields: { tasks, ...listing } }: PaidWorkAddendum): void {
		const pieces = Math.max(1, Math.ceil(tasks.length / TASKS_PER_LOG_LINE));
		for (let piece = 0; piece < pieces; piece++) {
			const part = tasks.slice(piece * TASKS_PER_LOG_LINE, (piece + 1) * TASKS_PER_LOG_LINE);
			const counter = pieces > 1 ? ` [${piece + 1}/${pieces}]` : '';
			const list = part.length ? `: ${part.map(taskLine).join('; ')}` : '';
			logVideo(this.ctx, 'warn', masker, `${headline} ${placeText(undefined, place)}${counter}${list}`, { ...place, ...listing, tasks: part });
		}
	}
}
