/**
 * A hostile reviewer's attacks on the one deadline owner, over real HTTP (each was red before its
 * fix): a Retry-After of 0 (or a date in the past) on a 5xx is no licence to hammer the gateway nor
 * to say "waiting did not help" after no wait at all; a run that ends while a 429's body is still
 * arriving does not say the refused request may have acted; no request starts once its deadline
 * has passed.
 */
import * as http from 'http';
import type { AddressInfo } from 'net';

import { GatewayClient } from '../../nodes/shared/wire/transport';
import { createExecuteContext } from '../helpers/executeContext';
import { failureOf } from '../helpers/failures';
import { useScriptedServer } from '../helpers/scriptedServer';

const KEY = 'sk-deadline-attacks-0123456789abcdef';

const { serve } = useScriptedServer();

async function clientFor(baseUrl: string): Promise<GatewayClient> {
	const { ctx } = createExecuteContext({ parameters: {}, credentials: { apiKey: KEY, baseUrl } });
	return await GatewayClient.create(ctx);
}


describe('a 503 with a Retry-After that asks for no wait', () => {
	it.each(['0', 'Thu, 01 Jan 1970 00:00:00 GMT'])('Retry-After: %s backs off between tries, and never says waiting did not help without waiting', async (retryAfter) => {
		const gw = await serve(() => ({ status: 503, headers: { 'retry-after': retryAfter }, body: '' }));
		const client = await clientFor(gw.baseUrl);
		const error = await failureOf(client.json({ path: '/v1/models', deadlineMs: 4000, limitName: 'the test limit' }));
		const gaps = gw.requests.slice(1).map((request, index) => request.time - gw.requests[index].time);
		// A backoff (at least half a second before the first retry), not five requests in a few milliseconds.
		expect(gaps.length).toBeGreaterThan(0);
		expect(Math.min(...gaps)).toBeGreaterThanOrEqual(400);
		expect(error.message).not.toMatch(/waiting did not help/);
		expect(error.message).toMatch(/the test limit/);
	});
});

describe('the run ends while a refusal is still arriving', () => {
	it('a paid POST whose 429 body drips when the run ends is reported as not acted on (the status said so)', async () => {
		const timers = new Set<NodeJS.Timeout>();
		let arrived = 0;
		const dripping = http.createServer((req, res) => {
			req.resume();
			req.on('end', () => {
				arrived++;
				res.writeHead(429, { 'content-type': 'application/json' });
				res.write('{"error":{"message":"too many');
				timers.add(setInterval(() => res.write(' '), 50));
			});
		});
		await new Promise<void>((resolve) => dripping.listen(0, '127.0.0.1', resolve));
		try {
			const client = await clientFor(`http://127.0.0.1:${(dripping.address() as AddressInfo).port}`);
			const call = failureOf(client.json({ path: '/v1/images/generations', body: { prompt: 'a fox' }, retry: { idempotent: false }, deadlineMs: 10_000, what: 'Generating the images' }));
			await new Promise((resolve) => setTimeout(resolve, 300));
			client.close();
			const error = await call;
			expect(arrived).toBe(1);
			expect(error.kind).toBe('cancelled');
			expect(error.mayHaveActed).toBe(false);
		} finally {
			for (const timer of timers) clearInterval(timer);
			dripping.closeAllConnections();
			await new Promise((resolve) => dripping.close(resolve));
		}
	});
});

describe('a deadline that has passed', () => {
	it('sends nothing: a request is never started after its deadline, not even for a millisecond', async () => {
		const gw = await serve(() => ({ status: 200, body: '{"data":[]}', delayMs: 50 }));
		const client = await clientFor(gw.baseUrl);
		const error = await failureOf(client.json({ path: '/v1/images/generations', body: { prompt: 'a fox' }, retry: { idempotent: false }, notAfter: Date.now() - 1000, limitName: 'the test limit', what: 'Generating the images' }));
		await new Promise((resolve) => setTimeout(resolve, 200));
		expect(gw.requests).toEqual([]);
		expect(error.mayHaveActed).toBe(false);
		expect(error.message).toMatch(/the test limit/);
	});
});
