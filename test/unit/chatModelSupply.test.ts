/**
 * The Gateway Chat Model's own parts that need no gateway: loading n8n's AI node SDK (and the
 * message on an n8n without it), the panel's values, the node's description, and the correction
 * of streamed token usage on the language model n8n gets.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { INode, ISupplyDataFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { GatewayChatModel } from '../../nodes/GatewayChatModel/GatewayChatModel.node';
import { loadAiNodeSdk, sdkMissingError } from '../../nodes/GatewayChatModel/sdk';
import type { AiNodeSdk } from '../../nodes/GatewayChatModel/sdk';
import { readModelInput, supplyGatewayChatModel } from '../../nodes/GatewayChatModel/supply';
import { keepStreamedTokenUsage, streamedUsage } from '../../nodes/GatewayChatModel/usage';

const node: INode = { id: 'n1', name: 'Gateway Chat Model', type: 'n8n-nodes-model-gateway.gatewayChatModel', typeVersion: 1, position: [0, 0], parameters: {} };

function context(parameters: Record<string, unknown>): ISupplyDataFunctions {
	return {
		getNode: () => node,
		getNodeParameter: (name: string, _item: number, fallback?: unknown, options?: { extractValue?: boolean }) => {
			const value = name in parameters ? parameters[name] : fallback;
			if (options?.extractValue && value && typeof value === 'object' && '__rl' in value) return (value as unknown as { value: unknown }).value;
			return value;
		},
		getCredentials: async () => ({ apiKey: 'sk-unit-0123456789', baseUrl: 'http://127.0.0.1:9' }),
	} as unknown as ISupplyDataFunctions;
}

const model = (value: string) => ({ __rl: true, mode: 'id', value });

describe('loading the AI node SDK', () => {
	it('says the node needs n8n 2.16 or newer when n8n has no SDK (n8n 1.x)', async () => {
		const missing = Object.assign(new Error("Cannot find module '@n8n/ai-node-sdk'"), { code: 'MODULE_NOT_FOUND' });
		const error = await loadAiNodeSdk(node, async () => await Promise.reject(missing)).catch((e: unknown) => e);
		expect(error).toBeInstanceOf(NodeOperationError);
		expect((error as Error).message).toBe('Gateway Chat Model needs n8n 2.16 or newer: this n8n does not provide @n8n/ai-node-sdk, the AI node SDK the node is built on');
		expect((error as NodeOperationError).description).toMatch(/from version 2\.16 on.*Gateway Chat and Gateway Messages nodes/);
	});

	it('gives the same message for an SDK without what the node needs', async () => {
		await expect(loadAiNodeSdk(node, async () => ({}) as AiNodeSdk)).rejects.toThrow(sdkMissingError(node).message);
	});

	it('passes any other loading failure on as a node error', async () => {
		await expect(loadAiNodeSdk(node, async () => await Promise.reject(new Error('boom')))).rejects.toThrow('boom');
	});

	it('is what supplyData meets first, before reading anything', async () => {
		const getCredentials = jest.fn();
		const ctx = { ...context({ model: model('chat-sonnet-5') }), getCredentials } as unknown as ISupplyDataFunctions;
		const missing = Object.assign(new Error('no'), { code: 'MODULE_NOT_FOUND' });
		await expect(supplyGatewayChatModel(ctx, 0, async () => await Promise.reject(missing))).rejects.toThrow('needs n8n 2.16 or newer');
		expect(getCredentials).not.toHaveBeenCalled();
	});
});

describe('the panel', () => {
	it('sends the model and max tokens (4096 unless set), and effort and temperature when added', () => {
		expect(readModelInput(context({ model: model('chat-sonnet-5'), options: {} }), 0)).toEqual({ settings: { model: 'chat-sonnet-5', maxTokens: 4096 }, deadlineMs: 600_000, idleMs: 60_000 });
		expect(readModelInput(context({ model: model('chat-opus-4-8'), options: { effort: 'max', maxTokens: 800, temperature: 0.2, timeoutSeconds: 30, idleTimeoutSeconds: 20 } }), 0)).toEqual({
			settings: { model: 'chat-opus-4-8', effort: 'max', maxTokens: 800, temperature: 0.2 },
			deadlineMs: 30_000,
			idleMs: 20_000,
		});
	});

	it('refuses values out of range before anything is sent, naming the field', () => {
		expect(() => readModelInput(context({ model: model('chat-haiku-4-5'), options: { maxTokens: 100_000 } }), 0)).toThrow('"Max Tokens" must be at most 64000 for chat-haiku-4-5, not 100000 (item 0)');
		expect(() => readModelInput(context({ model: model('chat-sonnet-5'), options: { temperature: 3 } }), 0)).toThrow('"Temperature" must be a number from 0 to 2');
		expect(() => readModelInput(context({ model: model('chat-sonnet-5'), options: { effort: 'huge' } }), 0)).toThrow('"Effort" must be one of low, medium, high, xhigh, max');
		expect(() => readModelInput(context({ model: model(' '), options: {} }), 0)).toThrow('"Model" must not be empty');
	});
});

describe('the node', () => {
	const { description } = new GatewayChatModel();

	it('is a chat-model sub-node on the gatewayApi credential, named as the contract says', () => {
		expect(description).toMatchObject({ name: 'gatewayChatModel', displayName: 'Gateway Chat Model', version: 1, inputs: [], outputs: ['ai_languageModel'] });
		expect(description.credentials).toEqual([{ name: 'gatewayApi', required: true, testedBy: 'gatewayApiTest' }]);
		// n8n's rule for AI-only nodes: not offered as a tool.
		expect(description.usableAsTool).toBeUndefined();
	});

	it('lists chat models only, defaults to chat-sonnet-5, and offers effort up to xhigh and max', () => {
		const modelField = description.properties.find((p) => p.name === 'model');
		expect(modelField).toMatchObject({ type: 'resourceLocator', default: { mode: 'list', value: 'chat-sonnet-5' } });
		expect(modelField?.modes?.[0].typeOptions?.searchListMethod).toBe('searchChatModels');
		const options = description.properties.find((p) => p.name === 'options')?.options as Array<{ name: string; options?: Array<{ value: string }> }>;
		expect(options.map((o) => o.name).sort()).toEqual(['effort', 'idleTimeoutSeconds', 'maxTokens', 'temperature', 'timeoutSeconds']);
		expect(options.find((o) => o.name === 'effort')?.options?.map((o) => o.value)).toEqual(['low', 'medium', 'high', 'xhigh', 'max']);
	});
});

describe('streamed token usage', () => {
	const streamedOutput = { generations: [], llmOutput: { tokenUsage: { promptTokens: 21, completionTokens: 8, totalTokens: 29 } } };
	const wholeOutput = { generations: [], llmOutput: { tokenUsage: { input_tokens: 21, output_tokens: 8, total_tokens: 29 } } };

	/** The SDK adapter's tracing parser as it is in 0.31.1: it reads input_tokens / output_tokens only. */
	const adapterParser = (output: { llmOutput?: { tokenUsage?: Record<string, number> } }) => {
		const usage = output?.llmOutput?.tokenUsage;
		const completionTokens = usage?.output_tokens ?? 0;
		const promptTokens = usage?.input_tokens ?? 0;
		return { completionTokens, promptTokens, totalTokens: completionTokens + promptTokens };
	};

	class FakeAdapter {
		callbacks = [{ name: 'N8nLlmTracing', options: { tokensUsageParser: adapterParser } }, { name: 'other' }];

		bindTools(): FakeAdapter {
			return new FakeAdapter();
		}
	}

	it('reads LangChain\'s streamed spelling, and leaves the whole-answer spelling to the adapter', () => {
		expect(streamedUsage(streamedOutput)).toEqual({ promptTokens: 21, completionTokens: 8, totalTokens: 29 });
		expect(streamedUsage(wholeOutput)).toBeUndefined();
		expect(streamedUsage({})).toBeUndefined();
	});

	it('makes the adapter report real counts for a stream, on the model and on every copy bindTools makes', () => {
		const adapter = keepStreamedTokenUsage(new FakeAdapter());
		expect(adapterParser(streamedOutput).completionTokens).toBe(0); // what n8n would see without the correction
		expect(adapter.callbacks[0].options!.tokensUsageParser(streamedOutput)).toEqual({ promptTokens: 21, completionTokens: 8, totalTokens: 29 });
		expect(adapter.callbacks[0].options!.tokensUsageParser(wholeOutput)).toEqual({ promptTokens: 21, completionTokens: 8, totalTokens: 29 });
		const bound = adapter.bindTools().bindTools();
		expect(bound.callbacks[0].options!.tokensUsageParser(streamedOutput).completionTokens).toBe(8);
	});

	it('changes nothing where n8n looks different, and wraps a parser only once', () => {
		expect(keepStreamedTokenUsage(undefined)).toBeUndefined();
		const plain = { callbacks: 'none' };
		expect(keepStreamedTokenUsage(plain)).toBe(plain);
		const adapter = keepStreamedTokenUsage(keepStreamedTokenUsage(new FakeAdapter()));
		const parser = adapter.callbacks[0].options!.tokensUsageParser;
		keepStreamedTokenUsage(adapter);
		expect(adapter.callbacks[0].options!.tokensUsageParser).toBe(parser);
	});
});

describe('the package and n8n 1.x', () => {
	const ROOT = path.resolve(__dirname, '..', '..');
	const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
		n8n: { aiNodeSdkVersion?: number; nodes: string[] };
		peerDependencies: Record<string, string>;
		peerDependenciesMeta?: Record<string, { optional?: boolean }>;
		dependencies?: Record<string, string>;
		devDependencies: Record<string, string>;
	};

	it('declares the AI node SDK as n8n asks: an optional peer, aiNodeSdkVersion 1, never installed or bundled', () => {
		expect(manifest.n8n.aiNodeSdkVersion).toBe(1);
		expect(manifest.peerDependencies['@n8n/ai-node-sdk']).toBe('*');
		// Optional: npm would otherwise install it (and LangChain) beside the package on n8n 1.x.
		expect(manifest.peerDependenciesMeta?.['@n8n/ai-node-sdk']).toEqual({ optional: true });
		expect(Object.keys(manifest.dependencies ?? {})).not.toContain('@n8n/ai-node-sdk');
		expect(Object.keys(manifest.devDependencies)).not.toContain('@n8n/ai-node-sdk');
		expect(manifest.n8n.nodes).toContain('dist/nodes/GatewayChatModel/GatewayChatModel.node.js');
	});

	it('loads the SDK only inside a function of the built code, so n8n 1.x still loads every other node', () => {
		const dist = path.join(ROOT, 'dist');
		if (!fs.existsSync(path.join(dist, 'nodes', 'GatewayChatModel', 'sdk.js'))) throw new Error('not built: run `npm run build` first');
		const files = (fs.readdirSync(dist, { recursive: true, encoding: 'utf8' }) as string[]).filter((file) => file.endsWith('.js'));
		const loads = files.flatMap((file) =>
			fs
				.readFileSync(path.join(dist, file), 'utf8')
				.split('\n')
				.filter((line) => line.includes('@n8n/ai-node-sdk') && /require\(/.test(line))
				.map((line) => [file, line.trim()]),
		);
		expect(loads).toEqual([[path.join('nodes', 'GatewayChatModel', 'sdk.js'), expect.stringMatching(/^async function loadAiNodeSdk\(node, load = async \(\) => await .*require\('@n8n\/ai-node-sdk'\)/)]]);
	});
});
