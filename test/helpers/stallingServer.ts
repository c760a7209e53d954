/**
 * A loopback server that answers with a head and the start of a body, then stalls: whether the
 * client closes the connection of an answer it stopped reading shows as `closedAt`, long before the
 * stall would end it (test/integration/answerConnection.test.ts and the reviews of it).
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Stalling {
	baseUrl: string;
	/** When the server saw the connection of the last request close, if it did. */
	closedAt(): number | undefined;
	close(): Promise<void>;
}

/** Once the request is read: `start` writes the head and the start of the body; the end comes after `stallMs`. */
export async function stallingServer(stallMs: number, start: (res: http.ServerResponse) => void): Promise<Stalling> {
	let closedAt: number | undefined;
	const timers: NodeJS.Timeout[] = [];
	const server = http.createServer((req, res) => {
		closedAt = undefined;
		req.socket.once('close', () => (closedAt = Date.now()));
		req.resume();
		req.on('end', () => {
			start(res);
			timers.push(setTimeout(() => res.end(), stallMs));
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		closedAt: () => closedAt,
		close: async () => {
			timers.forEach(clearTimeout);
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		},
	};
}
