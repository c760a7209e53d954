/**
 * The hostile gateway (test/hostile) in a real n8n: keys printed by the gateway, redirects to a
 * sibling host, paid requests after an answer that leaves open whether the gateway acted, waits
 * that never end, errors inside 200 answers, links that are not files. And, after the whole
 * batch, the key and the custom header value looked for where n8n keeps things: its log, its
 * database and the stored run data.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { E2E_N8N_MAJOR, describeWorkflow, loadE2eResults, loadE2eRun, nodeItems, nodeRun, secretForms, workflowError, workflowResult } from './harness';
import type { E2eError } from './harness';

const results = () => loadE2eResults();
const hostile = () => loadE2eRun().hostile;
const requests = (filter: (request: ReturnType<typeof hostile>['requests'][number]) => boolean) => hostile().requests.filter(filter);
const byPrompt = (text: string) => requests((request) => request.body.includes(text));

/** The error as n8n stored it, whole, for looking for secrets. */
const stored = (error: E2eError | undefined) => JSON.stringify(error ?? null);

function expectMasked(text: string) {
	const { apiKey, headerSecret } = hostile();
	for (const form of secretForms(apiKey, headerSecret)) expect(text).not.toContain(form);
}

describe.each([
	['mgwHostile0001', 'a 200 chat answer quoting the key', /The chat request failed: the gateway refused the API key: "invalid token Bearer \*\*\*"/],
	['mgwHostile0002', 'a messages stream error quoting the key', /The messages request failed: .*Authorization: Bearer \*\*\*/],
	['mgwHostile0003', 'streamed tool input that is not JSON, quoting the key', /tool input that is not JSON: ".*Authorization=Bearer \*\*\*/],
	['mgwHostile0004', 'a 401 quoting the key without sk-', /无效的令牌 token=\*\*\*/],
	['mgwHostile0006', 'a 200 video submit answer quoting the key', /refused the API key: "invalid token Bearer \*\*\*"/],
])('%s: %s', (id, _title, message) => {
	describeWorkflow(id, 'the workflow fails with the gateway quoted, masked', () => {
		it('fails, quoting the gateway with the key masked', () => {
			expect(workflowResult(results(), id).status).toBe('error');
			expect(workflowError(results(), id)?.message).toMatch(message);
			expectMasked(stored(workflowError(results(), id)));
		});
	});
});

describeWorkflow('mgwHostile0005', 'a video fail_reason quoting the key', () => {
	it('fails with the reason, masked, and the task id', () => {
		const error = workflowError(results(), 'mgwHostile0005');
		expect(error?.message).toMatch(/task_fail-reason-key_\d+/);
		expect(error?.message).toMatch(/Authorization: Bearer \*\*\*/);
		expectMasked(stored(error));
	});
});

describeWorkflow('mgwHostile0007', 'a chat POST redirected to a sibling host', () => {
	it('is not sent on: the error names where the gateway redirected it', () => {
		expect(workflowError(results(), 'mgwHostile0007')?.message).toMatch(/redirected the request to http:\/\/files\.gw\.example\.test:\d+\/landing\/v1\/chat\/completions/);
		expect(byPrompt('[hostile:redirect-sibling-307]').filter((request) => request.origin !== 'gateway')).toEqual([]);
	});
});

describeWorkflow('mgwHostile0008', 'image and video links redirected to a sibling host', () => {
	it('downloads both without the key or the custom header on the sibling host', () => {
		expect(workflowResult(results(), 'mgwHostile0008').status).toBe('success');
		expect(nodeItems(results(), 'mgwHostile0008', 'Image')[0].binary?.data.mimeType).toBe('image/png');
		expect(nodeItems(results(), 'mgwHostile0008', 'Video')[0].binary?.data.mimeType).toBe('video/mp4');
		const landed = requests((request) => request.origin === 'sibling' && request.path.startsWith('/landing/files/redirect-sibling'));
		expect(landed.map((request) => request.path.split('/')[3])).toEqual(expect.arrayContaining(['redirect-sibling-302', 'redirect-sibling-307']));
		for (const request of landed) {
			expect(request.headers.authorization).toBeUndefined();
			expect(request.headers['x-relay-token']).toBeUndefined();
		}
	});

	it('sent the custom header to the gateway itself', () => {
		const own = requests((request) => request.origin === 'gateway' && request.body.includes('[hostile:redirect-sibling-302]'));
		expect(own[0].headers['x-relay-token']).toBe(hostile().headerSecret);
	});
});

describeWorkflow('mgwHostile0009', 'one of four image links answers 403', () => {
	it('keeps the three good images and makes an error item of the bad one', () => {
		const items = nodeItems(results(), 'mgwHostile0009', 'Image');
		expect(items.map((item) => item.json.index)).toEqual([0, 1, 2, 3]);
		expect(items.filter((item) => item.binary?.data?.mimeType === 'image/png')).toHaveLength(3);
		expect(items[1].json.error).toMatch(/link has expired or is gone.*HTTP 403/);
		expect(items[1].json.url).toMatch(/\/files\/image-one-403\//);
	});
});

describeWorkflow('mgwHostile0010', 'a plant created, then a 502', () => {
	it('is sent once and says it may have gone through', () => {
		expect(byPrompt('Fern [hostile:acted-then-502]').filter((request) => request.method === 'POST')).toHaveLength(1);
		const error = workflowError(results(), 'mgwHostile0010');
		expect(error?.message).toMatch(/HTTP 502/);
		expect(error?.description).toMatch(/may have gone through even so: it was not sent again/);
	});
});

describeWorkflow('mgwHostile0011', 'an image generated, then the connection dropped', () => {
	it('is sent once and says it may have gone through', () => {
		expect(byPrompt('[hostile:acted-then-reset]').filter((request) => request.method === 'POST')).toHaveLength(1);
		expect(workflowError(results(), 'mgwHostile0011')?.description).toMatch(/may have gone through even so/);
	});
});

describeWorkflow('mgwHostile0012', 'a chat stream of keep-alive comments', () => {
	it('ends at the Timeout option (3 s), not when the stream ends (never)', () => {
		expect(workflowError(results(), 'mgwHostile0012')?.message).toMatch(/no complete answer within 3 s/);
		expect(nodeRun(results(), 'mgwHostile0012', 'Chat').executionTimeMs).toBeLessThan(15_000);
	});
});

describeWorkflow('mgwHostile0013', 'a video status that drips spaces', () => {
	it('ends at Max Wait (12 s) with the task id and last status', () => {
		const error = workflowError(results(), 'mgwHostile0013');
		expect(error?.message).toMatch(/task_drip-status_\d+/);
		expect(nodeRun(results(), 'mgwHostile0013', 'Video').executionTimeMs).toBeLessThan(30_000);
	});
});

describeWorkflow('mgwHostile0014', 'errors in 200 answers', () => {
	it('turns every one into an error item, none into an empty answer', () => {
		const items = nodeItems(results(), 'mgwHostile0014', 'Chat');
		expect(items).toHaveLength(8);
		for (const item of items) {
			expect(item.json.error).toMatch(/^The chat request failed: /);
			expect(item.json.text).toBeUndefined();
		}
	});
});

describeWorkflow('mgwHostile0015', 'a plant name from an object expression', () => {
	it('is refused before any request, naming the field and the item', () => {
		expect(workflowError(results(), 'mgwHostile0015')?.message).toBe('"Name" must be text, but the expression gave an object (item 0)');
		expect(requests((request) => request.path === '/plants' && request.body.includes('"id":40'))).toEqual([]);
	});
});

describeWorkflow('mgwHostile0016', 'image links that are not images', () => {
	it('refuses each, quoting what the link sent', () => {
		const errors = nodeItems(results(), 'mgwHostile0016', 'Image').map((item) => String(item.json.error));
		expect(errors[0]).toMatch(/answered with application\/json instead of an image: "\{"error":"link expired"\}"/);
		expect(errors[1]).toMatch(/answered with text\/plain instead of an image: "Forbidden"/);
		expect(errors[2]).toMatch(/answered with text \(served as image\/png\) instead of an image: "Forbidden"/);
		expect(errors[3]).toMatch(/answered with text\/html instead of an image/);
	});
});

describeWorkflow('mgwHostile0017', 'thirty videos, one fails', () => {
	it('names every one of the other 29 paid tasks in the error', () => {
		const error = workflowError(results(), 'mgwHostile0017');
		const created = requests((request) => request.method === 'POST' && request.body.includes('"clip '));
		expect(created).toHaveLength(30);
		const text = `${error?.message} ${error?.description}`;
		expect(text).toMatch(/task_video-fail_\d+/);
		const ids = text.match(/task_\d+/g) ?? [];
		expect(new Set(ids).size).toBe(29);
		expect(text).not.toMatch(/and \d+ more/);
	});
});

describeWorkflow('mgwHostile0018', 'video tasks that end as cancelled, expired or error', () => {
	it('ends each wait at once as a failure, not at Max Wait', () => {
		const items = nodeItems(results(), 'mgwHostile0018', 'Video');
		expect(items.map((item) => item.json.status)).toEqual(['CANCELLED', 'CANCELED', 'EXPIRED', 'ERROR']);
		for (const item of items) expect(item.json.error).toMatch(/task_state-/);
		expect(nodeRun(results(), 'mgwHostile0018', 'Video').executionTimeMs).toBeLessThan(60_000);
	});
});

describeWorkflow('mgwHostile0019', 'a video link that is text served as video', () => {
	it('is refused, quoting it, with the task id', () => {
		const [item] = nodeItems(results(), 'mgwHostile0019', 'Video');
		expect(item.json.error).toMatch(/instead of a video: "Forbidden"/);
		expect(item.json.task_id).toMatch(/^task_link-tiny-text-as-mp4_\d+$/);
		expect(item.binary).toBeUndefined();
	});
});

// n8n 1.x has no AI node SDK: there the Gateway Chat Model stops the AI Agent (and so the run)
// with its "needs n8n 2.16" message, after the other nodes have run.
const ON_1X = E2E_N8N_MAJOR < 2;
const ECHO_NODES = ['Chat', 'Chat Streamed', 'Messages Streamed', 'Image', 'Plant', ...(ON_1X ? [] : ['AI Agent'])];

describeWorkflow('mgwHostile0020', 'success answers quoting the key and the relay token', () => {
	it.each(ECHO_NODES)('%s succeeds; what it returns quotes the gateway with every secret masked', (name) => {
		if (!ON_1X) expect(workflowResult(results(), 'mgwHostile0020').status).toBe('success');
		const items = nodeItems(results(), 'mgwHostile0020', name);
		expect(items).toHaveLength(1);
		const text = JSON.stringify(items);
		expectMasked(text);
		expect(text).toContain('you sent Bearer *** (base64 ***) and relay token ***');
	});

	it('the gateway really quoted the secrets (so the check above means something)', () => {
		expect(byPrompt('[hostile:echo-secrets-200]').length).toBeGreaterThanOrEqual(ECHO_NODES.length);
	});

	if (ON_1X) {
		it('on n8n 1.x the AI Agent stops with the Chat Model saying it needs n8n 2.16', () => {
			expect(workflowResult(results(), 'mgwHostile0020').status).toBe('error');
			expect(JSON.stringify(workflowError(results(), 'mgwHostile0020'))).toMatch(/2\.16/);
		});
	}
});

describeWorkflow('mgwHostile0021', 'an image edit (multipart) answered by a 401 quoting the key', () => {
	it('fails, quoting the gateway with the key masked', () => {
		expect(workflowError(results(), 'mgwHostile0021')?.message).toMatch(/refused the API key.*无效的令牌 token=\*\*\*/);
		expectMasked(stored(workflowError(results(), 'mgwHostile0021')));
		expect(requests((request) => request.path === '/v1/images/edits')).toHaveLength(1);
	});
});

describeWorkflow('mgwHostile0022', "the key's balance routes answering 401 quoting the key", () => {
	it('fails, quoting the gateway with the key masked', () => {
		expect(workflowError(results(), 'mgwHostile0022')?.message).toMatch(/refused the API key.*\*\*\*/);
		expectMasked(stored(workflowError(results(), 'mgwHostile0022')));
	});
});

describeWorkflow('mgwHostile0023', 'streamed answers that quote the key, then stall', () => {
	it.each(['Chat', 'Messages'])('%s ends at its Idle Timeout, the partial answer masked', (name) => {
		const items = nodeItems(results(), 'mgwHostile0023', name);
		expect(items).toHaveLength(1);
		const text = JSON.stringify(items);
		expect(text).toMatch(/sent nothing for 3 s/);
		expectMasked(text);
	});

	it('the gateway really quoted the secrets to both (so the check above means something)', () => {
		expect(byPrompt('[hostile:echo-then-stall]').length).toBe(2);
	});
});

// Only when the hostile workflows ran (E2E_ONLY may leave them out).
describeWorkflow('mgwHostile0001', 'after the whole batch: the keys are nowhere n8n keeps things', () => {
	/** Every file of the n8n user folder: its log, its SQLite database (and journal), stored run data. */
	function files(dir: string): string[] {
		return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
			const full = path.join(dir, entry.name);
			if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : files(full);
			return [full];
		});
	}

	it('finds neither the hostile key, its part after sk- (nor any 8 characters of it), its base64, nor the custom header value in the log, the event log, the database or the run data', () => {
		const run = loadE2eRun();
		expect(run.userFolder).toBeDefined();
		const all = files(run.userFolder as string);
		const names = all.map((file) => path.basename(file));
		expect(names).toEqual(expect.arrayContaining(['n8n.log', 'database.sqlite']));
		// n8n's event log (`n8nEventLog*.log`: `n8n.ai.llm.generated` holds what a chat model answered) is
		// looked through too where n8n writes one (`n8n start`; see chatModel.test.ts for a run that does).
		const secrets = [...secretForms(run.hostile.apiKey, run.hostile.headerSecret), run.credentials.bad.apiKey];
		const leaks = all.flatMap((file) => {
			const bytes = fs.readFileSync(file);
			return secrets.filter((secret) => bytes.includes(secret)).map((secret) => `${path.relative(run.userFolder as string, file)} holds ${secret.slice(0, 10)}…`);
		});
		expect(leaks).toEqual([]);
	});

	it('the hostile key really reached the gateway (so the check above means something)', () => {
		expect(hostile().requests.some((request) => request.headers.authorization === `Bearer ${hostile().apiKey}`)).toBe(true);
	});
});

describeWorkflow('mgwDbMode0001', "a 600 MiB video in n8n's database binary data mode (n8n 2.x)", () => {
	it("names n8n's own 512 MB limit, with the task id, instead of a broken connection", () => {
		const [item] = nodeItems(results(), 'mgwDbMode0001', 'Video');
		expect(item.json.task_id).toMatch(/^task_big-video-600_\d+$/);
		expect(item.json.kind).toBe('storage');
		expect(item.json.error).toMatch(/n8n could not store the file/);
		expect(item.json.errorDescription).toMatch(/N8N_DEFAULT_BINARY_DATA_MODE=filesystem/);
		expect(item.binary).toBeUndefined();
	});
});
