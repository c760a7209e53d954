/**
 * n8n's binary store fails part way through a download whose host is still sending
 * (a disk that fills up): the error is n8n's storage error, not the connection's nor a deadline.
 * `mode`: how the store reads the stream: iterated (fs.writeFile(path, stream)), or piped.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline, Writable } from 'node:stream';
import type { Readable } from 'node:stream';

import { downloadToBinary } from '../../nodes/shared/files/binary';
import { GatewayError } from '../../nodes/shared/failures/errors';
import { GatewayClient } from '../../nodes/shared/wire/transport';
import { createExecuteContext } from '../helpers/executeContext';
import { pngHeader } from '../helpers/files';


jest.setTimeout(30_000);

async function slowImageHost() {
	const timers = new Set<NodeJS.Timeout>();
	const server = http.createServer((_req, res) => {
		res.writeHead(200, { 'content-type': 'image/png' });
		res.write(pngHeader(64, 64, 64 * 1024));
		// Then more, a piece every 50 ms, for 10 s.
		let sent = 0;
		const timer = setInterval(() => {
			if (++sent > 200) {
				clearInterval(timer);
				res.end();
			} else res.write(Buffer.alloc(16 * 1024, 1));
		}, 50);
		timers.add(timer);
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		link: `http://127.0.0.1:${(server.address() as AddressInfo).port}/img.png`,
		close: async () => {
			timers.forEach(clearInterval);
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		},
	};
}

const diskFull = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

const stores: Record<string, (stream: Readable) => Promise<never>> = {
	iterated: async (stream) => {
		let got = 0;
		for await (const chunk of stream) {
			got += (chunk as Buffer).length;
			if (got > 100 * 1024) throw diskFull();
		}
		throw new Error('the download ended');
	},
	piped: async (stream) => {
		let got = 0;
		const sink = new Writable({
			write(chunk: Buffer, _encoding, callback) {
				got += chunk.length;
				callback(got > 100 * 1024 ? diskFull() : undefined);
			},
		});
		return await new Promise<never>((_resolve, reject) => pipeline(stream, sink, (error) => reject(error ?? new Error('the download ended'))));
	},
};

describe.each(Object.keys(stores))('n8n storage that fails mid-download (%s)', (mode) => {
	it('is named as n8n storage, quickly, with its own words', async () => {
		const host = await slowImageHost();
		try {
			const { ctx } = createExecuteContext({ parameters: {}, credentials: { apiKey: 'sk-storage-0123456789abcdef', baseUrl: 'http://gateway.invalid' } });
			ctx.helpers.prepareBinaryData = (async (data: unknown) => await stores[mode](data as Readable)) as never;
			const client = await GatewayClient.create(ctx);
			const started = Date.now();
			const error = await downloadToBinary(ctx, client, {
				link: host.link,
				what: 'Downloading image 1',
				expected: 'an image',
				mediaPrefix: 'image/',
				baseName: 'image-0',
				itemIndex: 0,
				downloadOption: 'Download Images',
				deadlineMs: 20_000,
			}).catch((reason: unknown) => reason);
			expect(error).toBeInstanceOf(GatewayError);
			expect({ kind: (error as GatewayError).kind, headline: (error as GatewayError).headline }).toEqual({ kind: 'storage', headline: expect.stringMatching(/n8n could not store the file \(ENOSPC/) });
			expect(Date.now() - started).toBeLessThan(5_000);
		} finally {
			await host.close();
		}
	});
});
