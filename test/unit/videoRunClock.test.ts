/**
 * One clock in the video node: the run's (VideoRuntime.clock). Max Wait, the checks and what is
 * left of a task's wait are measured on it; a request takes what is left as a duration and the
 * transport alone turns it into its own deadline (itemDeadline). A second clock read anywhere in
 * the node would measure part of a task's wait on another time line (a test's virtual clock and
 * the real one drift apart by the whole run).
 */
import * as fs from 'fs';
import * as path from 'path';

const VIDEO_NODE = path.join(__dirname, '../../nodes/GatewayVideoGenerate');

describe('the video node reads time from its one clock', () => {
	const sources = fs.readdirSync(VIDEO_NODE).filter((file) => file.endsWith('.ts'));

	it('reads the video node\'s sources (so the check below means something)', () => {
		expect(sources).toEqual(expect.arrayContaining(['generate.ts', 'poller.ts', 'taskApi.ts', 'submit.ts']));
	});

	it.each(['Date.now(', 'new Date(', 'performance.now('])('no file of it calls %s', (call) => {
		const calling = sources.filter((file) => fs.readFileSync(path.join(VIDEO_NODE, file), 'utf8').includes(call));
		expect(calling).toEqual([]);
	});
});
