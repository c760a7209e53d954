/**
 * The 'works' invariant excuses a clean run only when the gateway really paused more than half the
 * limit while answering (the pauses it logs, summed over the run), never by what the plan names:
 * a clean answer written in one piece is held to working (found by review of 210a078, whose rule
 * excused 59% of clean 1 s scenarios by their planned drip intervals and keep-alives).
 */
import type { Outcome } from './drive';
import { runScenario } from './drive';
import type { LoggedRequest, RunState } from './gateway';
import { checkRun } from './invariants';
import { FIXED_SECRETS, answer, scenario, useFuzzGateway } from './cases';

function outcome(overrides: Partial<Outcome> = {}): Outcome {
	return { output: [], logs: [], customData: [], chunks: [], modelResults: [], callDurations: [], startedAt: 0, settledAt: 100, hung: false, neverSettled: false, ...overrides };
}

function stateWithPauses(...pauses: number[]): RunState {
	const requests = pauses.map(
		(pausedMs): LoggedRequest => ({ run: 1, method: 'POST', path: '/v1/chat/completions', host: '127.0.0.1:1', origin: 'own', headers: {}, body: '{}', at: 50, status: 200, complete: true, answerKind: 'clean', pausedMs }),
	);
	return { run: 1, plan: scenario('chat').plan, secrets: FIXED_SECRETS, requests, submitCount: 0, polls: new Map(), settledAt: 100, settingTexts: [] };
}

const failedChat = (pauses: number[]) => {
	const s = scenario('chat', { deadlineSeconds: 1, answers: [answer({ kind: 'clean' })] });
	return checkRun(s, outcome({ error: new Error('The credential is invalid') }), stateWithPauses(...pauses)).map((v) => v.invariant);
};

describe("'works' excuses only what the gateway really paused", () => {
	it('holds a failed clean run to working when the gateway paused little', () => {
		expect(failedChat([0])).toContain('works');
		expect(failedChat([200, 250])).toContain('works');
	});

	it('excuses it when the pauses of its answers add up to more than half the limit', () => {
		expect(failedChat([300, 250])).not.toContain('works');
	});

	// Seed 1826 after the first-pending dimension: a dripped 1 s stream ran out of its Timeout next to other work.
	describe('a run that ran out of its own limit', () => {
		const timedOut = (settledAt: number, kind = 'timeout') => {
			const s = scenario('chat', { deadlineSeconds: 1, answers: [answer({ kind: 'clean' })] });
			const error = Object.assign(new Error('The chat request failed: no complete answer within 1 s'), { context: { itemFields: { kind } } });
			return checkRun(s, outcome({ error, settledAt }), stateWithPauses(0)).map((v) => v.invariant);
		};
		it('is excused after the whole limit', () => expect(timedOut(1_050)).not.toContain('works'));
		it('is held to working when it gave up before the limit', () => expect(timedOut(600)).toContain('works'));
		it('is held to working when its failure is another kind', () => expect(timedOut(1_050, 'auth')).toContain('works'));
	});

	describe('the gateway logs its real pauses', () => {
		const gateway = useFuzzGateway();

		it('none for an answer written in one piece, whatever drip interval and keep-alives the plan names', async () => {
			const s = scenario('chat', { deadlineSeconds: 2, answers: [answer({ kind: 'clean', dripChunk: 0, dripIntervalMs: 1, keepAliveMs: 200 })] });
			const { state } = await runScenario(gateway(), s);
			expect(state.requests.map((r) => r.pausedMs)).toEqual([0]);
		});

		it('the keep-alives and drips of a stream', async () => {
			const s = scenario('chatStream', { deadlineSeconds: 3, answers: [answer({ kind: 'clean', dripChunk: 0, dripIntervalMs: 20, keepAliveMs: 300 })] });
			const { state } = await runScenario(gateway(), s);
			expect(state.requests[0].pausedMs).toBeGreaterThanOrEqual(300);
		});
	});
});
