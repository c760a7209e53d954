/**
 * A gateway on Node's own HTTP server that answers each POST with 200 and a new task id once it has
 * read `afterBytes` of the body (or at its end), then goes on as `mode` says: reads on, stops reading,
 * ends or destroys its socket after the answer, or leaves the rest to Node's server.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export type EarlyAnswerMode = 'keepReading' | 'stopReading' | 'close' | 'endAfterAnswer' | 'dumpByNode';

export interface EarlyAnswerGateway {
	baseUrl: string;
	posts: number;
	ids: string[];
	close(): Promise<void>;
}

export async function earlyAnswerGateway(mode: EarlyAnswerMode, { afterBytes, idPrefix }: { afterBytes: number; idPrefix: string }): Promise<EarlyAnswerGateway> {
	const gateway: EarlyAnswerGateway = { baseUrl: '', posts: 0, ids: [], close: async () => undefined };
	const server = http.createServer((request, response) => {
		const id = `${idPrefix}${++gateway.posts}`;
		let got = 0;
		let answered = false;
		request.on('error', () => undefined);
		const answer = () => {
			answered = true;
			gateway.ids.push(id);
			response.writeHead(200, { 'content-type': 'application/json' });
			response.end(JSON.stringify({ task_id: id, status: 'SUBMITTED' }), () => {
				if (mode === 'endAfterAnswer') request.socket.end();
				if (mode === 'close') request.socket.destroy();
			});
			if (mode === 'stopReading') request.pause();
			// Node's server itself: the handler stops listening, the server dumps (or closes) the rest.
			if (mode === 'dumpByNode') request.removeAllListeners('data');
		};
		request.on('data', (part: Buffer) => {
			got += part.length;
			if (!answered && got > afterBytes) answer();
		});
		request.on('end', () => {
			if (!answered) answer();
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	gateway.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	gateway.close = async () => {
		server.closeAllConnections();
		await new Promise((resolve) => server.close(resolve));
	};
	return gateway;
}
