/**
 * Many videos at the limit (issue 19), over real HTTP and in real time, scaled down: submits and
 * status checks in lanes of their own, so a check is never held back by queued submits nor by
 * their 429s; every task is checked on its interval from its own submit and never reported still
 * running without a check in its last interval; and a first frame is read when its item's submit
 * goes out, so a run holds about Concurrency frames at once, not one per item.
 * Time here is real, so every bound on it has the margin of a busy machine (BUSY_MARGIN_MS), far
 * below what the bounded fault would take (checks held behind submits, slots that starve the budget).
 */
import type { INodeExecutionData } from 'n8n-workflow';

import type { CheckQueue } from '../../nodes/GatewayVideoGenerate/checkSchedule';
import type { TurnQueue } from '../../nodes/shared/wire/pace';
import { realClock } from '../../nodes/shared/wire/timing';
import { BUSY_MARGIN_MS } from '../helpers/busy';
import { startScriptedVideoGateway, runVideoNode } from './videoLoopback';
import type { ScriptedGateway, VideoRun } from './videoLoopback';

let gw: ScriptedGateway | undefined;
afterEach(async () => {
	await gw?.close();
	gw = undefined;
});

const INTERVAL_MS = 5000;

/** Items reported "still running" (a timeout) although their task was done when they were last checked. */
function stillRunning(result: VideoRun): INodeExecutionData[] {
	return result.output.filter((item) => /still running/.test(String(item.json.error ?? '')));
}

/** Every task checked at least once per interval after its submit, the last check in its last interval (each with a busy machine's margin). */
function uncheckedIntervals(g: ScriptedGateway, maxWaitMs: number): string[] {
	const problems: string[] = [];
	for (const task of g.tasks.values()) {
		const checks = g.checks(task.id).map((check) => check.at);
		if (checks.length === 0) problems.push(`${task.id}: never checked`);
		let last = task.submittedAt;
		for (const at of checks) {
			// a gap over one interval (and a busy machine's margin for the tick and the loopback)
			if (at - last > INTERVAL_MS + BUSY_MARGIN_MS) problems.push(`${task.id}: ${at - last} ms without a check`);
			last = at;
		}
		const done = checks.some((at) => at >= task.doneAt);
		if (!done && last < task.submittedAt + maxWaitMs - INTERVAL_MS - BUSY_MARGIN_MS) problems.push(`${task.id}: last check ${last - task.submittedAt} ms after the submit`);
	}
	return problems;
}

describe('status checks in a lane of their own', () => {
	it('200 videos, submits taking 0.5 s, done 1 s after submit, Max Wait 8 s: every task is checked while later submits still go out, none reported still running', async () => {
		const g = (gw = await startScriptedVideoGateway({ submitLatencyMs: 500, doneAfterMs: 1000 }));
		// Max Wait one interval and a busy machine's margin: the check at 5 s, late on a busy machine, still finds the task done
		// (at Max Wait 5 s it had 1.5 s of real time to be answered: an exact figure)
		const maxWaitMs = INTERVAL_MS + BUSY_MARGIN_MS;
		const result = await runVideoNode(
			g,
			{ options: { maxWaitSeconds: maxWaitMs / 1000, pollIntervalSeconds: 5, statusChecksPerSecond: 100, concurrency: 10, downloadVideo: false } },
			{ items: 200, clock: realClock, continueOnFail: true },
		);
		expect(result.error).toBeUndefined();
		expect(stillRunning(result)).toEqual([]);
		expect(result.output.every((item) => item.json.status === 'SUCCESS')).toBe(true);
		expect(uncheckedIntervals(g, maxWaitMs)).toEqual([]);
		// the first check went out while submits were still going out
		const lastSubmit = Math.max(...g.submits().map((r) => r.at));
		expect(Math.min(...g.checks().map((r) => r.at))).toBeLessThan(lastSubmit);
		// the whole run: the submit phase plus one interval (every task is done at its first check), and a busy machine's margin
		const firstSubmit = Math.min(...g.submits().map((r) => r.at));
		expect(result.ms).toBeLessThan(lastSubmit - firstSubmit + INTERVAL_MS + BUSY_MARGIN_MS);
	}, 60_000);

	it('429s on one submit in seven and every second check (Retry-After 1 s and 3 s): the checks still get their turn', async () => {
		const g = (gw = await startScriptedVideoGateway({
			// submits of 1 s: the submit phase (about 7 s) outlasts the first Poll Interval
			submitLatencyMs: 1000,
			doneAfterMs: 1000,
			submit: (n, _body, self) => (n % 7 === 0 ? { status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'rate limited' } } } : self.createTask()),
			status: (taskId, n, self) => (n % 2 === 0 ? { status: 429, headers: { 'retry-after': '3' }, body: { error: { message: 'rate limited' } } } : self.taskState(taskId)),
		}));
		const result = await runVideoNode(
			g,
			{ options: { maxWaitSeconds: 15, pollIntervalSeconds: 5, statusChecksPerSecond: 100, concurrency: 10, downloadVideo: false } },
			{ items: 60, clock: realClock, continueOnFail: true },
		);
		expect(result.error).toBeUndefined();
		expect(g.tasks.size).toBe(60);
		// checks went out while submits were still going out, and every task was checked
		const lastSubmit = Math.max(...g.submits().map((r) => r.at));
		expect(g.checks().filter((r) => r.at < lastSubmit).length).toBeGreaterThan(0);
		expect([...g.tasks.keys()].filter((id) => g.checks(id).length === 0)).toEqual([]);
		expect(uncheckedIntervals(g, 15_000)).toEqual([]);
		// a task reported still running never had a check answered after it was done: every one got a 429
		for (const item of result.output.filter((entry) => entry.json.status !== 'SUCCESS')) {
			const task = g.tasks.get(String(item.json.task_id))!;
			expect(g.checks(task.id).filter((check) => check.at >= task.doneAt && check.status === 200)).toEqual([]);
		}
		expect(result.output.filter((item) => item.json.status === 'SUCCESS').length).toBeGreaterThan(40);
	}, 60_000);
});

/** A status answer's latency in [low, high] ms, drawn from the check's number (the same every run). */
const drawnMs = (n: number, low: number, high: number) => low + ((n * 7919) % (high - low + 1));

/**
 * The gaps the gateway saw for each task: from its submit's answer to its first check, and between
 * its checks, up to the first one that found it done. Returns those longer than `limitMs`.
 */
function longGaps(g: ScriptedGateway, submitLatencyMs: number, limitMs: number): string[] {
	const long: string[] = [];
	for (const task of g.tasks.values()) {
		let last = task.submittedAt + submitLatencyMs;
		for (const check of g.checks(task.id)) {
			if (check.at - last > limitMs) long.push(`${task.id}: ${check.at - last} ms`);
			last = check.at;
			if (check.at >= task.doneAt && check.status === 200) break;
		}
	}
	return long;
}

describe('status checks spend their budget (issue 19)', () => {
	it('60 videos, status answers taking 1–3 s, Concurrency 10, 10 checks/s, Poll Interval 5 s: no task waits longer than the Poll Interval between checks', async () => {
		// Submits take 3 s, 10 at a time: 3.3 new tasks a second, each checked at 5 s (running) and
		// 10 s (done) after its submit: about 6.7 checks/s, within the budget of 10/s. Ten checks in
		// flight that take 2 s on average can send only 5 a second: the checks would queue.
		const submitLatencyMs = 3000;
		const g = (gw = await startScriptedVideoGateway({
			submitLatencyMs,
			doneAfterMs: submitLatencyMs + 7000,
			status: (taskId, n, self) => ({ ...self.taskState(taskId), delayMs: drawnMs(n, 1000, 3000) }),
		}));
		let lanes: { checks: CheckQueue } | undefined;
		const result = await runVideoNode(
			g,
			{ options: { maxWaitSeconds: 30, pollIntervalSeconds: 5, statusChecksPerSecond: 10, concurrency: 10, downloadVideo: false } },
			{ items: 60, clock: realClock, continueOnFail: true, runtime: { onLanes: (l) => (lanes = l) } },
		);
		expect(result.error).toBeUndefined();
		expect(result.output.filter((item) => item.json.status !== 'SUCCESS')).toEqual([]);
		// every gap within the Poll Interval, and a busy machine's margin for its timers
		expect(longGaps(g, submitLatencyMs, INTERVAL_MS + BUSY_MARGIN_MS)).toEqual([]);
		// the budget holds: no second of the run saw more than 10 checks (and one of slack for the boundary)
		const perSecond = new Map<number, number>();
		for (const check of g.checks()) perSecond.set(Math.floor(check.at / 1000), (perSecond.get(Math.floor(check.at / 1000)) ?? 0) + 1);
		expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(11);
		// more than Concurrency checks were waiting for their answer at once
		expect(lanes?.checks.peak).toBeGreaterThan(10);
	}, 90_000);
});

describe('a refused submit waits alone (issue 19)', () => {
	it('70 videos, submits taking 1–3 s, one in seven answered 429 with Retry-After 1 s / 3 s, Concurrency 10: the submits take about as long as if each refused one waited in its own slot', async () => {
		let refusals = 0;
		const slotMs: number[] = [];
		const g = (gw = await startScriptedVideoGateway({
			doneAfterMs: 0,
			submit: (n, _body, self) => {
				if (n % 7 === 0) {
					const retryAfter = refusals++ % 2 === 0 ? 1 : 3;
					slotMs.push(retryAfter * 1000);
					return { status: 429, headers: { 'retry-after': String(retryAfter) }, body: { error: { message: 'rate limited' } } };
				}
				const delayMs = drawnMs(n, 1000, 3000);
				slotMs.push(delayMs);
				return { ...self.createTask(), delayMs };
			},
		}));
		const result = await runVideoNode(
			g,
			{ options: { maxWaitSeconds: 120, pollIntervalSeconds: 5, statusChecksPerSecond: 10, concurrency: 10, downloadVideo: false } },
			{ items: 70, clock: realClock, continueOnFail: true },
		);
		expect(result.error).toBeUndefined();
		expect(result.output.filter((item) => item.json.status !== 'SUCCESS')).toEqual([]);
		expect(refusals).toBeGreaterThanOrEqual(10);
		// Each submit held its slot for its answer, each refused one for its Retry-After: spread over
		// 10 slots that is the submit phase at best (the slowest answer at the end added). Holding
		// every submit for each Retry-After took about twice as long.
		const submits = g.submits().map((r) => r.at);
		const phaseMs = Math.max(...[...g.tasks.values()].map((task) => task.submittedAt)) + 3000 - Math.min(...submits);
		const idealMs = slotMs.reduce((sum, ms) => sum + ms, 0) / 10 + 3000;
		expect(phaseMs).toBeLessThanOrEqual(1.25 * idealMs + BUSY_MARGIN_MS);
	}, 90_000);
});

describe('first frames are read when their submit goes out', () => {
	it('120 items with a frame each, Concurrency 4: at most 4 frames are held at once, and a missing field is refused before any request', async () => {
		let held = 0;
		let peakHeld = 0;
		const g = (gw = await startScriptedVideoGateway({
			submitLatencyMs: 30,
			doneAfterMs: 0,
			// the frame's bytes reached the gateway: the node lets go of them with the body
			submit: (_n, _body, self) => {
				held--;
				return self.createTask();
			},
		}));
		const png = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), Buffer.alloc(200_000, 7)]);
		let lanes: { submits: TurnQueue } | undefined;
		const items = Array.from({ length: 120 }, (_, i) => ({ json: { i }, binary: { frame: { data: '', mimeType: 'image/png' } } })) as unknown as INodeExecutionData[];
		const result = await runVideoNode(g, { options: { imageBinaryProperty: 'frame', concurrency: 4, downloadVideo: false } }, {
			items,
			extend: (ctx) => {
				Object.assign(ctx.helpers, {
					assertBinaryData: () => undefined,
					getBinaryDataBuffer: async () => {
						held++;
						peakHeld = Math.max(peakHeld, held);
						return Buffer.from(png);
					},
				});
			},
			runtime: { onLanes: (l) => (lanes = l) },
		});
		expect(result.error).toBeUndefined();
		expect(result.output).toHaveLength(120);
		expect(JSON.parse(g.submits()[0].body).image).toMatch(/^data:image\/png;base64,/);
		expect(peakHeld).toBeLessThanOrEqual(4);
		expect(lanes?.submits.peak).toBeLessThanOrEqual(4);

		const before = g.requests.length;
		const missing = await runVideoNode(g, { options: { imageBinaryProperty: 'nope' } }, { items: [{ json: {} }] });
		expect(missing.error?.message).toContain('"Image From Binary Field"');
		// a frame whose recorded size is too big: refused before any request of the run, without reading it
		let reads = 0;
		const big = [{ json: {}, binary: { frame: { data: '', mimeType: 'image/png' } } }, { json: {}, binary: { frame: { data: '', mimeType: 'image/png', bytes: 12 * 1024 * 1024 } } }] as unknown as INodeExecutionData[];
		const tooBig = await runVideoNode(g, { options: { imageBinaryProperty: 'frame' } }, {
			items: big,
			extend: (ctx) => Object.assign(ctx.helpers, { assertBinaryData: () => undefined, getBinaryDataBuffer: async () => (reads++, Buffer.from(png)) }),
		});
		expect(tooBig.error?.message).toBe('"Image From Binary Field" field "frame" is an image of 12.0 MB; at most 10.0 MB (item 1)');
		expect(reads).toBe(0);
		expect(g.requests.length).toBe(before);
	});
});
