/**
 * `npm run demo` on both n8n lines: an example that n8n 1.x cannot run by design (Gateway Chat Model
 * needs n8n 2.16 or newer, and says so) is an expected refusal there, not a failure of the demo.
 */
import { outcome, timeSpent } from '../../scripts/demo';

const NEEDS = 'Gateway Chat Model needs n8n 2.16 or newer: this n8n does not provide @n8n/ai-node-sdk, the AI node SDK the node is built on';
const refused = { status: 'error', error: { message: 'Error in sub-node Gateway Chat Model', description: NEEDS, node: 'Gateway Chat Model' } };

describe('the outcome of an example in the demo', () => {
	it('a success is ok', () => {
		expect(outcome({ status: 'success' }, '1.123.81')).toBe('ok');
	});

	it("the Chat Model's 'needs n8n 2.16' refusal is expected before 2.16", () => {
		expect(outcome(refused, '1.123.81')).toBe('expected');
		expect(outcome(refused, '2.15.3')).toBe('expected');
	});

	it('the same refusal on 2.16 or later is a failure (the SDK should be there)', () => {
		expect(outcome(refused, '2.16.0')).toBe('failed');
		expect(outcome(refused, '2.41.1')).toBe('failed');
	});

	it('any other error is a failure, on every line', () => {
		expect(outcome({ status: 'error', error: { message: 'The chat request failed', description: 'the gateway refused the API key' } }, '1.123.81')).toBe('failed');
	});
});

describe('where the demo says its time went', () => {
	it('splits a first run into installing n8n and running the examples', () => {
		expect(timeSpent(812_400, { ms: 771_000 }, '2.41.1')).toBe('812 s in all: installing n8n 2.41.1 771 s (first run only), running the examples 41 s');
	});

	it('says so when n8n was already installed', () => {
		expect(timeSpent(31_200, null, '2.41.1')).toBe('31 s in all; n8n 2.41.1 was already installed');
	});
});
