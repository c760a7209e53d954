// The loopback gateway's plant store: int64 ids are checked and echoed digit for digit, and
// every answer matches the schemas of test/fixtures/plant-store.openapi.yaml.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import YAML from 'yaml';
import { gatewayClient, useGateway } from '../gateway/testing';

const storeDoc = YAML.parse(readFileSync(join(__dirname, '..', 'fixtures', 'plant-store.openapi.yaml'), 'utf8'));
// int32/int64 are OpenAPI formats, not JSON Schema ones; the integer type is still checked.
const ajv = new Ajv({ strict: false, validateFormats: false });
ajv.addSchema({ $id: 'store', components: storeDoc.components });
const isPlant = ajv.getSchema('store#/components/schemas/Plant')!;
const isError = ajv.getSchema('store#/components/schemas/Error')!;

const env = useGateway();

async function create(rawBody: string): Promise<{ status: number; text: string }> {
	const response = await env.api.post('/plants', rawBody);
	return { status: response.status, text: await response.text() };
}

describe('POST /plants', () => {
	it('echoes an int64 id beyond 2^53 with its exact digits', async () => {
		const raw = '{ "id": 9223372036854775807, "name": "Monstera", "tag": "indoor" }';
		const answer = await create(raw);
		expect(answer).toEqual({ status: 200, text: '{"id":9223372036854775807,"name":"Monstera","tag":"indoor"}' });
		expect(isPlant(JSON.parse(answer.text))).toBe(true);
		expect(env.gateway.requests[0]).toMatchObject({ method: 'POST', path: '/plants', rawBody: raw });
	});

	it.each(['9007199254740993', '-9223372036854775808', '0', '42'])('accepts id %s exactly', async (id) => {
		expect(await create(`{"id":${id},"name":"Fern"}`)).toEqual({ status: 200, text: `{"id":${id},"name":"Fern"}` });
	});

	it.each([
		['{"name":"Fern"}', /^id is required$/],
		['{"id":"12","name":"Fern"}', /id must be an integer \(int64\), got a string/],
		['{"id":1.5,"name":"Fern"}', /id must be an integer/],
		['{"id":1e3,"name":"Fern"}', /id must be an integer/],
		['{"id":9223372036854775808,"name":"Fern"}', /out of the int64 range/],
		['{"id":-9223372036854775809,"name":"Fern"}', /out of the int64 range/],
		['{"id":1}', /^name is required$/],
		['{"id":1,"name":5}', /name must be a string/],
		['{"id":1,"name":"Fern","tag":null}', /tag must be a string, got a null/],
		['{"id":1,"name":"Fern"', /not valid JSON/],
		['[]', /must be a JSON object/],
	])('refuses %s with a 400 Error body', async (raw, message) => {
		const answer = await create(raw);
		expect(answer.status).toBe(400);
		const body = JSON.parse(answer.text);
		expect(isError(body)).toBe(true);
		expect(body).toEqual({ error: 400, message: expect.stringMatching(message) });
	});

	it('refuses a duplicate id with error 409 (still HTTP 400)', async () => {
		await create('{"id":9223372036854775807,"name":"Fern"}');
		const again = await create('{"id":9223372036854775807,"name":"Other"}');
		expect(again.status).toBe(400);
		expect(JSON.parse(again.text)).toEqual({ error: 409, message: 'plant with id 9223372036854775807 already exists' });
	});

	it('[reject] in the name is refused by the store with error 4001', async () => {
		const answer = await create('{"id":5,"name":"Weed [reject]"}');
		expect([answer.status, JSON.parse(answer.text)]).toEqual([400, { error: 4001, message: 'plant name rejected by the store' }]);
	});

	it('[429-once] in the name gets one bare 429', async () => {
		expect(await create('{"id":6,"name":"[429-once] Ivy"}')).toEqual({ status: 429, text: '' });
		expect((await create('{"id":6,"name":"[429-once] Ivy"}')).status).toBe(200);
	});

	it('needs the bearer key', async () => {
		const anonymous = await gatewayClient(env.gateway.baseUrl, null).post('/plants', '{"id":1,"name":"Fern"}');
		expect(anonymous.status).toBe(401);
		expect(await anonymous.json()).toMatchObject({ error: 401, message: expect.stringMatching(/^Token not provided/) });
		const invalid = await gatewayClient(env.gateway.baseUrl, 'sk-invalid-x').post('/plants', '{"id":1,"name":"Fern"}');
		expect(invalid.status).toBe(401);
		expect(env.gateway.requests.map((r) => r.headers.authorization)).toEqual([undefined, 'Bearer sk-invalid-x']);
	});
});

describe('GET and DELETE /plants', () => {
	it('lists plants with exact ids, honours limit, and deletes', async () => {
		await create('{"id":9223372036854775806,"name":"A","tag":"t"}');
		await create('{"id":2,"name":"B"}');
		const list = await env.api.get('/plants');
		expect(await list.text()).toBe('[{"id":9223372036854775806,"name":"A","tag":"t"},{"id":2,"name":"B"}]');
		expect(await (await env.api.get('/plants?limit=1')).text()).toBe('[{"id":9223372036854775806,"name":"A","tag":"t"}]');

		const removed = await env.api.get('/plants/2', { method: 'DELETE' });
		expect(removed.status).toBe(204);
		const missing = await env.api.get('/plants/2', { method: 'DELETE' });
		expect([missing.status, await missing.json()]).toEqual([400, { error: 404, message: 'plant with id 2 not found' }]);
	});
});
