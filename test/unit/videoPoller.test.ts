import { CheckQueue } from '../../nodes/GatewayVideoGenerate/checkSchedule';
import { TaskPoller } from '../../nodes/GatewayVideoGenerate/poller';
import { waitEndOf } from '../../nodes/GatewayVideoGenerate/checkSchedule';
import type { PollAnswer, TaskOutcome } from '../../nodes/GatewayVideoGenerate/poller';
import { GatewayError } from '../../nodes/shared/failures/errors';
import { createFakeClock } from '../helpers/fakeClock';
import type { FakeClock } from '../helpers/fakeClock';
import { createVirtualClock } from '../helpers/virtualClock';

const SECOND = 1000;
const wait = { intervalMs: 5 * SECOND, maxWaitMs: 900 * SECOND };

interface Poll {
	taskId: string;
	at: number;
	remainingMs?: number;
}

/** A scripted gateway: each task answers its list of states in turn (the last one repeats). */
function scriptedPoller(clock: FakeClock, script: Record<string, Array<string | PollAnswer>>, options: { signal?: AbortSignal; limit?: number; spacingMs?: number; turnMs?: number } = {}) {
	const polls: Poll[] = [];
	const remaining: number[] = [];
	let inFlight = 0;
	let peak = 0;
	const queue = new CheckQueue(clock, { slots: options.limit ?? 10, spacingMs: options.spacingMs });
	const take = queue.take.bind(queue);
	// a wait for the check's turn in the budget, before it goes out
	queue.take = async (check) => {
		const free = await take(check);
		if (options.turnMs) clock.advance(options.turnMs);
		return free;
	};
	const poller = new TaskPoller({
		clock,
		signal: options.signal,
		queue,
		poll: async (taskId, remainingMs) => {
			polls.push({ taskId, at: clock.now() });
			remaining.push(remainingMs);
			inFlight++;
			peak = Math.max(peak, inFlight);
			await new Promise((resolve) => setImmediate(resolve));
			inFlight--;
			const steps = script[taskId];
			const step = steps.length > 1 ? steps.shift()! : steps[0];
			if (typeof step !== 'string') return step;
			const [status, extra] = step.split(' ');
			return { task: { task_id: taskId, status, progress: extra, result_url: status === 'SUCCESS' ? `https://cdn/${taskId}.mp4` : undefined } };
		},
	});
	return { poller, polls, remaining, peak: () => peak };
}

const queued = (taskId: string) => ({ task_id: taskId, status: 'QUEUED' });

describe('TaskPoller', () => {
	it('polls first one interval after submit, every interval after, and never sleeps after the last poll', async () => {
		const clock = createFakeClock(0);
		const { poller, polls } = scriptedPoller(clock, { a: ['NOT_START', 'IN_PROGRESS 50%', 'SUCCESS 100%'] });
		const outcome = await poller.watch(queued('a'), wait);
		expect(outcome).toEqual({ kind: 'success', record: { task_id: 'a', status: 'SUCCESS', progress: '100%', result_url: 'https://cdn/a.mp4' } });
		expect(polls.map((p) => p.at)).toEqual([5000, 10_000, 15_000]);
		expect(clock.sleeps).toEqual([5000, 5000, 5000]);
		expect(clock.now()).toBe(15_000);
	});

	it('polls many tasks in one loop: ten tasks take as many ticks as one', async () => {
		const clock = createFakeClock(0);
		const ids = Array.from({ length: 10 }, (_, i) => `t${i}`);
		const script = Object.fromEntries(ids.map((id) => [id, ['NOT_START', 'IN_PROGRESS', 'SUCCESS']]));
		const { poller, polls } = scriptedPoller(clock, script);
		const outcomes = await Promise.all(ids.map(async (id) => await poller.watch(queued(id), wait)));
		expect(outcomes.every((o) => o.kind === 'success')).toBe(true);
		expect(polls).toHaveLength(30);
		expect(polls.map((p) => p.at)).toEqual([...Array(10).fill(5000), ...Array(10).fill(10_000), ...Array(10).fill(15_000)]);
		expect(clock.now()).toBe(15_000);
	});

	it('takes tasks submitted a moment apart into the same tick, the later one a little early, never late: no task waits longer than its interval', async () => {
		const clock = createFakeClock(0);
		const { poller, polls } = scriptedPoller(clock, { a: ['IN_PROGRESS', 'SUCCESS'], b: ['IN_PROGRESS', 'SUCCESS'] });
		const first = poller.watch(queued('a'), wait);
		clock.advance(400);
		const second = poller.watch(queued('b'), wait);
		await Promise.all([first, second]);
		expect(polls).toEqual([
			{ taskId: 'a', at: 5000 },
			{ taskId: 'b', at: 5000 },
			{ taskId: 'a', at: 10_000 },
			{ taskId: 'b', at: 10_000 },
		]);
	});

	it('sends checks due at the same moment early enough, one budget step apart, that none is late', async () => {
		const clock = createFakeClock(0);
		const { poller, polls } = scriptedPoller(clock, { a: ['IN_PROGRESS', 'SUCCESS'], b: ['IN_PROGRESS', 'SUCCESS'], c: ['IN_PROGRESS', 'SUCCESS'] }, { spacingMs: 1500 });
		await Promise.all(['a', 'b', 'c'].map(async (id) => await poller.watch(queued(id), wait)));
		// due at 5000 all three: planned back from it, 1500 ms apart
		expect(polls.slice(0, 3).map((p) => p.at)).toEqual([2000, 3500, 5000]);
		expect(polls.every((p, i) => i < 3 || p.at - polls.find((q) => q.taskId === p.taskId)!.at <= 5000)).toBe(true);
	});

	it('sends no check more than half its interval early when the budget is short: a burst that cannot be on time gets no head start', async () => {
		const clock = createFakeClock(0);
		const ids = ['a', 'b', 'c', 'd'];
		const { poller, polls } = scriptedPoller(clock, Object.fromEntries(ids.map((id) => [id, ['IN_PROGRESS', 'SUCCESS']])), { spacingMs: 1500 });
		await Promise.all(ids.map(async (id) => await poller.watch(queued(id), wait)));
		// four tasks ask 4 x 1.5 s of budget every 5 s: short. 1500 ms apart would start at 500: not before 2500 (half of 5 s early)
		expect(Math.min(...polls.slice(0, 4).map((p) => p.at))).toBe(2500);
	});

	it('plans the next check one interval after the last one went out, its wait for a turn in the budget not added to the gap', async () => {
		const clock = createFakeClock(0);
		const { poller, polls } = scriptedPoller(clock, { a: ['IN_PROGRESS', 'IN_PROGRESS', 'SUCCESS'] }, { turnMs: 700 });
		expect((await poller.watch(queued('a'), wait)).kind).toBe('success');
		// due at 5000, out at 5700 after its turn; the next due at 10700, out at 11400
		expect(polls.map((p) => p.at)).toEqual([5700, 11_400, 17_100]);
	});

	it('keeps at most the concurrency bound of polls in flight', async () => {
		const clock = createFakeClock(0);
		const ids = Array.from({ length: 7 }, (_, i) => `t${i}`);
		const { poller, peak } = scriptedPoller(clock, Object.fromEntries(ids.map((id) => [id, ['SUCCESS']])), { limit: 2 });
		await Promise.all(ids.map(async (id) => await poller.watch(queued(id), wait)));
		expect(peak()).toBe(2);
	});

	it('keeps polling through unknown and lower-case states', async () => {
		const clock = createFakeClock(0);
		const { poller, polls } = scriptedPoller(clock, { a: ['UNKNOWN', 'SUBMITTED', 'NOT_START', 'queued', 'in_progress 10%', 'SOMETHING_NEW', 'success'] });
		expect((await poller.watch(queued('a'), wait)).kind).toBe('success');
		expect(polls).toHaveLength(7);
	});

	it('ends at once on CANCELLED, EXPIRED and the other end states, without waiting for Max Wait', async () => {
		for (const status of ['CANCELLED', 'canceled', 'EXPIRED', 'error', 'TIMEOUT', 'Rejected']) {
			const clock = createFakeClock(0);
			const ended: PollAnswer = { task: { task_id: 'a', status, fail_reason: 'the upstream dropped the job' } };
			const { poller, polls } = scriptedPoller(clock, { a: ['IN_PROGRESS', ended] });
			expect(await poller.watch(queued('a'), wait)).toMatchObject({ kind: 'failure', record: { fail_reason: 'the upstream dropped the job' } });
			expect(polls).toHaveLength(2);
			expect(clock.now()).toBe(10_000);
		}
	});

	it('tells every poll how much of the task\'s wait is left, and ends at the wait end', async () => {
		const clock = createFakeClock(0);
		const { poller, polls, remaining } = scriptedPoller(clock, { a: ['IN_PROGRESS'] });
		const outcome = await poller.watch(queued('a'), { intervalMs: 5000, maxWaitMs: 15_000 });
		expect(outcome).toMatchObject({ kind: 'timeout', waitedMs: 15_000 });
		expect(polls.map((p) => p.at)).toEqual([5000, 10_000, 15_000]);
		const end = waitEndOf({ deadline: 15_000 });
		expect(remaining).toEqual([end - 5000, end - 10_000, end - 15_000]);
	});

	it('a poll that hangs until the wait end (an answer that drips) ends the wait there, with the last known status', async () => {
		const clock = createFakeClock(0);
		const polls: number[] = [];
		const poller = new TaskPoller({
			clock,
			queue: new CheckQueue(clock, { slots: 10 }),
			poll: async (taskId, remainingMs) => {
				polls.push(clock.now());
				if (polls.length === 1) return { task: { task_id: taskId, status: 'IN_PROGRESS', progress: '10%' } };
				// the transport gives up at the wait end: the clock has moved on by all that was left
				clock.advance(remainingMs);
				return { error: new GatewayError({ kind: 'timeout', headline: 'no complete answer' }), passing: true };
			},
		});
		const outcome = await poller.watch(queued('a'), { intervalMs: 5000, maxWaitMs: 60_000 });
		// waited from the submit until the wait end, where the last check gave up
		expect(outcome).toEqual({
			kind: 'timeout',
			record: { task_id: 'a', status: 'IN_PROGRESS', progress: '10%' },
			waitedMs: waitEndOf({ deadline: 60_000 }),
			lastCheckError: expect.objectContaining({ headline: 'no complete answer' }),
			failedPolls: 1,
		});
		expect(polls).toEqual([5000, 10_000]);
		expect(clock.now()).toBe(waitEndOf({ deadline: 60_000 }));
	});

	it('sends no poll once the task\'s wait is over, even when the tick waited for a free slot', async () => {
		const clock = createFakeClock(0);
		const polls: string[] = [];
		const poller = new TaskPoller({
			clock,
			// one slot, taken by a poll of "slow" that ends past the wait end of "a"
			queue: new CheckQueue(clock, { slots: 1 }),
			poll: async (taskId) => {
				polls.push(taskId);
				if (taskId === 'slow') clock.advance(20_000);
				return { task: { task_id: taskId, status: 'IN_PROGRESS' } };
			},
		});
		const [slow, a] = await Promise.all([poller.watch(queued('slow'), { intervalMs: 5000, maxWaitMs: 60_000 }), poller.watch(queued('a'), { intervalMs: 5000, maxWaitMs: 5000 })]);
		expect(a).toMatchObject({ kind: 'timeout', record: queued('a') });
		expect(polls.filter((id) => id === 'a')).toHaveLength(0);
		expect(slow.kind).toBe('timeout');
	});

	it('ends with the failure and its reason', async () => {
		const clock = createFakeClock(0);
		const failure: PollAnswer = { task: { task_id: 'a', status: 'FAILURE', progress: '100%', fail_reason: 'content policy' } };
		const { poller } = scriptedPoller(clock, { a: ['IN_PROGRESS', failure] });
		expect(await poller.watch(queued('a'), wait)).toEqual({ kind: 'failure', record: failure.task });
	});

	it('times out with the last status, after a last check at Max Wait', async () => {
		const clock = createFakeClock(0);
		const { poller, polls } = scriptedPoller(clock, { a: ['IN_PROGRESS 10%', 'IN_PROGRESS 20%', 'IN_PROGRESS 30%'] });
		const outcome = await poller.watch(queued('a'), { intervalMs: 5000, maxWaitMs: 12_000 });
		expect(outcome).toEqual({ kind: 'timeout', record: { task_id: 'a', status: 'IN_PROGRESS', progress: '30%' }, waitedMs: 12_000 });
		expect(polls.map((p) => p.at)).toEqual([5000, 10_000, 12_000]);
		expect(clock.now()).toBe(12_000);
	});

	it('counts Max Wait from the submit: a submit that took 3 s leaves 2 s of a 5 s wait, and the task is checked at its end', async () => {
		const clock = createFakeClock(0);
		const { poller, polls } = scriptedPoller(clock, { a: ['IN_PROGRESS'] });
		clock.advance(3000);
		const outcome = await poller.watch(queued('a'), { intervalMs: 5000, maxWaitMs: 5000, submittedAt: 0 });
		expect(outcome).toMatchObject({ kind: 'timeout', waitedMs: 5000 });
		expect(polls.map((p) => p.at)).toEqual([5000]);
	});

	it('checks a task submitted while others are being checked on its own interval, not after their checks', async () => {
		const clock = createFakeClock(0);
		const at: Record<string, number[]> = { slow: [], late: [] };
		const poller = new TaskPoller({
			clock,
			queue: new CheckQueue(clock, { slots: 10 }),
			poll: async (taskId) => {
				at[taskId].push(clock.now());
				if (taskId === 'slow' && at.slow.length === 1) {
					// the first check of "slow" takes 7 s
					await new Promise((resolve) => setTimeout(resolve, 50));
					clock.advance(7000);
				}
				return { task: { task_id: taskId, status: taskId === 'late' && at.late.length > 1 ? 'SUCCESS' : 'IN_PROGRESS' } };
			},
		});
		const slow = poller.watch(queued('slow'), { intervalMs: 5000, maxWaitMs: 12_000 });
		clock.advance(3000);
		const late = await poller.watch(queued('late'), { intervalMs: 5000, maxWaitMs: 60_000 });
		expect(late.kind).toBe('success');
		// due at 8 s, while the check of "slow" sent at 5 s is still on its way
		expect(at.late[0]).toBe(8000);
		await slow;
	});

	it('retries passing poll failures at the next tick', async () => {
		const clock = createFakeClock(0);
		const fail: PollAnswer = { error: new GatewayError({ kind: 'server', headline: 'HTTP 502', status: 502 }), passing: true };
		const { poller, polls } = scriptedPoller(clock, { a: [fail, 'IN_PROGRESS', fail, fail, 'SUCCESS'] });
		expect((await poller.watch(queued('a'), wait)).kind).toBe('success');
		expect(polls.map((p) => p.at)).toEqual([5000, 10_000, 15_000, 20_000, 25_000]);
	});

	it('gives up after two minutes of failing polls, quoting the last error', async () => {
		const clock = createFakeClock(0);
		const error = new Error('HTTP 503');
		const { poller, polls } = scriptedPoller(clock, { a: ['IN_PROGRESS 30%', { error, passing: true }] });
		const outcome = await poller.watch(queued('a'), wait);
		// failing since 10 s; fatal at the first poll 120 s later
		expect(outcome).toEqual({ kind: 'unreachable', record: { task_id: 'a', status: 'IN_PROGRESS', progress: '30%' }, error, failedPolls: 25 });
		expect(polls.at(-1)?.at).toBe(130_000);
	});

	it('gives up at once on a permanent poll failure, and on a poll that throws', async () => {
		const clock = createFakeClock(0);
		const { poller } = scriptedPoller(clock, { a: [{ error: new Error('HTTP 404'), passing: false }] });
		expect(await poller.watch(queued('a'), wait)).toMatchObject({ kind: 'unreachable', failedPolls: 1 });
		const throwing = new TaskPoller({
			clock,
			queue: new CheckQueue(clock, { slots: 1 }),
			poll: async () => {
				throw new Error('bug');
			},
		});
		expect(await throwing.watch(queued('b'), wait)).toMatchObject({ kind: 'unreachable', error: { message: 'bug' } });
	});

	it('stops at once on cancel: every wait ends and no poll is sent after it', async () => {
		const clock = createFakeClock(0);
		const controller = new AbortController();
		const { poller, polls } = scriptedPoller(clock, { a: ['IN_PROGRESS'], b: ['IN_PROGRESS'] }, { signal: controller.signal });
		// cancelled at the first sleep after the second round of polls
		clock.onSleep = () => {
			if (polls.length >= 4) controller.abort();
		};
		const outcomes = await Promise.all([poller.watch(queued('a'), wait), poller.watch(queued('b'), wait)]);
		expect(outcomes.map((o: TaskOutcome) => o.kind)).toEqual(['cancelled', 'cancelled']);
		expect(outcomes[0].record.status).toBe('IN_PROGRESS');
		expect(polls).toHaveLength(4);
		expect(clock.now()).toBe(10_000);
	});

	it('does not poll at all when the execution is already cancelled, nor after stop()', async () => {
		const clock = createFakeClock(0);
		const controller = new AbortController();
		controller.abort();
		const cancelled = scriptedPoller(clock, { a: ['SUCCESS'] }, { signal: controller.signal });
		expect(await cancelled.poller.watch(queued('a'), wait)).toEqual({ kind: 'cancelled', record: queued('a') });
		expect(cancelled.polls).toHaveLength(0);

		const { poller, polls } = scriptedPoller(clock, { a: ['IN_PROGRESS'] });
		const pending = poller.watch(queued('a'), wait);
		poller.stop();
		expect(await pending).toEqual({ kind: 'stopped', record: queued('a') });
		expect(await poller.watch(queued('b'), wait)).toEqual({ kind: 'stopped', record: queued('b') });
		expect(polls).toHaveLength(0);
	});

	it('sends no check still waiting for its turn once the run stops (the first failure stops the wait), and lets the one on its way end', async () => {
		// sleeps take 20 ms of real time: the failure's answer comes while b waits for its turn in the budget
		const clock = createFakeClock(0, 20);
		const { poller, polls } = scriptedPoller(clock, { a: ['FAILURE'], b: ['IN_PROGRESS'] }, { spacingMs: 1000 });
		const outcomes = await Promise.all([
			poller.watch(queued('a'), wait).then((outcome) => {
				poller.stop();
				return outcome;
			}),
			// due half a second after a: both go in a's tick, b one budget gap after a
			poller.watch(queued('b'), { ...wait, intervalMs: 5500 }),
		]);
		await poller.finished();
		expect(outcomes.map((outcome) => outcome.kind)).toEqual(['failure', 'stopped']);
		expect(polls.map((poll) => poll.taskId)).toEqual(['a']);
	});

	it('restarts its loop for a task registered after the others finished', async () => {
		const clock = createFakeClock(0);
		const { poller, polls } = scriptedPoller(clock, { a: ['SUCCESS'], b: ['SUCCESS'] });
		expect((await poller.watch(queued('a'), wait)).kind).toBe('success');
		expect((await poller.watch(queued('b'), wait)).kind).toBe('success');
		expect(polls.map((p) => p.at)).toEqual([5000, 10_000]);
	});
});

describe('TaskPoller: a slot freed by an answer', () => {
	/**
	 * One slot in the status lane. Task A's first check stalls 11 s and is answered 0.5 s before its
	 * wait ends (Max Wait 20 s, and a moment): its last check is due then. Task B's routine check has
	 * waited for the slot since 11 s. The slot freed by A's answer went at once to B (5 s on its way),
	 * and A's last check found no turn before its wait ended: a done video reported not seen done.
	 * Now an answer hands on the checks due at that moment before its slot goes to the next in line.
	 */
	it("goes to the best check of that moment: the answering task's own last check, before a routine one waiting", async () => {
		const clock = createVirtualClock(0);
		const queue = new CheckQueue(clock, { slots: 1 });
		const sent: string[] = [];
		const poller = new TaskPoller({
			clock,
			queue,
			poll: async (taskId, remainingMs): Promise<PollAnswer> => {
				const at = clock.now();
				sent.push(`${taskId}@${at}`);
				await clock.sleep(Math.min(taskId === 'A' && at < 15_000 ? 11_000 : 5000, remainingMs));
				const done = taskId === 'A' && at >= 15_000;
				return { task: { task_id: taskId, status: done ? 'SUCCESS' : 'IN_PROGRESS', ...(done ? { result_url: 'https://cdn/A.mp4' } : {}) } };
			},
		});
		let a: TaskOutcome | undefined;
		void poller.watch(queued('A'), { intervalMs: 10 * SECOND, maxWaitMs: 20 * SECOND, submittedAt: 0 }).then((outcome) => (a = outcome));
		void clock.sleep(1000).then(async () => await poller.watch(queued('B'), { intervalMs: 10 * SECOND, maxWaitMs: 100 * SECOND }));
		await clock.runUntil(() => a !== undefined, 30_000);
		poller.stop();
		let over = false;
		void poller.finished().then(() => (over = true));
		await clock.runUntil(() => over, 60_000);
		expect({ outcome: a?.kind, sent: sent.slice(0, 2) }).toEqual({ outcome: 'success', sent: ['A@10000', 'A@21000'] });
	});
});
