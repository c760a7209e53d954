/**
 * The bench's own harness still runs against today's code: bench/aggregation.js drives callChat with
 * a stand-in of the transport's answer, so a change to that answer's interface breaks the bench
 * while every other test stays green (it did once: `alive`). Tiny sizes, one run: this proves the
 * harness works and reproduces the text, not any speed (speed is the bench's, as ratios).
 */
import { startGateway } from '../gateway';
import type { Gateway } from '../gateway';

import { measureAggregation } from '../../bench/aggregation';

let gateway: Gateway;
beforeAll(async () => {
	gateway = await startGateway();
});
afterAll(async () => {
	await gateway.close();
});

it('bench/aggregation.js aggregates a chat and a messages stream through the built callChat and gets the streamed text back', async () => {
	const results: Array<{ format: string }> = await measureAggregation({ gatewayBaseUrl: gateway.baseUrl, sizesMiB: [0.05, 0.1], repeats: 1 });
	expect(results.map((result) => result.format)).toEqual(['chat', 'messages']);
}, 60_000);
