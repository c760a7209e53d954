// Row 9 of `npm run bench`: n8n's AI Agent with one Calculator call per item over 20 items, once
// with the Gateway Chat Model as its model and once with n8n's own OpenAI Chat Model (Responses
// API off, the credential's Base URL at the gateway), both against the same loopback gateway.
// The gateway answers at once, so what is measured is the cost of the model and its client, not a
// model's thinking time (a delay would be the same for both and hide any difference).
//
// Time: the AI Agent's span in n8n's run data, from the end of the node that makes the items to
// the end of the agent's last run (its model calls and tool calls included; the workflows differ
// only in the model sub-node). Runs alternate, after an unmeasured warm-up of each; medians.
'use strict';

const crypto = require('node:crypto');
const path = require('node:path');

const { startGateway } = require('../test/gateway');
const { runWorkflows } = require('../scripts/n8n/headless');
const { median } = require('./aggregation');

const ITEMS = 20;
const AGENT = 'Agent';
const MODEL = 'Model';
const ITEMS_NODE = 'Items';
const CREDENTIALS = {
	gateway: { id: 'mgwBenchModelGw1', name: 'Bench gateway (agent models)' },
	openAi: { id: 'mgwBenchModelOa1', name: 'Bench OpenAI at the gateway (agent models)' },
};

let counter = 0;
const nodeId = () => `b3c48000-0000-4000-8000-${String(++counter).padStart(12, '0')}`;

const MODELS = {
	ours: {
		label: 'Gateway Chat Model',
		node: {
			type: 'n8n-nodes-model-gateway.gatewayChatModel',
			typeVersion: 1,
			parameters: { model: { __rl: true, mode: 'id', value: 'chat-sonnet-5' }, options: {} },
			credentials: { gatewayApi: CREDENTIALS.gateway },
		},
	},
	openAi: {
		label: "n8n's OpenAI Chat Model",
		node: {
			type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
			typeVersion: 1.3,
			parameters: { model: { __rl: true, mode: 'id', value: 'chat-sonnet-5' }, responsesApiEnabled: false, options: {} },
			credentials: { openAiApi: CREDENTIALS.openAi },
		},
	},
};

/** Manual Trigger → Code (20 questions, each asking for one Calculator call) → AI Agent with `model` and a Calculator. */
function agentWorkflow(id, which) {
	const questions = `return Array.from({ length: ${ITEMS} }, (_, i) => ({ json: { question: 'What is ' + (i + 2) + ' times 7? [call:Calculator {"input": "' + (i + 2) + ' * 7"}]' } }));`;
	const link = (node, type = 'main') => ({ [type]: [[{ node, type, index: 0 }]] });
	return {
		id,
		name: `Bench: AI Agent, ${ITEMS} items, one tool call each, ${MODELS[which].label}`,
		nodes: [
			{ id: nodeId(), name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
			{ id: nodeId(), name: ITEMS_NODE, type: 'n8n-nodes-base.code', typeVersion: 2, position: [220, 0], parameters: { jsCode: questions } },
			{
				id: nodeId(),
				name: AGENT,
				type: '@n8n/n8n-nodes-langchain.agent',
				typeVersion: 3,
				position: [440, 0],
				parameters: { promptType: 'define', text: '={{ $json.question }}', options: { systemMessage: 'Use the Calculator for arithmetic.' } },
			},
			{ id: nodeId(), name: MODEL, position: [380, 220], ...MODELS[which].node },
			{ id: nodeId(), name: 'Calculator', type: '@n8n/n8n-nodes-langchain.toolCalculator', typeVersion: 1, position: [560, 220], parameters: {} },
		],
		connections: { Start: link(ITEMS_NODE), [ITEMS_NODE]: link(AGENT), [MODEL]: link(AGENT, 'ai_languageModel'), Calculator: link(AGENT, 'ai_tool') },
		settings: { executionOrder: 'v1' },
		active: false,
	};
}

const runsOf = (node) => (node ? (node.runs ?? [node]) : []);
const endOf = (run) => run.startTime + run.executionTimeMs;

/** One run's measurement: the agent's span, checked (20 answers, each with its tool result). */
function measured(result) {
	const agent = result?.nodes?.[AGENT];
	const items = result?.nodes?.[ITEMS_NODE];
	const answers = agent?.items ?? [];
	let problem;
	if (!result) problem = 'no result';
	else if (result.status !== 'success') problem = `the workflow failed: ${result.error?.message}${result.error?.description ? ` (${result.error.description})` : ''}`;
	else if (answers.length !== ITEMS) problem = `${answers.length} answers instead of ${ITEMS}`;
	else if (!answers.every((item, i) => String(item.json.output).includes(`Calculator: [{"response":"${(i + 2) * 7}"}]`))) problem = 'an answer lacks its tool result';
	if (problem) return { problem };
	const ms = Math.max(...runsOf(agent).map(endOf)) - Math.max(...runsOf(items).map(endOf));
	const modelCalls = runsOf(result.nodes[MODEL]);
	return { ms, modelCalls: modelCalls.length, modelMs: modelCalls.reduce((sum, run) => sum + run.executionTimeMs, 0) };
}

/**
 * Runs the comparison in its own n8n process (one workflow at a time) against a loopback gateway
 * of its own. Returns { ours, openAi } (median ms, every run, model calls) and the gateway's
 * request count, or a `problem` per side.
 */
async function measureAgentModels({ runtime, out, repeats, log }) {
	const gateway = await startGateway({ delayMs: 0 });
	const key = `sk-bench-${crypto.randomBytes(8).toString('hex')}`;
	const credentials = [
		{ ...CREDENTIALS.gateway, type: 'gatewayApi', data: { apiKey: key, baseUrl: gateway.baseUrl, groupMultiplier: 1 } },
		{ ...CREDENTIALS.openAi, type: 'openAiApi', data: { apiKey: key, url: `${gateway.baseUrl}/v1` } },
	];
	const plan = { ours: [], openAi: [] };
	const workflows = [];
	let serial = 0;
	const add = (which, measure) => {
		const id = `mgwBenchAgent${String(++serial).padStart(4, '0')}`;
		workflows.push(agentWorkflow(id, which));
		if (measure) plan[which].push(id);
	};
	// Warm-up (not measured): n8n loads LangChain and both models' code on first use.
	add('ours', false);
	add('openAi', false);
	for (let r = 0; r < repeats; r++) {
		// Alternating, and in turn first, so a slow moment of the machine hits both alike.
		for (const which of r % 2 === 0 ? ['ours', 'openAi'] : ['openAi', 'ours']) add(which, true);
	}
	log(`agent models: ${workflows.length} runs of an AI Agent over ${ITEMS} items (one Calculator call each), one at a time`);
	let results;
	try {
		results = await runWorkflows({
			runtime,
			credentials,
			workflows,
			userFolder: path.join(out, 'agent-models'),
			keepUserFolder: true,
			concurrency: 1,
			log: (message) => log(`agent models: ${message}`),
		});
	} finally {
		await gateway.close();
	}
	const side = (which) => {
		const runs = plan[which].map((id) => measured(results[id]));
		const problem = runs.find((run) => run.problem)?.problem;
		return { ms: problem ? undefined : median(runs.map((run) => run.ms)), all: runs.map((run) => run.ms), modelMs: runs.map((run) => run.modelMs), modelCalls: runs[0]?.modelCalls, problem };
	};
	return { ours: side('ours'), openAi: side('openAi'), items: ITEMS, requests: gateway.requests.length };
}

module.exports = { measureAgentModels, agentWorkflow, ITEMS };
