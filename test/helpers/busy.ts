/**
 * Time in tests on a shared, busy machine (both cores taken by other work): a test that must measure
 * real time bounds it with a margin, never an exact figure, and acts on events (a request arrived, a
 * log line written), not at a wall-clock moment. The margin is far below what the bounded thing
 * would take without its limit (a drip for ever, a 60 s Retry-After), so the test still proves it.
 */
export const BUSY_MARGIN_MS = 3000;

/** Whether `check` holds within `withinMs` (real time), looking every 20 ms: for what a server learns a moment later. */
export async function eventually(check: () => boolean, withinMs = BUSY_MARGIN_MS): Promise<boolean> {
	for (const until = Date.now() + withinMs; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 20))) if (check()) return true;
	return check();
}

/** Calls `act` as soon as `check` holds (looking every 10 ms), e.g. to stop a run once a request is on its way. */
export function once(check: () => boolean, act: () => void): void {
	const look = () => (check() ? act() : setTimeout(look, 10));
	look();
}
