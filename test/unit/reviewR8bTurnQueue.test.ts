/**
 * Hostile review r8b (round four, session eight): TurnQueue's promise since 3064a9a, that a
 * waiter whose turn would come too late is refused then, also while every slot is held. The pump, every slot held, sleeps until refuseLate's `lateAt` (the next kept
 * waiter's last serving time, notAfter - spacing × position) and otherwise without a timer.
 */
import { TurnQueue } from '../../nodes/shared/wire/pace';
import { createVirtualClock } from '../helpers/virtualClock';

/** A queue of one slot, held from 0 until `freeAt`; a waiter with no deadline first, then one with `notAfter`: when it was refused. */
async function refusedAt(spacingMs: number, notAfter: number, freeAt: number, firstRank?: (now: number) => readonly [number, number], secondRank?: readonly [number, number]) {
	const clock = createVirtualClock(0);
	const queue = new TurnQueue(clock, { slots: 1, spacingMs: () => spacingMs });
	const giveBack = await queue.take({});
	void clock.sleep(freeAt).then(giveBack);
	const ahead = queue.take(firstRank ? { rank: () => firstRank(clock.now()) } : {});
	let refused: number | undefined;
	void queue.take({ notAfter, ...(secondRank ? { rank: () => secondRank } : {}) }).then(
		(free) => free(),
		() => (refused = clock.now()),
	);
	await clock.runUntil(() => refused !== undefined, 60_000);
	void ahead.then((free) => free());
	return refused as number;
}

describe('TurnQueue, every slot held: a waiter is refused at the latest when its turn can no longer come in time', () => {
	// The control: whole numbers. Behind one waiter, spacing 1000: too late from 9000 on.
	it('is refused by its last serving time (whole numbers)', async () => {
		expect(await refusedAt(1000, 10_000, 30_000)).toBeLessThanOrEqual(9000);
	});

	// Fractional spacing (budgetSpacingMs(7) = 157.14… ms) and a fractional deadline (a Max Wait in
	// tenths of a second on a clock that moved by such spacings). The pump sleeps until lateAt =
	// notAfter - spacing; there, turnAt = lateAt + spacing rounds to just under notAfter, so the
	// waiter is kept, and lateAt's `lastServingAt > now` leaves it out: lateAt is Infinity, and the
	// pump sleeps without a timer until the slot frees at 30 s (the bug 3064a9a fixed, back by one
	// rounding). Fixed: the refusal and the wake-up compare the same number, lastServingAt.
	it('is refused by its last serving time whatever the fractions of the spacing and the deadline', async () => {
		const spacingMs = (1000 / 7) * 1.1;
		const notAfter = 1000 + spacingMs / 7;
		expect(notAfter - spacingMs + spacingMs).toBeLessThan(notAfter); // the rounding the test relies on
		expect(await refusedAt(spacingMs, notAfter, 30_000)).toBeLessThanOrEqual(notAfter);
	});

	// A rank is asked anew at every turn, and rankOf's change with time (a check falls behind, enters
	// its last second, LastUnseen before LastSeen): a waiter that overtakes another while every slot
	// is held moves it back one spacing, but the pump slept until the lateAt reckoned with the old
	// order (10 000 here), a spacing after its turn could last come (9000). The queue does not know
	// when ranks will change (waking for every possible change would be polling): the promise kept
	// is the waiter's own deadline, and the wait it serves still ends by its wait end.
	it('is refused by its own deadline at the latest when another waiter overtakes it while it waits', async () => {
		const overtakesAt5s = (now: number) => (now >= 5000 ? ([0, 0] as const) : ([2, 0] as const));
		expect(await refusedAt(1000, 10_000, 30_000, overtakesAt5s, [1, 0])).toBeLessThanOrEqual(10_000);
	});
});
