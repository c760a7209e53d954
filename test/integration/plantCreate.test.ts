/** Gateway Plant Create's execute() against the loopback plant store, over real HTTP. */
import { NodeApiError } from 'n8n-workflow';
import type { IDataObject } from 'n8n-workflow';

import { GatewayPlantCreate } from '../../nodes/GatewayPlantCreate/GatewayPlantCreate.node';
import { useGateway } from '../gateway/testing';
import { createExecuteContext } from '../helpers/executeContext';

const KEY = 'sk-integration-plants-0123456789';
// One loopback gateway for the file, with a clean log and state before each test.
const env = useGateway();

async function run(rows: IDataObject[], options: { continueOnFail?: boolean; apiKey?: string } = {}) {
	const { ctx } = createExecuteContext({
		parameters: (itemIndex) => rows[itemIndex],
		items: rows.map((row) => ({ json: row })),
		credentials: { apiKey: options.apiKey ?? KEY, baseUrl: env.gateway.baseUrl },
		continueOnFail: options.continueOnFail,
	});
	return await new GatewayPlantCreate().execute.call(ctx);
}

const plantPosts = () => env.gateway.requests.filter((request) => request.path === '/plants' && request.method === 'POST');

it('creates plants and returns what the store answered, paired with the input', async () => {
	const [output] = await run([
		{ id: 101, name: 'Monstera', tag: 'indoor' },
		{ id: '102', name: 'Fern', tag: '' },
	]);
	expect(output).toEqual([
		{ json: { id: 101, name: 'Monstera', tag: 'indoor' }, pairedItem: { item: 0 } },
		{ json: { id: 102, name: 'Fern' }, pairedItem: { item: 1 } },
	]);
	expect(plantPosts().map((request) => request.rawBody)).toEqual(
		expect.arrayContaining(['{"id":101,"name":"Monstera","tag":"indoor"}', '{"id":102,"name":"Fern"}']),
	);
	expect(plantPosts()[0].headers['content-type']).toMatch(/application\/json/);
	expect(plantPosts()[0].headers.authorization).toBe(`Bearer ${KEY}`);
});

it('sends an id beyond 2^53 with every digit and keeps it exact in the output', async () => {
	const [output] = await run([{ id: '9007199254740993', name: 'Exact' }]);
	expect(plantPosts()[0].rawBody).toBe('{"id":9007199254740993,"name":"Exact"}');
	expect(output[0].json).toEqual({ id: '9007199254740993', name: 'Exact' });
});

it("quotes the store's 400 Error message and code", async () => {
	await run([{ id: 7, name: 'First' }]);
	const exists = await run([{ id: 7, name: 'Again' }]).catch((error: NodeApiError) => error);
	expect(exists).toBeInstanceOf(NodeApiError);
	expect((exists as NodeApiError).message).toBe('Creating the plant failed: the gateway refused the request (HTTP 400): "plant with id 7 already exists" (code 409)');
	// An earlier run that failed on the way may have created it: said, not hidden.
	expect((exists as NodeApiError).description).toMatch(/probably created plant 7: check the store, and do not create it again/);
	await expect(run([{ id: 8, name: 'Weed [reject]' }])).rejects.toThrow(
		'Creating the plant failed: the gateway refused the request (HTTP 400): "plant name rejected by the store" (code 4001)',
	);
});

it.each(['502-html', 'reset'] as const)('does not send a plant again after %s, and says it may have been created', async (fault) => {
	env.gateway.queueFaults('/plants', [fault]);
	const error = (await run([{ id: 31, name: 'Once' }]).catch((e: unknown) => e)) as NodeApiError;
	expect(error.message).toMatch(/^Creating the plant failed: /);
	expect(error.description).toMatch(/^The request may have gone through even so: it was not sent again, so as not to create plant 31 twice/);
	expect(plantPosts()).toHaveLength(1);
});

it('with Continue On Fail, a refused plant becomes an error item and the others go on', async () => {
	const [output] = await run(
		[
			{ id: 1, name: 'Rose' },
			{ id: 2, name: 'Bad [reject]' },
			{ id: 'x', name: 'Invalid id' },
			{ id: 3, name: 'Lily' },
		],
		{ continueOnFail: true },
	);
	expect(output.map((item) => item.json)).toEqual([
		{ id: 1, name: 'Rose' },
		{
			error: 'Creating the plant failed: the gateway refused the request (HTTP 400): "plant name rejected by the store" (code 4001)',
			errorDescription: 'Check the fields the gateway names in its message.',
			kind: 'bad_request',
			httpCode: 400,
			gatewayMessage: 'plant name rejected by the store',
			gatewayCode: 4001,
			mayHaveActed: false,
		},
		{ error: '"ID" must be a whole number, not "x" (item 2)', errorDescription: 'The plant store takes an int64 whole number.' },
		{ id: 3, name: 'Lily' },
	]);
	expect(output.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }, { item: 3 }]);
	expect(plantPosts()).toHaveLength(3);
});

it('sends nothing when any item is invalid (without Continue On Fail)', async () => {
	await expect(
		run([
			{ id: 1, name: 'Rose' },
			{ id: 2, name: '' },
		]),
	).rejects.toThrow('"Name" must not be empty (item 1)');
	expect(env.gateway.requests).toHaveLength(0);
});

it('rides out a rate limit', async () => {
	const [output] = await run([{ id: 55, name: 'Patient [429-once]' }]);
	expect(output[0].json).toEqual({ id: 55, name: 'Patient [429-once]' });
	expect(plantPosts()).toHaveLength(2);
});

it('reports a refused key in plain words without the key', async () => {
	const badKey = 'sk-invalid-plants-SECRET-999';
	const error = await run([{ id: 1, name: 'Rose' }], { apiKey: badKey }).catch((e) => e);
	expect(error.message).toMatch(/^Creating the plant failed: the gateway refused the API key \(HTTP 401\): "Invalid token/);
	const shown = JSON.stringify({ ...error, message: error.message, description: error.description, context: error.context, stack: error.stack });
	expect(shown).not.toContain(badKey.slice(3));
});
