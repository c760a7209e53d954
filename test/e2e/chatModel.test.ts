/**
 * Gateway Chat Model in a real n8n: n8n's AI Agent and Basic LLM Chain with our model as their
 * brain (test/e2e/workflows/chat-model-*.json and examples/chat-model-agent-with-tool.json).
 *
 * n8n 2.41.1: a tool round trip with one and with two parallel Calculator calls, effort, Max Tokens
 * and Temperature on the wire, the gateway's real token counts in n8n's run data, a bare 429 retried
 * after a pause, an unknown model, a refused key and a key quoted by the gateway ending the run in
 * our words (masked). `n8n execute-batch` does not stream, so these take the whole-answer path;
 * the streamed path runs below in `n8n start`: a Chat Trigger whose agent streams, with chunk
 * arrival times taken at the client, one and two streamed tool calls, streamed token usage, a
 * broken stream, a Stop that ends the request, and the key nowhere n8n keeps things.
 *
 * n8n 1.123.81 has no AI node SDK: the package still loads, the other nodes of these workflows run
 * (Gateway Chat before the chain), and the chat model fails with the message that it needs 2.16.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';

import type { E2eNodeRun, E2eWorkflowResult } from './harness';
import { E2E_LINE, E2E_N8N_MAJOR, describeWorkflow, gatewayRequests, loadE2eResults, loadE2eRun, nodeItems, nodeRun, ranWorkflow, workflowResult } from './harness';

const results = () => loadE2eResults();
const ON_1X = E2E_N8N_MAJOR < 2;
const NEEDS_2_16 = 'Gateway Chat Model needs n8n 2.16 or newer: this n8n does not provide @n8n/ai-node-sdk, the AI node SDK the node is built on';

type Json = Record<string, unknown>;

/** The chat-completions requests of one workflow, found by a word of its prompt, in order. */
const modelRequests = (word: string) => gatewayRequests((r) => r.path === '/v1/chat/completions' && r.rawBody.includes(word));
const bodies = (word: string) => modelRequests(word).map((r) => JSON.parse(r.rawBody) as Json & { messages: Json[] });

/** Each call of the chat model sub-node: what n8n reported for it on its ai_languageModel output. */
function modelCalls(id: string, node = 'Gateway Chat Model'): Json[] {
	const run = nodeRun(results(), id, node);
	return (run.runs ?? [run]).map((call: E2eNodeRun) => (call.connectionOutputs?.ai_languageModel?.[0]?.[0]?.json ?? {}) as Json);
}

const agentOutput = (id: string, node = 'AI Agent') => nodeItems(results(), id, node).map((item) => item.json.output);
const good = () => `Bearer ${loadE2eRun().credentials.good.apiKey}`;

/** On n8n 1.x: the package loaded, the run reached the chat model, and it failed saying what it needs. */
function expectNeeds216(result: E2eWorkflowResult, node = 'Gateway Chat Model') {
	expect(result.status).toBe('error');
	expect(result.error?.message).toBe(`Error in sub-node ${node}`);
	expect(result.error?.description).toBe(NEEDS_2_16);
	expect(JSON.stringify(result)).not.toMatch(/Unrecognized node type/);
}

function expectRealUsage(calls: Json[]) {
	for (const call of calls) {
		expect(call.tokenUsage).toEqual({ promptTokens: expect.any(Number), completionTokens: expect.any(Number), totalTokens: expect.any(Number) });
		expect(call.tokenUsageEstimate).toBeUndefined();
		const usage = call.tokenUsage as Json;
		expect(usage.totalTokens).toBe((usage.promptTokens as number) + (usage.completionTokens as number));
		expect(usage.completionTokens).toBeGreaterThan(0);
	}
}

describeWorkflow('mgwChatModel0001', 'AI Agent + Gateway Chat Model + Calculator, one tool call', () => {
	const id = 'mgwChatModel0001';
	const word = 'What is 17 times 23?';

	if (ON_1X) {
		it('fails only the chat model, with the message that it needs n8n 2.16 or newer', () => expectNeeds216(workflowResult(results(), id)));
		return;
	}

	it('calls the Calculator once and answers with its result, which came back in the next request', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		expect(agentOutput(id)).toEqual(['[Use the tools when the user asks for them.] Echo from chat-sonnet-5 with tool results: Calculator: [{"response":"391"}]']);
		const calculator = nodeRun(results(), id, 'Calculator');
		expect((calculator.runs ?? [calculator]).map((r) => r.inputOverride?.ai_tool?.[0]?.[0]?.json.input)).toEqual(['17 * 23']);
		const [first, second] = bodies(word);
		expect(bodies(word)).toHaveLength(2);
		expect(first.messages.map((m) => m.role)).toEqual(['system', 'user']);
		const [assistant, tool] = second.messages.slice(2) as Array<Json & { tool_calls: Array<{ id: string; function: { name: string; arguments: string } }> }>;
		expect(assistant.tool_calls).toHaveLength(1);
		expect(assistant.tool_calls[0].function.name).toBe('Calculator');
		expect(JSON.parse(assistant.tool_calls[0].function.arguments)).toMatchObject({ input: '17 * 23' });
		expect(tool).toEqual({ role: 'tool', tool_call_id: assistant.tool_calls[0].id, content: '[{"response":"391"}]' });
	});

	it('sends effort as reasoning_effort (xhigh), Max Tokens and Temperature on every turn, with the key', () => {
		for (const body of bodies(word)) {
			expect(body).toMatchObject({ model: 'chat-sonnet-5', reasoning_effort: 'xhigh', max_tokens: 800, temperature: 0.2 });
			expect((body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toEqual(['Calculator']);
			expect(body.stream).toBeUndefined();
		}
		for (const request of modelRequests(word)) expect(request.headers.authorization).toBe(good());
	});

	it("reports the gateway's real token counts to n8n for each turn, not an estimate", () => {
		const calls = modelCalls(id);
		expect(calls).toHaveLength(2);
		expectRealUsage(calls);
		// The gateway counts the words of the conversation: the second turn carries the tool result.
		expect((calls[1].tokenUsage as Json).promptTokens).toBeGreaterThan((calls[0].tokenUsage as Json).promptTokens as number);
	});
});

describeWorkflow('mgwChatModel0002', 'AI Agent + Gateway Chat Model + Calculator, two parallel tool calls', () => {
	const id = 'mgwChatModel0002';
	const word = 'Work out both';

	if (ON_1X) {
		it('fails only the chat model, with the message that it needs n8n 2.16 or newer', () => expectNeeds216(workflowResult(results(), id)));
		return;
	}

	it('runs both calls and answers with both results, each sent back under its own call id', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		expect(agentOutput(id)).toEqual([
			'[Use the tools when the user asks for them.] Echo from chat-opus-4-8 with tool results: Calculator: [{"response":"5"}] | Calculator: [{"response":"42"}]',
		]);
		const calculator = nodeRun(results(), id, 'Calculator');
		expect((calculator.runs ?? [calculator]).map((r) => r.inputOverride?.ai_tool?.[0]?.[0]?.json.input)).toEqual(['2 + 3', '6 * 7']);
		const [, second] = bodies(word);
		const sentBack = second.messages.slice(2);
		const callIds = sentBack.flatMap((m) => ((m.tool_calls as Array<{ id: string }>) ?? []).map((c) => c.id));
		const resultIds = sentBack.filter((m) => m.role === 'tool').map((m) => m.tool_call_id);
		expect(callIds).toHaveLength(2);
		expect(new Set(callIds).size).toBe(2);
		expect(resultIds).toEqual(callIds);
		expect(sentBack.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['[{"response":"5"}]', '[{"response":"42"}]']);
	});

	it('sends effort max, and reports real token counts', () => {
		for (const body of bodies(word)) expect(body).toMatchObject({ model: 'chat-opus-4-8', reasoning_effort: 'max' });
		expectRealUsage(modelCalls(id));
	});
});

describeWorkflow('mgwChatModel0003', 'Basic LLM Chain + Gateway Chat Model, after a Gateway Chat node', () => {
	const id = 'mgwChatModel0003';

	it('runs the Gateway Chat node before the chain, on every n8n line', () => {
		expect(nodeItems(results(), id, 'Gateway Chat').map((item) => item.json.text)).toEqual(['Echo from chat-sonnet-5: Name a fern', 'Echo from chat-sonnet-5: Name a cactus']);
	});

	if (ON_1X) {
		it('fails only the chat model, with the message that it needs n8n 2.16 or newer', () => expectNeeds216(workflowResult(results(), id)));
		return;
	}

	it('answers each item through the chain, with Max Tokens sent and real token counts reported', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		expect(nodeItems(results(), id, 'Basic LLM Chain').map((item) => item.json.text)).toEqual([
			'Echo from chat-opus-4-8: Say more about: Name a fern',
			'Echo from chat-opus-4-8: Say more about: Name a cactus',
		]);
		for (const body of bodies('Say more about')) expect(body).toMatchObject({ model: 'chat-opus-4-8', max_tokens: 300 });
		expect(bodies('Say more about')).toHaveLength(2);
		expectRealUsage(modelCalls(id));
	});
});

describeWorkflow('mgwChatModel0004', 'a bare 429 on the chat model', () => {
	const id = 'mgwChatModel0004';

	if (ON_1X) {
		it('fails only the chat model, with the message that it needs n8n 2.16 or newer', () => expectNeeds216(workflowResult(results(), id)));
		return;
	}

	it('is sent again after a pause, and the agent run succeeds', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		expect(agentOutput(id)[0]).toContain('with tool results: Calculator: [{"response":"42"}]');
		// `[429-once]` answers the first request of each conversation with a bare 429: each turn was sent twice, the same.
		const requests = modelRequests('Add them up');
		expect(requests).toHaveLength(4);
		for (const [limited, retried] of [requests.slice(0, 2), requests.slice(2)]) {
			expect(retried.rawBody).toBe(limited.rawBody);
			expect(retried.time - limited.time).toBeGreaterThanOrEqual(250);
		}
	});
});

describe.each([
	['mgwChatModel0005', 'an unknown model', 'chat-nope-1', /^The chat model request failed: the gateway has no channel for this model \(HTTP 503\): "No available channel for model chat-nope-1 under group default \(distributor\)" \(code model_not_found\)$/, 'Pick a model from the list, or check the model id for typos.'],
	['mgwChatModel0006', 'a refused key', 'Hello there, refused key', /^The chat model request failed: the gateway refused the API key \(HTTP 401\): "Invalid token \(request id: \w+\)" \(code invalid_api_key\)$/, 'Check the API Key of the Model Gateway credential.'],
])('%s', (id, what, word, message, hint) => {
	describeWorkflow(id, `${what} ends the agent run in plain words`, () => {
		if (ON_1X) {
			it('fails only the chat model, with the message that it needs n8n 2.16 or newer', () => expectNeeds216(workflowResult(results(), id)));
			return;
		}

		it('stops the agent with our message after one request (nothing retried that cannot get better)', () => {
			const result = workflowResult(results(), id);
			expect(result.status).toBe('error');
			expect(result.error?.message).toMatch(message);
			expect(result.error?.description).toBe(hint);
			expect(result.error?.node).toBe('AI Agent');
			expect(gatewayRequests((r) => r.path === '/v1/chat/completions' && r.rawBody.includes(word) && r.rawBody.includes('"tools"'))).toHaveLength(1);
		});
	});
});

describeWorkflow('mgwChatModel0007', 'a gateway that quotes the key in a 200 answer', () => {
	const id = 'mgwChatModel0007';

	if (ON_1X) {
		it('fails only the chat model, with the message that it needs n8n 2.16 or newer', () => expectNeeds216(workflowResult(results(), id)));
		return;
	}

	it('ends the agent run in our words, the key masked in everything n8n stored of the run', () => {
		const result = workflowResult(results(), id);
		expect(result.error?.message).toBe('The chat model request failed: the gateway refused the API key: "invalid token Bearer ***" (code invalid_token)');
		const { apiKey } = loadE2eRun().hostile;
		expect(JSON.stringify(result)).not.toContain(apiKey);
		expect(JSON.stringify(result)).not.toContain(apiKey.slice(3));
		expect(loadE2eRun().hostile.requests.some((r) => r.body.includes('token-in-200') && r.headers.authorization === `Bearer ${apiKey}`)).toBe(true);
	});

	it("leaves the key out of n8n's log and database too", () => {
		const { userFolder, hostile } = loadE2eRun();
		const files = (dir: string): string[] =>
			fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? (entry.name === 'node_modules' ? [] : files(path.join(dir, entry.name))) : [path.join(dir, entry.name)]));
		const all = files(userFolder as string);
		expect(all.map((file) => path.basename(file))).toEqual(expect.arrayContaining(['n8n.log', 'database.sqlite']));
		const leaks = all.filter((file) => [hostile.apiKey, hostile.apiKey.slice(3)].some((secret) => fs.readFileSync(file).includes(secret)));
		expect(leaks).toEqual([]);
	});
});

describeWorkflow('mgwExModel0001', 'the example: an AI Agent that does sums with a tool', () => {
	const id = 'mgwExModel0001';

	if (ON_1X) {
		it('fails only the chat model, with the message that it needs n8n 2.16 or newer', () => expectNeeds216(workflowResult(results(), id)));
		return;
	}

	it('quotes the order with the Calculator\'s total', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		expect(agentOutput(id, 'Quote the Order')[0]).toContain('Calculator: [{"response":"399.5"}]');
		expect(bodies('Green Corner').every((body) => body.reasoning_effort === 'high')).toBe(true);
		expectRealUsage(modelCalls(id));
	});
});

describeWorkflow('mgwExModel0002', 'the example: chat with an agent that streams (run by its Test Now trigger)', () => {
	const id = 'mgwExModel0002';

	if (ON_1X) {
		it('fails only the chat model, with the message that it needs n8n 2.16 or newer', () => expectNeeds216(workflowResult(results(), id)));
		return;
	}

	it('answers the sample question through Gateway Chat Model, with the real token usage', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		expect(String(agentOutput(id)[0])).toContain('dark office');
		expectRealUsage(modelCalls(id));
	});
});

// ---------------------------------------------------------------------------------------------
// Streaming through `n8n start` (n8n 2.41.1): a Chat Trigger whose agent streams into the chat

const describeStreaming = E2E_LINE === 'n8n2' && ranWorkflow('mgwChatModel0001') ? describe : describe.skip;

interface Chunk {
	type: string;
	content?: string;
	at: number;
}

interface N8nServer {
	url: string;
	cookie: string;
	userFolder: string;
	logFile: string;
	stop(): Promise<void>;
}

describeStreaming('streaming into a Chat Trigger in `n8n start` (n8n 2.41.1)', () => {
	const ROOT = path.resolve(__dirname, '..', '..');
	const { startGateway } = require('../gateway') as typeof import('../gateway');
	const { startHostileGateway, DNS_PRELOAD } = require('../hostile') as typeof import('../hostile');
	const { ensureRuntime, defaultDir, TESTED_VERSIONS } = require('../../scripts/n8n/runtime');
	const { startServer } = require('../../scripts/n8n/headless');
	const { gatewayCredential } = require('../../scripts/n8n/workflowSet');

	const keys = { good: `sk-e2e-stream-${crypto.randomBytes(8).toString('hex')}`, hostile: `sk-e2e-stream-hostile-${crypto.randomBytes(10).toString('hex')}` };
	const webhooks = { good: crypto.randomUUID(), hostile: crypto.randomUUID(), example: crypto.randomUUID() };
	let gateway: Awaited<ReturnType<typeof startGateway>>;
	let hostile: Awaited<ReturnType<typeof startHostileGateway>>;
	let n8n: N8nServer;
	let flatted: { parse(text: string): Json };

	function chatWorkflow(id: string, webhookId: string, credential: { id: string; name: string }) {
		const node = (n: number) => `5f7e0000-0000-4000-8000-${String(n).padStart(12, '0')}`;
		return {
			id,
			name: `Chat with an agent on Gateway Chat Model (${credential.name})`,
			active: false,
			settings: { executionOrder: 'v1' },
			nodes: [
				{ id: node(1), name: 'Chat', type: '@n8n/n8n-nodes-langchain.chatTrigger', typeVersion: 1.4, position: [0, 0], webhookId, parameters: { public: true, mode: 'webhook', options: { responseMode: 'streaming' } } },
				{ id: node(2), name: 'AI Agent', type: '@n8n/n8n-nodes-langchain.agent', typeVersion: 3, position: [220, 0], parameters: { options: { systemMessage: 'Be brief.' } } },
				{
					id: node(3),
					name: 'Gateway Chat Model',
					type: 'n8n-nodes-model-gateway.gatewayChatModel',
					typeVersion: 1,
					position: [160, 220],
					parameters: { model: { __rl: true, mode: 'list', value: 'chat-sonnet-5' }, options: { effort: 'medium' } },
					credentials: { gatewayApi: credential },
				},
				{ id: node(4), name: 'Calculator', type: '@n8n/n8n-nodes-langchain.toolCalculator', typeVersion: 1, position: [360, 220], parameters: {} },
			],
			connections: {
				Chat: { main: [[{ node: 'AI Agent', type: 'main', index: 0 }]] },
				'Gateway Chat Model': { ai_languageModel: [[{ node: 'AI Agent', type: 'ai_languageModel', index: 0 }]] },
				Calculator: { ai_tool: [[{ node: 'AI Agent', type: 'ai_tool', index: 0 }]] },
			},
		};
	}

	async function rest(method: string, route: string, body?: unknown): Promise<Json> {
		const response = await fetch(`${n8n.url}${route}`, { method, headers: { cookie: n8n.cookie, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
		const text = await response.text();
		if (!response.ok) throw new Error(`${method} ${route}: HTTP ${response.status} ${text.slice(0, 300)}`);
		return JSON.parse(text) as Json;
	}

	/** Posts a chat message and reads the streamed answer, noting when each chunk arrived. */
	function chat(webhookId: string, chatInput: string, sessionId = crypto.randomUUID(), signal?: AbortSignal): Promise<{ status: number; chunks: Chunk[] }> {
		return new Promise((resolve, reject) => {
			const started = Date.now();
			const chunks: Chunk[] = [];
			let rest = '';
			const request = http.request(`${n8n.url}/webhook/${webhookId}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, signal }, (response) => {
				response.setEncoding('utf8');
				response.on('data', (text: string) => {
					const at = Date.now() - started;
					const lines = (rest + text).split('\n');
					rest = lines.pop() ?? '';
					for (const line of lines.filter((l) => l.trim() !== '')) chunks.push({ ...(JSON.parse(line) as { type: string; content?: string }), at });
				});
				response.on('end', () => {
					if (rest.trim() !== '') chunks.push({ ...(JSON.parse(rest) as { type: string }), at: Date.now() - started });
					resolve({ status: response.statusCode ?? 0, chunks });
				});
				response.on('error', reject);
			});
			request.on('error', reject);
			request.end(JSON.stringify({ action: 'sendMessage', sessionId, chatInput }));
		});
	}

	const executions = async (workflowId: string) =>
		((await rest('GET', `/rest/executions?filter=${encodeURIComponent(JSON.stringify({ workflowId }))}`)).data as { results: Array<{ id: string; status: string }> }).results;

	/** The finished execution whose chat message was `chatInput`, with its run data. */
	async function execution(workflowId: string, chatInput: string): Promise<Json & { id: string; status: string; run: Json }> {
		for (let attempt = 0; attempt < 60; attempt++) {
			for (const { id, status } of await executions(workflowId)) {
				if (['running', 'new', 'waiting'].includes(status)) continue;
				const { data } = (await rest('GET', `/rest/executions/${id}`)) as { data: Json & { id: string; status: string; data: string } };
				const run = flatted.parse(data.data) as { resultData: { runData: Record<string, Array<{ data?: { main?: Array<Array<{ json: Json }>> } }>> } };
				if (run.resultData.runData.Chat?.[0]?.data?.main?.[0]?.[0]?.json.chatInput === chatInput) return { ...data, run: run as unknown as Json };
			}
			await new Promise((resolve) => setTimeout(resolve, 250));
		}
		throw new Error(`no finished execution of ${workflowId} for "${chatInput}"`);
	}

	/** The one execution of the workflow still running (n8n stores run data only when it ends). */
	async function runningExecution(workflowId: string): Promise<string> {
		for (let attempt = 0; attempt < 60; attempt++) {
			const running = (await executions(workflowId)).filter((e) => e.status === 'running');
			if (running.length === 1) return running[0].id;
			await new Promise((resolve) => setTimeout(resolve, 250));
		}
		throw new Error(`no running execution of ${workflowId}`);
	}

	const modelUsage = (run: Json) =>
		(((run as { resultData: { runData: Record<string, Array<{ data?: { ai_languageModel?: Array<Array<{ json: Json }>> } }>> } }).resultData.runData['Gateway Chat Model'] ?? []).map(
			(task) => task.data?.ai_languageModel?.[0]?.[0]?.json ?? {},
		));
	const text = (chunks: Chunk[]) => chunks.filter((c) => c.type === 'item').map((c) => c.content).join('');
	const items = (chunks: Chunk[]) => chunks.filter((c) => c.type === 'item');

	beforeAll(async () => {
		const version = TESTED_VERSIONS.n8n2;
		const runtime = await ensureRuntime({ version, dir: defaultDir(version), log: () => undefined });
		flatted = require(path.join(runtime.dir, 'node_modules', 'flatted'));
		gateway = await startGateway();
		hostile = await startHostileGateway({ keepAliveIntervalMs: 500 });
		const good = { id: 'mgwStrCred01', name: 'Model Gateway (streaming)' };
		const bad = { id: 'mgwStrHostile1', name: 'Model Gateway (hostile, streaming)' };
		n8n = await startServer({
			runtime,
			packageDir: ROOT,
			credentials: [gatewayCredential(good, { apiKey: keys.good, baseUrl: gateway.baseUrl }), gatewayCredential(bad, { apiKey: keys.hostile, baseUrl: hostile.baseUrl })],
			workflows: [chatWorkflow('mgwStream0001', webhooks.good, good), chatWorkflow('mgwStream0002', webhooks.hostile, bad), streamingExample(webhooks.example, good)],
			userFolder: path.join(path.dirname(loadE2eRun().userFolder ?? path.join(ROOT, '.n8n-e2e', E2E_LINE, 'user')), 'user-streaming'),
			env: { NODE_OPTIONS: `--require ${DNS_PRELOAD}` },
			owner: { email: 'owner@example.com', password: 'Gateway-E2e-1', firstName: 'E2e', lastName: 'Owner' },
			log: (message: string) => process.stderr.write(`[e2e streaming] ${message}\n`),
		});
		for (const id of ['mgwStream0001', 'mgwStream0002', 'mgwExModel0002']) {
			const { data } = (await rest('GET', `/rest/workflows/${id}`)) as { data: { versionId: string } };
			await rest('POST', `/rest/workflows/${id}/activate`, { versionId: data.versionId });
		}
		// Activation registers the chat webhook a moment later.
		for (const webhookId of Object.values(webhooks)) {
			for (let attempt = 0; ; attempt++) {
				const response = await fetch(`${n8n.url}/webhook/${webhookId}/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'loadPreviousSession', sessionId: 'warm-up' }) });
				await response.arrayBuffer();
				if (response.status !== 404) break;
				if (attempt > 60) throw new Error(`the chat webhook ${webhookId} was never registered`);
				await new Promise((resolve) => setTimeout(resolve, 500));
			}
		}
	}, 300_000);

	afterAll(async () => {
		await n8n?.stop();
		await gateway?.close();
		await hostile?.close();
	}, 60_000);

	/**
	 * examples/chat-streaming-agent.json as a user imports it, with the user's credential; its Chat
	 * Trigger made public (a chat URL) so that a client here can reach it. Its streaming settings
	 * are the file's own.
	 */
	function streamingExample(webhookId: string, credential: { id: string; name: string }): Json {
		const example = JSON.parse(fs.readFileSync(path.join(ROOT, 'examples', 'chat-streaming-agent.json'), 'utf8')) as { nodes: Array<Json & { type: string; parameters: Json; credentials?: Json }> };
		for (const node of example.nodes) {
			if (node.type === '@n8n/n8n-nodes-langchain.chatTrigger') Object.assign(node, { webhookId, parameters: { ...node.parameters, public: true, mode: 'webhook' } });
			if (node.credentials) node.credentials = { gatewayApi: credential };
		}
		return example as unknown as Json;
	}

	it('streams the answer of the streaming chat example into the chat, piece by piece', async () => {
		const example = JSON.parse(fs.readFileSync(path.join(ROOT, 'examples', 'chat-streaming-agent.json'), 'utf8')) as { nodes: Array<{ type: string; parameters: Json }> };
		expect(example.nodes.find((n) => n.type === '@n8n/n8n-nodes-langchain.chatTrigger')?.parameters.options).toEqual({ responseMode: 'streaming' });
		expect(example.nodes.find((n) => n.type === '@n8n/n8n-nodes-langchain.agent')?.parameters.options).toMatchObject({ enableStreaming: true });
		const input = 'Which ferns like shade, in a long sentence one two three four five six seven eight nine ten [stream-pace:120]';
		const { status, chunks } = await chat(webhooks.example, input);
		expect(status).toBe(200);
		expect(text(chunks)).toContain(input);
		const pieces = items(chunks);
		expect(pieces.length).toBeGreaterThanOrEqual(15);
		expect(pieces[pieces.length - 1].at - pieces[0].at).toBeGreaterThanOrEqual(1500);
	}, 60_000);

	it('shows the answer in the chat piece by piece as the gateway writes it, with the real token count', async () => {
		const input = 'Tell me about ferns in a long sentence one two three four five six seven eight nine ten [stream-pace:120]';
		const { status, chunks } = await chat(webhooks.good, input);
		expect(status).toBe(200);
		expect(text(chunks)).toBe(`[Be brief.] Echo from chat-sonnet-5: ${input}`);
		// The gateway writes a piece every 120 ms: the chat receives them spread over the answer, not at its end.
		const pieces = items(chunks);
		expect(pieces.length).toBeGreaterThanOrEqual(15);
		expect(pieces[pieces.length - 1].at - pieces[0].at).toBeGreaterThanOrEqual(1500);
		const arrivals = new Set(pieces.map((piece) => Math.round(piece.at / 60)));
		expect(arrivals.size).toBeGreaterThanOrEqual(10);
		const [request] = gateway.requests.filter((r) => r.rawBody.includes('Tell me about ferns'));
		expect(JSON.parse(request.rawBody)).toMatchObject({ stream: true, stream_options: { include_usage: true }, reasoning_effort: 'medium' });
		const { run, status: finished } = await execution('mgwStream0001', input);
		expect(finished).toBe('success');
		expectRealUsage(modelUsage(run));
	}, 60_000);

	it.each([
		['one tool call', '[call:Calculator {"input": "17 * 23"}]', 'Calculator: [{"response":"391"}]', 1],
		['two parallel tool calls, streamed in pieces', '[tool-pieces] [call:Calculator {"input": "2 + 3"}] and [call:Calculator {"input": "6 * 7"}]', 'Calculator: [{"response":"5"}] | Calculator: [{"response":"42"}]', 2],
	])('streams an agent turn with %s: the results come back, the answer streams, usage is real', async (_case, input, answer, calls) => {
		const { chunks } = await chat(webhooks.good, input);
		expect(text(chunks)).toBe(`[Be brief.] Echo from chat-sonnet-5 with tool results: ${answer}`);
		const turns = gateway.requests.filter((r) => r.path === '/v1/chat/completions' && (JSON.parse(r.rawBody) as { messages: Json[] }).messages.some((m) => m.content === input));
		expect(turns).toHaveLength(2);
		const sentBack = (JSON.parse(turns[1].rawBody) as { messages: Json[] }).messages.filter((m) => m.role === 'tool');
		expect(sentBack).toHaveLength(calls);
		const { run, status } = await execution('mgwStream0001', input);
		expect(status).toBe('success');
		expectRealUsage(modelUsage(run));
	}, 60_000);

	it('ends a broken stream with our words in the chat and in the execution', async () => {
		const input = 'A long answer that breaks [break-stream] one two three four five six seven eight';
		const { chunks } = await chat(webhooks.good, input);
		const error = chunks.find((c) => c.type === 'error');
		expect(error?.content).toMatch(/^The chat model request failed: the connection to 127\.0\.0\.1:\d+ was dropped before the answer was complete\. The partial answer was discarded/);
		const { run, status } = await execution('mgwStream0001', input);
		expect(status).toBe('error');
		expect((run as { resultData: { error: { message: string } } }).resultData.error.message).toMatch(/^The chat model request failed: the connection to .* was dropped before the answer was complete$/);
	}, 60_000);

	it('stops the request to the gateway when the execution is stopped', async () => {
		const input = 'Wait for me [hostile:keepalive-stream]';
		const hangUp = new AbortController();
		const answer = chat(webhooks.hostile, input, crypto.randomUUID(), hangUp.signal).catch((error: unknown) => error);
		const running = await runningExecution('mgwStream0002');
		const request = () => hostile.requests.find((r) => r.body.includes('Wait for me'));
		for (let i = 0; i < 40 && !request(); i++) await new Promise((resolve) => setTimeout(resolve, 100));
		expect(request()?.aborted).toBe(false);
		const stoppedAt = Date.now();
		await rest('POST', `/rest/executions/${running}/stop`);
		for (let i = 0; i < 50 && !request()?.aborted; i++) await new Promise((resolve) => setTimeout(resolve, 100));
		expect(request()?.aborted).toBe(true);
		expect(Date.now() - stoppedAt).toBeLessThan(5000);
		// n8n keeps the chat's answer open for a while after a Stop; the client hangs up itself.
		hangUp.abort();
		await answer;
		expect(hostile.requests.filter((r) => r.body.includes('Wait for me'))).toHaveLength(1);
	}, 60_000);

	it('masks the key a gateway quotes in a stream error, in the chat and everywhere n8n keeps things', async () => {
		const input = 'Hello [hostile:stream-error-key]';
		const { chunks } = await chat(webhooks.hostile, input);
		const error = chunks.find((c) => c.type === 'error');
		expect(error?.content).toMatch(/request rejected, Authorization: Bearer \*\*\*/);
		expect(JSON.stringify(chunks)).not.toContain(keys.hostile.slice(3));
		await execution('mgwStream0002', input);
		expect(hostile.requests.find((r) => r.body.includes('stream-error-key'))?.headers.authorization).toBe(`Bearer ${keys.hostile}`);
		const files = (dir: string): string[] =>
			fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? (entry.name === 'node_modules' ? [] : files(path.join(dir, entry.name))) : [path.join(dir, entry.name)]));
		const leaks = files(n8n.userFolder).flatMap((file) => {
			const bytes = fs.readFileSync(file);
			return [keys.hostile, keys.hostile.slice(3), keys.good].filter((secret) => bytes.includes(secret)).map((secret) => `${path.relative(n8n.userFolder, file)} holds ${secret.slice(0, 12)}…`);
		});
		expect(leaks).toEqual([]);
	}, 60_000);
});
