/**
 * Review of ed0ae51: a task id another item's submit was answered with but that was refused is
 * named in the run's error. Attacks: an id holding the key (Submit adds its line after masking),
 * the words for a failure that did get an answer, three items, Continue On Fail.
 */
import { startScriptedVideoGateway, runVideoNode, VIDEO_KEY } from './videoLoopback';
import type { ScriptedGateway } from './videoLoopback';

const SECRET = VIDEO_KEY.slice(3);
let gw: ScriptedGateway | undefined;
afterEach(async () => {
	await gw?.close();
	gw = undefined;
});

const refusal = { status: 400, body: { error: { message: 'bad prompt' } } };
const shown = (r: { error?: Error & { description?: string; context?: object } }) => `${r.error?.message} ${r.error?.description} ${JSON.stringify(r.error?.context ?? {})}`;

describe.each(['submit', 'generate'])('%s: a refused id that holds the key, on an item that fails after the first', (operation) => {
	it('is masked in the run error, and the rest of it is still there to find the task', async () => {
		const id = `a/${VIDEO_KEY}/tail_77`;
		gw = await startScriptedVideoGateway({ submit: (n) => (n === 1 ? refusal : { delayMs: 300, body: { task_id: id, status: 'queued' } }) });
		const result = await runVideoNode(gw, { operation, options: { concurrency: 2, maxWaitSeconds: 20 } }, { items: 2 });
		const text = shown(result);
		expect(text).toContain('bad prompt');
		expect(text).toContain('tail_77');
		for (let start = 0; start + 8 <= SECRET.length; start++) expect(text).not.toContain(SECRET.slice(start, start + 8));
	});
});

it('submit: another item whose submit was answered HTTP 500 is not said to have "got no answer"', async () => {
	gw = await startScriptedVideoGateway({ submit: (n) => (n === 1 ? { ...refusal, delayMs: 100 } : { status: 500, delayMs: 400, body: { error: { message: 'upstream broke' } } }) });
	const result = await runVideoNode(gw, { operation: 'submit', options: { concurrency: 2 } }, { items: 2 });
	expect(result.error?.description).toMatch(/item 1/);
	expect(result.error?.description).not.toMatch(/got no answer/);
});

describe.each(['submit', 'generate'])('%s, three items', (operation) => {
	it('the first failure is itself a refused id; a later refused id and a later good task are named too', async () => {
		gw = await startScriptedVideoGateway({
			submit: (n, _body, self) => (n === 1 ? { body: { task_id: '..', status: 'queued' } } : n === 2 ? { delayMs: 300, body: { task_id: '.', status: 'queued' } } : { ...self.createTask('task_good_9'), delayMs: 400 }),
			doneAfterMs: Infinity,
		});
		const result = await runVideoNode(gw, { operation, options: { concurrency: 3, maxWaitSeconds: 20 } }, { items: 3 });
		const text = shown(result);
		expect(result.error?.message).toContain('".."');
		expect(text).toMatch(/item 1: task "\."/);
		expect(text).toMatch(/task_good_9/);
	});

	it('with Continue On Fail each refused id stays in its error item', async () => {
		gw = await startScriptedVideoGateway({ submit: (n, _body, self) => (n === 1 ? { body: { task_id: '..', status: 'queued' } } : n === 2 ? { body: { task_id: 'x/y', status: 'queued' } } : self.createTask()) });
		const result = await runVideoNode(gw, { operation, options: { concurrency: 3, maxWaitSeconds: 20 } }, { items: 3, continueOnFail: true });
		expect(result.error).toBeUndefined();
		expect(JSON.stringify(result.output[0].json)).toContain('".."');
		expect(JSON.stringify(result.output[1].json)).toContain('x/y');
	});
});
