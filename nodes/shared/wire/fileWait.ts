/**
 * Every wait on n8n's binary store (a file's open, its first bytes, each read) ends with the item:
 * its deadline or a Stop. One mechanism for the checks before a request (a first frame's type, an
 * attachment's head) and for the files streamed into a request body: a wait is raced against the
 * item's end, and a stream that opens after it is closed at once (an S3 GET with no timeout of its
 * own would otherwise hold the item for ever).
 */

import type { DeadlineScope } from './timing';

// An item's file waits end on its deadline scope (timing.ts makes every deadline).
export { deadlineScope as fileWaitScope } from './timing';

/** Closes a file's stream (a Node Readable, as n8n's binary store gives). */
export function closeStream(stream: { destroy: () => void; destroyed: boolean }): void {
	if (!stream.destroyed) stream.destroy();
}

/** A wait on the binary store that the item's end (its deadline, a Stop) cut short. */
export class FileWaitEnded extends Error {
	override readonly name = 'AbortError';

	constructor(readonly reason: 'deadline' | 'cancelled') {
		super(reason === 'deadline' ? "The item's time ran out while n8n's binary store was read" : 'The run was stopped while a file was read');
	}
}

/** An item's limit its reads of the binary store end by (with a Stop), and its name as the user knows it. */
export interface FileWaitLimit {
	scope: DeadlineScope;
	/** "Max Wait (Seconds)", "Timeout (Seconds)". */
	name: string;
}

/**
 * `wait`, or FileWaitEnded as soon as `ends` aborts; a value that still comes after is handed to
 * `late` (to close a stream that opened too late).
 */
export async function raceFileWait<T>(wait: Promise<T>, ends: AbortSignal | DeadlineScope, late?: (value: T) => void): Promise<T> {
	const signal = ends instanceof AbortSignal ? ends : ends.signal;
	let onEnd: (() => void) | undefined;
	try {
		return await new Promise<T>((resolve, reject) => {
			onEnd = () => {
				void wait.then((value) => late?.(value), () => undefined);
				// A scope says why it ended; a request attempt's own signal ends with its deadline.
				reject(new FileWaitEnded(ends instanceof AbortSignal ? 'deadline' : ends.reason()));
			};
			if (signal.aborted) return onEnd();
			signal.addEventListener('abort', onEnd, { once: true });
			wait.then(resolve, reject);
		});
	} finally {
		if (onEnd) signal.removeEventListener('abort', onEnd);
	}
}
