/** Review of the priority-queue SendPace (commit 3e82a41): the chat nodes' FIFO pace as before. */
import { DEFAULT_PACE, SendPace } from '../../nodes/shared/wire/pace';
import { PastDeadline } from '../../nodes/shared/wire/timing';
import { createFakeClock } from '../helpers/fakeClock';

describe('review-urgency: SendPace, chat requests (urgency 0) behind a Retry-After', () => {
	it('every queued request that a Retry-After pushes past its deadline is told it was the hold (as before the change), not "its turn"', async () => {
		const clock = createFakeClock(0);
		const pace = new SendPace(clock, DEFAULT_PACE, 1);
		await pace.wait();
		// three chat requests wait for their slots (1 s apart); while the pump sleeps, another request gets Retry-After: 60 s
		clock.onSleep = (_ms, sleepNumber) => {
			if (sleepNumber === 1) pace.holdFor(60_000);
		};
		const errors = await Promise.all([1, 2, 3].map(async () => await pace.wait(undefined, 10_000).catch((reason: unknown) => reason)));
		for (const error of errors) expect(error).toBeInstanceOf(PastDeadline);
		// before the change each one met the hold at its turn: 'hold' ("the gateway asks to retry after 60 s …");
		// now only the first in line says so, the others "the gateway's rate limit leaves this request its turn in 61 s"
		expect(errors.map((error) => (error as PastDeadline).reason)).toEqual(['hold', 'hold', 'hold']);
	});
});
