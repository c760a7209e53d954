/**
 * Scenarios written out by hand: the fixed parts a counterexample does not vary, so each named
 * counterexample states only the misbehaviour that broke a promise.
 */
import type { Answer, RunPlan, Secrets, VideoPlan } from './gateway';
import { CLEAN, FuzzGateway } from './gateway';
import type { NodeKind, Scenario } from './scenario';

export const FIXED_SECRETS: Secrets = { key: 'sk-Fz9qR2mT7wXcV4bN8kLp/Q3sD+h6', headerName: 'x-api-token', headerValue: 'Qk7v9' };

export function answer(overrides: Partial<Answer>): Answer {
	return { ...CLEAN, ...overrides };
}

export interface CaseOverrides extends Partial<Omit<Scenario, 'plan'>> {
	answers?: Answer[];
	text?: string;
	toolCall?: boolean;
	toolArgs?: RunPlan['toolArgs'];
	toolIndex?: RunPlan['toolIndex'];
	video?: Partial<VideoPlan>;
	early?: RunPlan['early'];
	balance?: RunPlan['balance'];
	silence?: RunPlan['silence'];
}

export function scenario(node: NodeKind, overrides: CaseOverrides = {}): Scenario {
	const { answers = [], text = 'The fern grows', toolCall = false, toolArgs = 'object', toolIndex = 'given', video = {}, early, balance, silence, ...rest } = overrides;
	const plan: RunPlan = {
		answers,
		...(early ? { early } : {}),
		...(balance ? { balance } : {}),
		...(silence ? { silence } : {}),
		text,
		toolCall,
		toolArgs,
		toolIndex,
		video: { submitIds: ['task_4242'], pendingPolls: 0, terminal: 'SUCCESS', foreignId: false, resultOnSibling: false, ...video },
	};
	return {
		node,
		secrets: FIXED_SECRETS,
		deadlineSeconds: 2,
		items: 1,
		continueOnFail: false,
		taskIdInput: 'task_4242',
		resume: false,
		imageFormat: 'url',
		plan,
		...rest,
	};
}

/** One fuzz gateway for a test file: started before its tests, closed after them. */
export function useFuzzGateway(): () => FuzzGateway {
	let gateway: FuzzGateway | undefined;
	beforeAll(async () => {
		gateway = new FuzzGateway();
		await gateway.start();
	});
	afterAll(async () => {
		await gateway?.close();
	});
	return () => {
		if (!gateway) throw new Error('the fuzz gateway is not started yet');
		return gateway;
	};
}
