/**
 * Every node of the package in tool form (`usableAsTool`): n8n makes `<node>Tool` node types of
 * them, and an AI Agent with n8n's own OpenAI chat model (pointed at the loopback gateway, whose
 * `[call:<tool> {args}]` magic word makes the model call a tool) calls each one. The workflows
 * are test/e2e/workflows/tool-*.json; parameters come from the model through `$fromAI()`.
 */
import type { E2eItem, E2eNodeRun } from './harness';
import { describeWorkflow, gatewayRequests, loadE2eResults, loadE2eRun, nodeItems, nodeRun, workflowResult } from './harness';

const results = () => loadE2eResults();
const goodKey = () => `Bearer ${loadE2eRun().credentials.good.apiKey}`;

/** One call of a node in tool form: the arguments the model chose, and what the node returned. */
function toolCalls(run: E2eNodeRun): Array<{ args: Record<string, unknown>; response: unknown; error?: string }> {
	return (run.runs ?? [run]).map((call) => ({
		args: (call.inputOverride?.ai_tool?.[0]?.[0] as E2eItem).json,
		response: (call.connectionOutputs?.ai_tool?.[0]?.[0] as E2eItem | undefined)?.json.response,
		error: call.error?.message,
	}));
}

/** The agent's final answer: the loopback model echoes each tool result as "<tool>: <result>". */
const agentOutputs = (id: string) => nodeItems(results(), id, 'AI Agent').map((item) => String(item.json.output));

/** The chat-model requests of one agent run, found by a word of its prompt. */
const modelRequests = (promptWord: string) =>
	gatewayRequests((r) => r.path === '/v1/chat/completions' && r.rawBody.includes('"tools"') && r.rawBody.includes(promptWord));

/** The tool as the model was offered it: n8n names it after the node and builds its schema from `$fromAI()`. */
function offeredTool(promptWord: string, name: string) {
	const [first] = modelRequests(promptWord);
	const tools = JSON.parse(first.rawBody).tools as Array<{ function: { name: string; description: string; parameters: { properties: object; required?: string[] } } }>;
	return tools.find((t) => t.function.name === name)?.function;
}

describeWorkflow('mgwTool0001', 'Gateway Plant Create as a tool, with a call it refuses', () => {
	const id = 'mgwTool0001';

	it('is offered to the model with the $fromAI() fields as its parameters', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		const tool = offeredTool('Maidenhair Fern', 'Create_Plant');
		expect(tool?.description).toBe('Create a plant in the sample plant store of your model gateway');
		expect(Object.keys(tool?.parameters.properties ?? {}).sort()).toEqual(['id', 'name']);
	});

	it('creates the plant with the model\'s arguments and hands the store\'s answer back to the model', () => {
		const [created] = toolCalls(nodeRun(results(), id, 'Create Plant'));
		expect(created.args).toEqual({ id: '70001', name: 'Maidenhair Fern' });
		expect(created.response).toEqual([{ id: 70001, name: 'Maidenhair Fern', tag: 'agent' }]);
		const posts = gatewayRequests((r) => r.path === '/plants' && r.method === 'POST' && r.rawBody.includes('Maidenhair Fern'));
		expect(posts.map((r) => JSON.parse(r.rawBody))).toEqual([{ id: 70001, name: 'Maidenhair Fern', tag: 'agent' }]);
		expect(posts[0].headers.authorization).toBe(goodKey());
		expect(agentOutputs(id)[0]).toBe(
			'[Use the tools when the user asks for them.] Echo from chat-sonnet-5 with tool results: Create_Plant: [{"id":70001,"name":"Maidenhair Fern","tag":"agent"}]',
		);
	});

	it('refuses an id that is not a whole number before any request, and the model reads why (Continue On Fail)', () => {
		const [, refused] = toolCalls(nodeRun(results(), id, 'Create Plant'));
		expect(refused.args).toEqual({ id: '70.5', name: 'Half Fern' });
		expect(gatewayRequests((r) => r.path === '/plants' && r.rawBody.includes('Half Fern'))).toEqual([]);
		expect(JSON.stringify(refused.response)).toContain('\\"ID\\" must be a whole number, not \\"70.5\\" (item 0)');
		expect(agentOutputs(id)[1]).toContain('Create_Plant: [{"error":"\\"ID\\" must be a whole number, not \\"70.5\\" (item 0)');
	});
});

describeWorkflow('mgwTool0002', 'Gateway Chat as a tool', () => {
	const id = 'mgwTool0002';

	it('asks the other model the question the agent chose, with the fixed system message and model', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		expect(Object.keys(offeredTool('what is a fern', 'Ask_Chat')?.parameters.properties ?? {})).toEqual(['question']);
		const [call] = toolCalls(nodeRun(results(), id, 'Ask Chat'));
		expect(call.args).toEqual({ question: 'what is a fern?' });
		expect(call.response).toEqual([
			expect.objectContaining({ text: '[Answer in one line] Echo from chat-haiku-4-5: what is a fern?', model: 'chat-haiku-4-5', finishReason: 'stop' }),
		]);
		const [sent] = gatewayRequests((r) => r.path === '/v1/chat/completions' && r.rawBody.includes('chat-haiku-4-5'));
		expect(JSON.parse(sent.rawBody)).toMatchObject({
			model: 'chat-haiku-4-5',
			max_tokens: 200,
			messages: [
				{ role: 'system', content: 'Answer in one line' },
				{ role: 'user', content: 'what is a fern?' },
			],
		});
		expect(sent.headers.authorization).toBe(goodKey());
		expect(agentOutputs(id)[0]).toContain('with tool results: Ask_Chat: [{"text":"[Answer in one line] Echo from chat-haiku-4-5: what is a fern?"');
	});
});

describeWorkflow('mgwTool0003', 'Gateway Messages as a tool', () => {
	const id = 'mgwTool0003';

	it('sends the question in the native messages format with its system text and effort', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		const [call] = toolCalls(nodeRun(results(), id, 'Ask Messages'));
		expect(call.args).toEqual({ question: 'how often to water a fern?' });
		expect(call.response).toEqual([
			expect.objectContaining({ text: '[Be brief] Echo from chat-opus-4-8 (effort: low): how often to water a fern?', stopReason: 'end_turn' }),
		]);
		const [sent] = gatewayRequests((r) => r.path === '/v1/messages' && r.rawBody.includes('how often to water'));
		expect(JSON.parse(sent.rawBody)).toMatchObject({
			model: 'chat-opus-4-8',
			max_tokens: 300,
			system: 'Be brief',
			output_config: { effort: 'low' },
			messages: [{ role: 'user', content: 'how often to water a fern?' }],
		});
		expect(agentOutputs(id)[0]).toContain('Ask_Messages: [{"text":"[Be brief] Echo from chat-opus-4-8 (effort: low): how often to water a fern?"');
	});
});

describeWorkflow('mgwTool0004', 'Gateway Image Generate as a tool', () => {
	const id = 'mgwTool0004';

	it('generates the image the agent described and tells the model its link and cost', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		const [call] = toolCalls(nodeRun(results(), id, 'Make Image'));
		expect(call.args).toEqual({ prompt: 'a watercolour fern on white paper' });
		const [image] = call.response as Array<Record<string, unknown>>;
		expect(image).toMatchObject({ model: 'img-image-2', index: 0, url: expect.stringMatching(/\/files\/images\/img_\w+\.png$/), estimatedCostUsd: 0.04 });
		const [sent] = gatewayRequests((r) => r.path === '/v1/images/generations' && r.rawBody.includes('watercolour fern'));
		expect(JSON.parse(sent.rawBody)).toEqual({ model: 'img-image-2', prompt: 'a watercolour fern on white paper', n: 1, response_format: 'url' });
		// Download Image is on by default, so the node fetched the file at once (links are temporary).
		expect(gatewayRequests((r) => r.server === 'files' && String(image.url).endsWith(r.path))).toHaveLength(1);
		expect(agentOutputs(id)[0]).toContain(`Make_Image: [{"model":"img-image-2","index":0,"url":"${String(image.url)}"`);
	});
});

describeWorkflow('mgwTool0005', 'Gateway Video Generate as a tool (waits for the task)', () => {
	const id = 'mgwTool0005';

	it('submits, polls until SUCCESS and gives the model the task id and link', () => {
		expect(workflowResult(results(), id).status).toBe('success');
		const [call] = toolCalls(nodeRun(results(), id, 'Make Video'));
		expect(call.args).toEqual({ prompt: 'a fern unrolling a new frond, time-lapse' });
		const [video] = call.response as Array<Record<string, unknown>>;
		expect(video).toMatchObject({ task_id: expect.stringMatching(/^task_/), status: 'SUCCESS', progress: '100%', model: 'video-2-0-fast-260128' });
		const [submit] = gatewayRequests((r) => r.method === 'POST' && r.path === '/v1/video/generations' && r.rawBody.includes('unrolling'));
		expect(JSON.parse(submit.rawBody)).toEqual({ model: 'video-2-0-fast-260128', prompt: 'a fern unrolling a new frond, time-lapse', seconds: '4', size: '854x480' });
		const polls = gatewayRequests((r) => r.method === 'GET' && r.path === `/v1/video/generations/${String(video.task_id)}`);
		expect(polls).toHaveLength(3);
		expect(gatewayRequests((r) => r.server === 'files' && r.path.includes(String(video.task_id)))).toHaveLength(1);
		expect(agentOutputs(id)[0]).toContain(`Make_Video: [{"task_id":"${String(video.task_id)}","status":"SUCCESS"`);
	});
});
