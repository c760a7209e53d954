/**
 * Gateway Video Generate in a real n8n with real 5-second poll intervals (the loopback gateway
 * finishes a task on its third poll): the waiting example, the submit / get status / download
 * example, many items in one wait loop with Continue On Fail, and a FAILURE that stops the run.
 */
import * as fs from 'fs';
import * as path from 'path';

import type { LoggedRequest } from '../gateway';
import type { E2eItem } from './harness';
import { binaryBuffer, describeWorkflow, gatewayRequests, loadE2eResults, loadE2eRun, nodeItems, nodeRun, workflowError, workflowResult } from './harness';

const results = () => loadE2eResults();
const sampleVideo = fs.readFileSync(path.join(__dirname, '../fixtures/sample-video.mp4'));
const SUBMIT = '/v1/video/generations';

/** The gateway's log for one task: its status polls, and requests for its file. */
const pollsOf = (taskId: unknown) => gatewayRequests((r) => r.server === 'api' && r.method === 'GET' && r.path === `${SUBMIT}/${String(taskId)}`);
const fileRequestsOf = (taskId: unknown) => gatewayRequests((r) => r.path.includes(String(taskId)) && (r.server === 'files' || r.path.startsWith('/v1/videos/')));
const submitWith = (prompt: string): LoggedRequest[] =>
	gatewayRequests((r) => r.server === 'api' && r.method === 'POST' && r.path === SUBMIT && r.rawBody.includes(JSON.stringify(prompt).slice(1, -1)));
const goodKey = () => `Bearer ${loadE2eRun().credentials.good.apiKey}`;

function expectVideo(item: E2eItem, property: string) {
	const taskId = String(item.json.task_id);
	expect(item.binary?.[property]).toMatchObject({ mimeType: 'video/mp4', fileName: `video-${taskId}.mp4`, fileExtension: 'mp4' });
	expect(binaryBuffer(item, property).equals(sampleVideo)).toBe(true);
}

describeWorkflow('mgwExVideo0001', 'example: one node waits and downloads the video', () => {
	const id = 'mgwExVideo0001';

	it('outputs the finished task and the MP4 in the chosen binary field', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		const [item] = nodeItems(results(), id, 'Generate Teaser');
		expect(item.json).toMatchObject({ task_id: expect.stringMatching(/^task_/), status: 'SUCCESS', progress: '100%', model: 'video-2-0-fast-260128' });
		expect(item.pairedItem).toEqual({ item: 0 });
		expectVideo(item, 'video');
		const [ready] = nodeItems(results(), id, 'Video Ready');
		expect(ready.json).toMatchObject({ product: 'a reusable glass water bottle', fileName: `video-${item.json.task_id}.mp4`, status: 'SUCCESS' });
	});

	it('polls on the real 5-second interval, first one interval after submit, three times, and not after', () => {
		const [item] = nodeItems(results(), id, 'Generate Teaser');
		const [submit] = submitWith('A 5-second product teaser for a reusable glass water bottle');
		expect(JSON.parse(submit.rawBody)).toMatchObject({ seconds: '5', size: '1280x720', model: 'video-2-0-fast-260128' });
		const polls = pollsOf(item.json.task_id);
		expect(polls).toHaveLength(3);
		// Measured from the submit, not from the check before: the k-th check comes no sooner than k
		// intervals after the submit (each is planned from when the one before went out, which may
		// have reached the gateway late under load, so gaps between checks may be shorter than 5 s).
		// A lower bound, so load on the machine cannot break it; "no sleep after the last poll" is
		// proven with a fake clock in the unit tests.
		polls.forEach((poll, k) => expect(poll.time - submit.time).toBeGreaterThanOrEqual((k + 1) * 5000 - 100));
		const [download] = fileRequestsOf(item.json.task_id);
		expect(download.time).toBeGreaterThanOrEqual(polls[polls.length - 1].time);
	});

	it('downloads from the file host without the key', () => {
		const [item] = nodeItems(results(), id, 'Generate Teaser');
		const files = fileRequestsOf(item.json.task_id);
		expect(files.map((r) => r.server)).toEqual(['files']);
		expect(files[0].headers.authorization).toBeUndefined();
	});
});

describeWorkflow('mgwExVideo0002', 'example: submit, wait and check, then download', () => {
	const id = 'mgwExVideo0002';

	it('submits at once, checks until SUCCESS, then downloads the video', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		const [submitted] = nodeItems(results(), id, 'Submit Video Task');
		expect(submitted.json).toEqual({ task_id: expect.stringMatching(/^task_/), status: 'QUEUED', progress: '0%', model: 'video-2-0-mini-260615' });
		const statusRun = nodeRun(results(), id, 'Get Task Status');
		const statuses = (statusRun.runs ?? [statusRun]).map((run) => run.items[0].json.status);
		expect(statuses).toEqual(['NOT_START', 'IN_PROGRESS', 'SUCCESS']);
		const [downloaded] = nodeItems(results(), id, 'Download Video');
		expect(downloaded.json).toMatchObject({ task_id: submitted.json.task_id, status: 'SUCCESS' });
		expectVideo(downloaded, 'data');
	});
});

describeWorkflow('mgwVideo0001', 'four items in one wait loop, Continue On Fail', () => {
	const id = 'mgwVideo0001';
	const items = () => nodeItems(results(), id, 'Generate Videos');

	it('keeps input order and pairing, and every item carries its task id and status', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		expect(items().map((item) => item.pairedItem)).toEqual([0, 1, 2, 3].map((item) => ({ item })));
		expect(items().map((item) => item.json.status)).toEqual(['SUCCESS', 'SUCCESS', 'FAILURE', 'IN_PROGRESS']);
		for (const item of items()) expect(item.json.task_id).toMatch(/^task_/);
		expect(new Set(items().map((item) => item.json.task_id)).size).toBe(4);
	});

	it('downloads both successes, sending the key only to the gateway\'s own origin', () => {
		const [foreign, sameOrigin] = items();
		expectVideo(foreign, 'clip');
		expectVideo(sameOrigin, 'clip');
		expect(fileRequestsOf(foreign.json.task_id).map((r) => [r.server, r.headers.authorization])).toEqual([['files', undefined]]);
		expect(sameOrigin.json.result_url).toMatch(/\/v1\/videos\/task_\w+\/content$/);
		expect(fileRequestsOf(sameOrigin.json.task_id).map((r) => [r.server, r.headers.authorization])).toEqual([['api', goodKey()]]);
	});

	it('turns the failure and the timeout into items that quote the task id', () => {
		const failed = items()[2].json;
		expect(failed.error).toBe(`Video task ${failed.task_id} failed: "content policy violation: the prompt was rejected by the safety system"`);
		expect(failed.errorDescription).toMatch(/usually refunded automatically/);
		const timedOut = items()[3].json;
		expect(timedOut).toMatchObject({ status: 'IN_PROGRESS', progress: '40%' });
		expect(timedOut.error).toBe(`Video task ${timedOut.task_id} is still running after 20 s (last status IN_PROGRESS, progress 40%), so the node stopped waiting`);
	});

	it('submits all four, then polls them together: about as long as one task, not four', () => {
		const submits = gatewayRequests((r) => r.method === 'POST' && r.path === SUBMIT && JSON.parse(r.rawBody).size === '640x360');
		expect(submits.map((r) => JSON.parse(r.rawBody).seconds)).toEqual(['4', '4', '4', '4']);
		const [first, second, third, fourth] = items().map((item) => pollsOf(item.json.task_id));
		expect([first.length, second.length, third.length, fourth.length]).toEqual([3, 3, 3, 4]);
		// one loop: every task's poll of a round comes before any task's poll of the next round
		// (ordering, not timing, so a loaded machine cannot make it flaky)
		const all = [first, second, third, fourth];
		for (let round = 0; round < 2; round++) {
			const latestOfRound = Math.max(...all.map((polls) => polls[round].time));
			const earliestOfNext = Math.min(...all.map((polls) => polls[round + 1].time));
			expect(latestOfRound).toBeLessThanOrEqual(earliestOfNext);
		}
	});
});

describeWorkflow('mgwVideo0002', 'a FAILURE stops the workflow', () => {
	it('fails with the gateway\'s reason, the task id, and that the charge is usually refunded', () => {
		const error = workflowError(results(), 'mgwVideo0002');
		expect(error?.node).toBe('Generate Video');
		expect(error?.message).toMatch(/^Video task task_\w+ failed: "content policy violation: .*"$/);
		expect(error?.description).toContain('usually refunded automatically');
		expect(error?.description).toContain('generate again');
	});
});
