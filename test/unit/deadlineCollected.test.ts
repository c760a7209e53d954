/**
 * A deadline fires even when nothing but its wait refers to it (10,000-run fuzz, seeds 28001-28008:
 * 13 runs whose file store stalled ended only when the harness stopped them). On Node 20 a signal
 * made by `AbortSignal.any` does not keep an `AbortSignal.timeout` alive, and a wait on a promise
 * that never settles is garbage: after a collection its deadline never fired. Red before
 * deadlineSignal (timing.ts) held each deadline until it fires.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { fileWaitScope, raceFileWait } from '../../nodes/shared/wire/fileWait';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Starts a wait on a store that never answers, keeping no reference to it, and says when it ended. */
function stalledRead(deadlineMs: number, cancel: AbortSignal, ended: (how: string) => void): void {
	const scope = fileWaitScope(Date.now() + deadlineMs, cancel);
	raceFileWait(new Promise<never>(() => undefined), scope).then(
		() => ended('settled'),
		(error: Error) => ended(error.message),
	);
}

describe('a deadline that nothing else holds', () => {
	it('ends a wait on a stalled file store after a garbage collection', async () => {
		const cancel = new AbortController();
		let outcome = 'never ended';
		stalledRead(1_000, cancel.signal, (how) => (outcome = how));
		for (let turn = 0; turn < 3; turn++) {
			await new Promise((resolve) => setImmediate(resolve));
			collectGarbage();
		}
		// The test's own limit, well past the deadline: a collected deadline never fires.
		for (let waited = 0; outcome === 'never ended' && waited < 10_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
		cancel.abort();
		expect(outcome).toBe("The item's time ran out while n8n's binary store was read");
	});
});
