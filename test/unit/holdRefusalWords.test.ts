/** The words of a refusal for the shared hold, kept by the TurnQueue (pace.ts), on a fake clock. */
import { SendPace } from '../../nodes/shared/wire/pace';
import { PastDeadline } from '../../nodes/shared/wire/timing';
import { heldTooLongWords } from '../../nodes/shared/wire/retry';
import { createFakeClock } from '../helpers/fakeClock';

describe('a Retry-After hold refused to waiters queued under a pace', () => {
	it('a refusal for the hold names the hold the gateway asked for, not the hold plus the places ahead in line', async () => {
		const clock = createFakeClock(0);
		// Paced at 1 request/s: one turn a second.
		const pace = new SendPace(clock, undefined, 1);
		pace.holdFor(60_000);
		// Two requests whose deadlines come after the hold wait it out, ahead in line.
		const ahead = [pace.wait(undefined, 100_000), pace.wait(undefined, 100_000)];
		const error = await pace.wait(undefined, 30_000).catch((reason: unknown) => reason);
		expect(error).toBeInstanceOf(PastDeadline);
		const { reason, waitMs, leftMs } = error as PastDeadline;
		// 9d5721c said "the gateway asks to retry after 62 s": the hold plus the places ahead in line; it asked for 60.
		expect(heldTooLongWords(reason, waitMs, leftMs, 'Timeout (Seconds)')).toMatch(/asks to retry after 60 s/);
		await Promise.all(ahead);
	});
});
