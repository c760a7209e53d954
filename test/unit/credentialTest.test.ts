/**
 * The credential's Test (nodes/shared/panel/credentialTest.ts) with n8n's request helper replaced by a
 * fake that answers as gateways do: what is sent, the words for every kind of answer, the masking,
 * the checks before anything is sent, and how every node offers the one test function.
 */
import * as path from 'node:path';
import { Readable } from 'node:stream';
import type { ICredentialTestFunctions, ICredentialsDecrypted, INodeType } from 'n8n-workflow';

import { GatewayApi } from '../../credentials/GatewayApi.credentials';
import { GATEWAY_CREDENTIAL_TEST, TEST_DEADLINE_MS, credentialTest, legacyHttpRequest, testGatewayCredential } from '../../nodes/shared/panel/credentialTest';

const KEY = 'sk-unit-credential-test-0123456789';
const HEADER_SECRET = 'portkey-secret-abcdef123456';
const BASE = 'https://gw.example.com';

interface FakeAnswer {
	statusCode: number;
	headers?: Record<string, string>;
	body?: string;
	/** Answer with a Node stream (as n8n's helper does) instead of text. */
	stream?: boolean;
}

type Responder = (options: Record<string, unknown>) => FakeAnswer | Promise<FakeAnswer>;

function fakeContext(respond: Responder) {
	const calls: Array<Record<string, unknown>> = [];
	const request = jest.fn(async (options: object) => {
		const recorded = options as Record<string, unknown>;
		calls.push(recorded);
		const answer = await respond(recorded);
		const body = answer.stream ? Readable.from([Buffer.from(answer.body ?? '')]) : answer.body;
		return { statusCode: answer.statusCode, headers: answer.headers ?? {}, body };
	});
	const ctx = { helpers: { request }, logger: {} } as unknown as ICredentialTestFunctions;
	return { ctx, calls };
}

const json = (statusCode: number, body: unknown, stream = true): FakeAnswer => ({
	statusCode,
	headers: { 'content-type': 'application/json' },
	body: JSON.stringify(body),
	stream,
});

async function runTest(data: Record<string, unknown>, respond: Responder = () => json(200, { object: 'list', data: [{ id: 'a' }, { id: 'b' }] })) {
	const { ctx, calls } = fakeContext(respond);
	const credential: ICredentialsDecrypted = { id: '1', name: 'Gateway', type: 'gatewayApi', data: data as ICredentialsDecrypted['data'] };
	const result = await testGatewayCredential.call(ctx, credential);
	return { result, calls };
}

const good = (more: Record<string, unknown> = {}) => ({ apiKey: KEY, baseUrl: BASE, groupMultiplier: 1, ...more });
const networkError = (code: string) => Object.assign(new Error(`connect ${code}`), { code });

describe('the credential test: what it sends', () => {
	it('one GET /v1/models with the key and the custom headers, n8n following no redirect and throwing on no status', async () => {
		const { result, calls } = await runTest(good({ baseUrl: `${BASE}/gateway/v1/`, customHeaders: JSON.stringify({ 'x-portkey-provider': 'openai', 'x-portkey-api-key': HEADER_SECRET }) }));
		expect(result).toEqual({ status: 'OK', message: 'Connection successful: the gateway accepted the API Key and lists 2 models.' });
		// Then the balance reads (this fake serves none of them: the sentence stays as it is).
		expect(calls.slice(1).map((call) => call.uri)).toEqual(
			['/api/usage/token/', '/v1/dashboard/billing/subscription', '/v1/dashboard/billing/usage', '/api/status'].map((path) => `${BASE}/gateway${path}`),
		);
		expect(calls[0]).toMatchObject({
			uri: `${BASE}/gateway/v1/models`,
			method: 'GET',
			headers: { Authorization: `Bearer ${KEY}`, 'x-portkey-provider': 'openai', 'x-portkey-api-key': HEADER_SECRET },
			json: false,
			useStream: true,
			resolveWithFullResponse: true,
			simple: false,
			followRedirect: false,
			followAllRedirects: false,
		});
		// What is left of the test's deadline when the request goes out: a millisecond may have passed.
		expect(calls[0].timeout).toBeGreaterThan(TEST_DEADLINE_MS - 1000);
		expect(calls[0].timeout).toBeLessThanOrEqual(TEST_DEADLINE_MS);
		expect(calls[0].body).toBeUndefined();
	});

	it('is OK with an answer that has no model list in the usual shape, and reads a body given as text', async () => {
		const { result } = await runTest(good(), () => json(200, { models: [] }, false));
		expect(result).toEqual({ status: 'OK', message: 'Connection successful: the gateway accepted the API Key.' });
	});

	it('follows a redirect within the gateway, with the key', async () => {
		const { result, calls } = await runTest(good(), (options) =>
			options.uri === `${BASE}/v1/models` ? { statusCode: 302, headers: { location: '/api/v1/models' } } : json(200, { data: [{ id: 'a' }] }),
		);
		expect(result).toMatchObject({ status: 'OK', message: 'Connection successful: the gateway accepted the API Key and lists 1 model.' });
		expect(calls.slice(0, 2).map((call) => call.uri)).toEqual([`${BASE}/v1/models`, `${BASE}/api/v1/models`]);
		expect(calls[1].headers).toMatchObject({ Authorization: `Bearer ${KEY}` });
	});
});

describe('the credential test: its words', () => {
	it('401: the key was refused', async () => {
		const { result } = await runTest(good(), () => json(401, { error: { message: 'Invalid token (request id: 42)', type: 'new_api_error', code: 'invalid_api_key' } }));
		expect(result).toEqual({
			status: 'Error',
			message: 'GET /v1/models failed: the gateway refused the API key (HTTP 401): "Invalid token (request id: 42)" (code invalid_api_key). Check the API Key of the Model Gateway credential.',
		});
	});

	it('403: quota or group', async () => {
		const { result } = await runTest(good(), () => json(403, { error: { message: 'this group may not use models', type: 'new_api_error' } }));
		expect(result).toEqual({
			status: 'Error',
			message:
				'GET /v1/models failed: the gateway refused the request for lack of quota or permission (HTTP 403): "this group may not use models". ' +
				"Top up the account, or ask the gateway's administrator which group the key belongs to and what that group may use.",
		});
	});

	it.each([
		['a JSON reason', json(404, { error: { message: 'Invalid URL (GET /v1/models)' } }), ' ("Invalid URL (GET /v1/models)")'],
		['no body', { statusCode: 404 }, ''],
		['a model-ish reason', json(404, { error: { message: 'model list not found', code: 'model_not_found' } }), ' ("model list not found")'],
	])('404 with %s: this server has no model list, the nodes may still work', async (_title, answer, said) => {
		const { result } = await runTest(good(), () => answer);
		expect(result).toEqual({
			status: 'Error',
			message: `This server has no model list: GET /v1/models answered HTTP 404${said}, so the key could not be checked this way. The nodes may still work: try one. If they get a 404 too, check the Base URL (now ${BASE}).`,
		});
	});

	it('400: quotes the reason and points at the Custom Headers (Portkey without its provider header)', async () => {
		const { result } = await runTest(good(), () => json(400, { status: 'failure', message: 'Either x-portkey-config or x-portkey-provider header is required' }));
		expect(result).toEqual({
			status: 'Error',
			message:
				'GET /v1/models failed: the gateway refused the request (HTTP 400): "Either x-portkey-config or x-portkey-provider header is required". ' +
				'The gateway refused the test request for the reason quoted. Relays that need extra headers (Portkey, Helicone, …) say so here: check the Custom Headers and the Base URL.',
		});
	});

	it('500: the gateway\'s own failure, quoted; a proxy page: "usually passes"', async () => {
		const own = await runTest(good(), () => json(500, { error: { message: 'database is locked', type: 'new_api_error', code: 'db_error' } }));
		expect(own.result.message).toBe(
			'GET /v1/models failed: the gateway reported a failure (HTTP 500): "database is locked" (code db_error). ' +
				"The gateway says the request failed on its side. If it keeps happening with the same input, the message above is the gateway's reason: check it with the gateway's administrator.",
		);
		const proxy = await runTest(good(), () => ({ statusCode: 502, headers: { 'content-type': 'text/html' }, body: '<html><head><title>502 Bad Gateway</title></head></html>' }));
		expect(proxy.result.message).toBe(
			'GET /v1/models failed: the gateway reported a failure: it answered with an HTML page ("502 Bad Gateway") (HTTP 502). A proxy in front of the gateway answered instead of the gateway; this usually passes. Try again in a few minutes.',
		);
	});

	it('429: asks to slow down', async () => {
		const { result } = await runTest(good(), () => ({ statusCode: 429 }));
		expect(result).toMatchObject({ status: 'Error', message: expect.stringMatching(/^GET \/v1\/models failed: the gateway asked to slow down \(rate limit\)/) });
	});

	it('a web page where the gateway should be: check the Base URL', async () => {
		const { result } = await runTest(good(), () => ({ statusCode: 200, headers: { 'content-type': 'text/html' }, body: '<!doctype html><title>Welcome</title>' }));
		expect(result).toEqual({
			status: 'Error',
			message:
				'GET /v1/models failed: the gateway answered HTTP 200 with a page instead of JSON: "<!doctype html><title>Welcome</title>". ' +
				'Check the Base URL of the credential: it must be the gateway itself, not a web page in front of it.',
		});
	});

	it('an error inside a 200 is an error', async () => {
		const { result } = await runTest(good(), () => json(200, { success: false, message: '无效的令牌' }));
		expect(result).toMatchObject({ status: 'Error', message: expect.stringMatching(/^GET \/v1\/models failed: the gateway refused the API key: "无效的令牌"\. Check the API Key/) });
	});

	it('301/308 to another origin: the gateway moved, update the Base URL (the key is not sent there)', async () => {
		const { result, calls } = await runTest(good(), () => ({ statusCode: 301, headers: { location: 'https://new.example.com/v1/models' } }));
		expect(result).toEqual({
			status: 'Error',
			message: 'GET /v1/models failed: the gateway moved to https://new.example.com/v1/models (HTTP 301). Update the Base URL of the credential to the new address.',
		});
		expect(calls).toHaveLength(1);
	});

	it.each([
		['ECONNREFUSED', 'GET /v1/models failed: the connection to gw.example.com was refused. Nothing answers at gw.example.com. Check the address and that the server is running.'],
		['ENOTFOUND', 'GET /v1/models failed: the host name gw.example.com could not be resolved. Check the host name gw.example.com.'],
		['ECONNRESET', 'GET /v1/models failed: the connection to gw.example.com was dropped before the answer was complete.'],
		['ETIMEDOUT', 'GET /v1/models failed: gw.example.com did not answer in time. Check the Base URL and that the gateway is running; a gateway behind a slow proxy may need another try.'],
	])('%s names the host', async (code, message) => {
		const { result } = await runTest(good(), () => {
			throw networkError(code);
		});
		expect(result).toEqual({ status: 'Error', message });
	});

	it('never shows the key, its part after sk- or a custom header value; a bearer token that is none of them stays (issue 26)', async () => {
		const quoting = `invalid token Bearer ${KEY}; token=${KEY.slice(3)}; header ${HEADER_SECRET}; other Bearer abc.def.ghi`;
		const { result } = await runTest(good({ customHeaders: JSON.stringify({ 'x-relay-token': HEADER_SECRET }) }), () => json(401, { error: { message: quoting } }));
		expect(result.status).toBe('Error');
		for (const secret of [KEY, KEY.slice(3), HEADER_SECRET]) expect(result.message).not.toContain(secret);
		expect(result.message).toContain('Bearer ***');
		expect(result.message).toContain('other Bearer abc.def.ghi');
	});

	it('an unexpected failure is reported, masked', async () => {
		const { result } = await runTest(good(), () => {
			throw new Error(`something odd with ${KEY}`);
		});
		expect(result.status).toBe('Error');
		expect(result.message).not.toContain(KEY.slice(3));
	});
});

describe('the credential test: refused before anything is sent, naming the field', () => {
	it.each([
		[{ apiKey: '' }, 'The "API Key" of the Model Gateway credential is empty: paste the gateway token (it begins with "sk-")'],
		[{ apiKey: 'very-secret-token-123' }, 'The "API Key" of the Model Gateway credential must begin with "sk-" (the key is not shown here)'],
		[{ baseUrl: `${BASE}?group=vip` }, 'The "Base URL" of the Model Gateway credential contains a query string ("?…"): remove it'],
		[{ baseUrl: `${BASE}/#/console` }, 'The "Base URL" of the Model Gateway credential contains a fragment ("#…"): remove it'],
		[{ baseUrl: 'https://admin:hunter2@gw.example.com' }, 'The "Base URL" of the Model Gateway credential contains a user name or password (user:pass@): remove them; the API Key is the only credential sent'],
		[{ baseUrl: `${BASE}/v1/chat/completions` }, `The "Base URL" of the Model Gateway credential ends with the endpoint path "/v1/chat/completions": remove it, so the Base URL is ${BASE}`],
		[{ baseUrl: `${BASE}/gateway/v1/messages/` }, `The "Base URL" of the Model Gateway credential ends with the endpoint path "/v1/messages/": remove it, so the Base URL is ${BASE}/gateway`],
		[{ baseUrl: 'gw.example.com' }, 'The "Base URL" of the Model Gateway credential must look like http(s)://host[:port][/path], e.g. https://gateway.example.com'],
		[{ customHeaders: `{"x-portkey-api-key": "${HEADER_SECRET}"` }, 'The "Custom Headers" of the Model Gateway credential is not valid JSON: enter an object such as {"x-portkey-provider": "openai"}'],
		[{ customHeaders: '["x-a"]' }, 'The "Custom Headers" of the Model Gateway credential must be a JSON object of header names to text values, e.g. {"x-portkey-provider": "openai"}'],
		[{ customHeaders: JSON.stringify({ authorization: `Bearer ${HEADER_SECRET}` }) }, 'The "Custom Headers" of the Model Gateway credential may not set "authorization": the API Key is sent as the Authorization header'],
		[{ customHeaders: JSON.stringify({ 'x-a': { nested: HEADER_SECRET } }) }, 'The "Custom Headers" of the Model Gateway credential has a value for "x-a" that is not text'],
	])('%j', async (change, message) => {
		const { result, calls } = await runTest(good(change));
		expect(result).toEqual({ status: 'Error', message });
		expect(calls).toHaveLength(0);
		for (const secret of ['very-secret-token-123', 'hunter2', HEADER_SECRET]) expect(result.message).not.toContain(secret);
	});
});

describe('the request adapter', () => {
	it('passes a body and wraps a missing one as an empty stream', async () => {
		const request = jest.fn(async () => ({ statusCode: 204, headers: {} }));
		const send = legacyHttpRequest(request);
		const answer = (await send({ url: `${BASE}/x`, method: 'POST', body: '{"a":1}', headers: { a: 'b' }, timeout: 5 })) as { statusCode: number; body: AsyncIterable<Buffer> };
		expect(request).toHaveBeenCalledWith(expect.objectContaining({ uri: `${BASE}/x`, method: 'POST', body: '{"a":1}', headers: { a: 'b' }, timeout: 5 }));
		const chunks: Buffer[] = [];
		for await (const chunk of answer.body) chunks.push(chunk);
		expect(answer.statusCode).toBe(204);
		expect(chunks).toEqual([]);
	});
});

/** Every node package.json lists, from its source (`dist/nodes/X/X.node.js` -> `nodes/X/X.node.ts`). */
function packageNodes(): INodeType[] {
	const root = path.resolve(__dirname, '..', '..');
	const { n8n } = require(path.join(root, 'package.json')) as { n8n: { nodes: string[] } };
	return n8n.nodes.map((file) => {
		const source = path.join(root, file.replace(/^dist\//, '').replace(/\.js$/, ''));
		const className = path.basename(source).replace(/\.node$/, '');
		const NodeClass = (require(source) as Record<string, new () => INodeType>)[className];
		return new NodeClass();
	});
}

describe('every node that uses the credential offers the one credential test', () => {
	const nodes = packageNodes().filter((node) => node.description.credentials?.some((credential) => credential.name === 'gatewayApi'));

	it('there are such nodes', () => expect(nodes.length).toBeGreaterThanOrEqual(5));

	it.each(nodes.map((node) => [node.description.name, node]))('%s: testedBy gatewayApiTest, the shared function', (_name, node) => {
		expect(node.description.credentials).toEqual([{ name: 'gatewayApi', required: true, testedBy: GATEWAY_CREDENTIAL_TEST }]);
		expect(node.methods?.credentialTest).toBe(credentialTest);
		expect(node.methods?.credentialTest?.[GATEWAY_CREDENTIAL_TEST]).toBe(testGatewayCredential);
	});

	it('the credential has no declarative test (n8n would never call the nodes\' function while it had one)', () => {
		expect((new GatewayApi() as { test?: unknown }).test).toBeUndefined();
	});
});
