/**
 * A chat item's trip from its parameters to its output item stays short (issue 27): its parameters
 * are read once into a typed request, its attachments planned once, and the send uses the plan.
 * Counted by test/helpers/chatTrip.js (its header says how) in a child process of its own, for
 * Gateway Chat and Gateway Messages with one image attachment, streamed and not.
 */
import { execFile } from 'child_process';
import * as path from 'path';

interface Count {
	files: string[];
	calls: number;
	returns: number;
	path: string[];
}

interface Run {
	format: string;
	mode: string;
	trip: Count;
	all: Count;
}

let runs: Run[] = [];

// One child for the four runs; the limit guards against a hang on a busy machine, it proves nothing.
beforeAll(async () => {
	const script = path.join(__dirname, '../helpers/chatTrip.js');
	runs = await new Promise<Run[]>((resolve, reject) => {
		execFile(process.execPath, [script], { timeout: 170_000 }, (error, stdout, stderr) => {
			if (error) reject(new Error(`${error.message}\n${stderr}`));
			else resolve(stdout.trim().split('\n').map((line) => JSON.parse(line) as Run));
		});
	});
}, 180_000);

describe('the trip of a chat item with one image attachment', () => {
	it.each([
		['chat', 'plain'],
		['chat', 'stream'],
		['messages', 'plain'],
		['messages', 'stream'],
	])('%s, %s: through at most 6 files, with at most 3 returns into a file it had left', (format, mode) => {
		const run = runs.find((entry) => entry.format === format && entry.mode === mode);
		expect(run).toBeDefined();
		const { trip } = run as Run;
		// The path in the failure message says where the trip went.
		expect({ files: trip.files.length <= 6, returns: trip.returns <= 3, path: trip.path }).toEqual({ files: true, returns: true, path: trip.path });
		// Parameters, attachments and the call, each in one place: the stages a newcomer looks for.
		expect(trip.files).toEqual(expect.arrayContaining([expect.stringMatching(/request\.ts$/), 'shared/chat/chatInput.ts', 'shared/files/attachments.ts', 'shared/chat/chatCall.ts']));
	});
});
