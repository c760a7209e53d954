/**
 * The Model Gateway credential's Test as the editor's Test button runs it, in a real n8n: one
 * `n8n start` per line (beside the workflow batch of globalSetup, which this file does not read),
 * an owner signed in, and for each case the editor's two REST calls: save the credential
 * (`POST /rest/credentials`), then test it (`POST /rest/credentials/test` with
 * `{ credentials: { id, name, type, data } }`). n8n finds our test function through the nodes'
 * `testedBy` and answers `{ status, message }`, which the editor shows as it is.
 *
 * Runs unless E2E_N8N_LINES leaves its line out, or E2E_ONLY is set without a part that matches
 * "credential" (e.g. `E2E_ONLY=mgwSmoke0001,credential` runs this file and one tiny workflow).
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { freePort, startServer } from '../../scripts/n8n/headless';
import { defaultDir, ensureRuntime } from '../../scripts/n8n/runtime';
import { startGateway } from '../gateway';
import type { Gateway, LoggedRequest } from '../gateway';
import { E2E_LINE, E2E_N8N_VERSION } from './harness';
import { lineDir, selectedByOnly, selectedLines, TESTED_VERSIONS } from './paths';

interface N8nServer {
	url: string;
	cookie: string;
	logFile: string;
	stop(): Promise<void>;
}

/** What this file uses of scripts/n8n/headless.js's startServer (typed here: the JS infers every option as required). */
const startN8n = startServer as unknown as (options: { runtime: unknown; userFolder: string; owner: object; log: (msg: string) => void }) => Promise<N8nServer>;

interface TestResult {
	status: 'OK' | 'Error';
	message: string;
}


const RUNS = selectedLines().includes(E2E_LINE) && selectedByOnly('credential-test', 'credential');
const OWNER = { email: 'owner@example.com', password: 'Credential-Test-1', firstName: 'Cred', lastName: 'Tester' };
const log = (msg: string) => process.stderr.write(`[e2e credential test ${E2E_LINE}] ${msg}\n`);

const secret = (prefix: string) => `${prefix}${crypto.randomBytes(10).toString('hex')}`;
const KEYS = {
	good: secret('sk-e2e-cred-'),
	invalid: secret('sk-invalid-'),
	noQuota: secret('sk-noquota-'),
	noModels: secret('sk-nomodels-'),
};
const HEADER_SECRET = secret('portkey-secret-');
const ALL_SECRETS = [...Object.values(KEYS), HEADER_SECRET];
/** Every secret and its part after `sk-`: none may appear in any message or in n8n's log. */
const FORBIDDEN = ALL_SECRETS.flatMap((value) => (value.startsWith('sk-') ? [value, value.slice(3)] : [value]));

(RUNS ? describe : describe.skip)(`the credential's Test through n8n's REST API on n8n ${E2E_N8N_VERSION}`, () => {
	jest.setTimeout(240_000);
	let gateway: Gateway;
	let n8n: N8nServer;
	let closedPort: number;
	const messages: string[] = [];
	/** Every answer, written to <line>/credential-test.json for a person to read. */
	const answers: Array<{ data: Record<string, unknown>; result: TestResult }> = [];

	async function rest<T>(method: string, route: string, body?: unknown): Promise<T> {
		const response = await fetch(`${n8n.url}/rest${route}`, {
			method,
			headers: { 'content-type': 'application/json', cookie: n8n.cookie },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await response.text();
		if (!response.ok) throw new Error(`${method} /rest${route}: HTTP ${response.status} ${text.slice(0, 500)}`);
		const parsed = JSON.parse(text) as { data?: T };
		return (parsed.data ?? parsed) as T;
	}

	/** What the editor does on Save and then Test: create the credential, then test it with its id. */
	async function testCredential(data: Record<string, unknown>, name = `Gateway ${crypto.randomBytes(3).toString('hex')}`): Promise<TestResult> {
		const created = await rest<{ id: string }>('POST', '/credentials', { name, type: 'gatewayApi', data });
		const result = await rest<TestResult>('POST', '/credentials/test', { credentials: { id: created.id, name, type: 'gatewayApi', data } });
		messages.push(result.message);
		answers.push({ data: { ...data, apiKey: '(not shown)', ...(data.customHeaders ? { customHeaders: '(not shown)' } : {}) }, result });
		return result;
	}

	const credential = (apiKey: string, baseUrl = gateway.baseUrl, more: Record<string, unknown> = {}) => ({ apiKey, baseUrl, groupMultiplier: 1, ...more });
	const modelRequests = (): LoggedRequest[] => gateway.requests.filter((request) => request.path === '/v1/models');

	beforeAll(async () => {
		gateway = await startGateway();
		closedPort = await freePort();
		const version = (TESTED_VERSIONS as Record<string, string>)[E2E_LINE];
		const runtime = await ensureRuntime({ version, dir: defaultDir(version), log });
		const userFolder = path.join(lineDir(E2E_LINE), 'credential-test');
		n8n = await startN8n({ runtime, userFolder, owner: OWNER, log });
	});

	afterAll(async () => {
		if (answers.length) fs.writeFileSync(path.join(lineDir(E2E_LINE), 'credential-test.json'), JSON.stringify(answers, null, 1));
		await n8n?.stop();
		await gateway?.close();
	});

	it('answers OK for a good key, and the gateway saw the key and the custom headers on GET /v1/models', async () => {
		const result = await testCredential(credential(KEYS.good, gateway.baseUrl, { customHeaders: JSON.stringify({ 'x-portkey-provider': 'openai', 'x-portkey-api-key': HEADER_SECRET }) }));
		expect(result).toEqual({ status: 'OK', message: 'Connection successful: the gateway accepted the API Key and lists 12 models; 50.00 USD left on this key.' });
		const [request] = modelRequests().slice(-1);
		expect(request.headers).toMatchObject({ authorization: `Bearer ${KEYS.good}`, 'x-portkey-provider': 'openai', 'x-portkey-api-key': HEADER_SECRET });
	});

	it('accepts a pasted /v1 and a trailing slash', async () => {
		expect(await testCredential(credential(KEYS.good, `${gateway.baseUrl}/v1/`))).toMatchObject({ status: 'OK' });
	});

	it('tests a saved credential again as the editor sends it (secrets redacted, n8n fills them in)', async () => {
		const name = 'Gateway saved';
		const created = await rest<{ id: string }>('POST', '/credentials', { name, type: 'gatewayApi', data: credential(KEYS.good) });
		const stored = await rest<{ data: Record<string, unknown> }>('GET', `/credentials/${created.id}?includeData=true`);
		expect(JSON.stringify(stored)).not.toContain(KEYS.good);
		const result = await rest<TestResult>('POST', '/credentials/test', { credentials: { id: created.id, name, type: 'gatewayApi', data: stored.data } });
		expect(result).toMatchObject({ status: 'OK' });
	});

	it('401: the key was refused, check the API Key', async () => {
		const result = await testCredential(credential(KEYS.invalid));
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/^GET \/v1\/models failed: the gateway refused the API key \(HTTP 401\): "Invalid token \(request id: \w+\)" \(code invalid_api_key\)\. Check the API Key of the Model Gateway credential\.$/);
	});

	it('403: quota or group, quoting the gateway', async () => {
		const result = await testCredential(credential(KEYS.noQuota));
		expect(result).toEqual({
			status: 'Error',
			message:
				'GET /v1/models failed: the gateway refused the request for lack of quota or permission (HTTP 403): "user quota is not enough" (code insufficient_user_quota). ' +
				"Top up the account, or ask the gateway's administrator which group the key belongs to and what that group may use.",
		});
	});

	it('404: a server without GET /v1/models, whose nodes may still work', async () => {
		const result = await testCredential(credential(KEYS.noModels));
		expect(result).toEqual({
			status: 'Error',
			message:
				'This server has no model list: GET /v1/models answered HTTP 404 ("Invalid URL (GET /v1/models)"), so the key could not be checked this way. ' +
				`The nodes may still work: try one. If they get a 404 too, check the Base URL (now ${gateway.baseUrl}).`,
		});
	});

	it('another status quotes the server\'s reason (a 500)', async () => {
		gateway.queueFaults('/v1/models', ['500-json']);
		const result = await testCredential(credential(KEYS.good));
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/^GET \/v1\/models failed: the gateway reported a failure \(HTTP 500\): "bad response status code 500 \(request id: \w+\)" \(code bad_response_status_code\)\. The gateway says the request failed on its side\./);
	});

	it('a refused connection names the host', async () => {
		const result = await testCredential(credential(KEYS.good, `http://127.0.0.1:${closedPort}`));
		expect(result).toEqual({
			status: 'Error',
			message: `GET /v1/models failed: the connection to 127.0.0.1:${closedPort} was refused. Nothing answers at 127.0.0.1:${closedPort}. Check the address and that the server is running.`,
		});
	});

	it('an unknown host is named', async () => {
		const result = await testCredential(credential(KEYS.good, 'http://mgw-no-such-host.invalid'));
		expect(result).toEqual({
			status: 'Error',
			message: 'GET /v1/models failed: the host name mgw-no-such-host.invalid could not be resolved. Check the host name mgw-no-such-host.invalid.',
		});
	});

	describe('refuses each Base URL form that cannot work, naming the part to remove (nothing is sent)', () => {
		const cases: Array<[string, (base: string) => string, RegExp]> = [
			['a query string', (base) => `${base}?group=default`, /^The "Base URL" of the Model Gateway credential contains a query string \("\?…"\): remove it$/],
			['a fragment', (base) => `${base}#settings`, /^The "Base URL" of the Model Gateway credential contains a fragment \("#…"\): remove it$/],
			['user:pass@', (base) => base.replace('http://', 'http://admin:hunter2@'), /^The "Base URL" of the Model Gateway credential contains a user name or password \(user:pass@\): remove them; the API Key is the only credential sent$/],
			['a pasted /v1/chat/completions', (base) => `${base}/v1/chat/completions`, /^The "Base URL" of the Model Gateway credential ends with the endpoint path "\/v1\/chat\/completions": remove it, so the Base URL is http:\/\/127\.0\.0\.1:\d+$/],
		];
		it.each(cases)('%s', async (_title, baseUrl, expected) => {
			const before = gateway.requests.length;
			const result = await testCredential(credential(KEYS.good, baseUrl(gateway.baseUrl)));
			expect(result.status).toBe('Error');
			expect(result.message).toMatch(expected);
			expect(result.message).not.toContain('hunter2');
			expect(gateway.requests.length).toBe(before);
		});
	});

	it('refuses Custom Headers that are not a JSON object, and one that sets Authorization, without their values', async () => {
		const broken = await testCredential(credential(KEYS.good, gateway.baseUrl, { customHeaders: `{"x-portkey-api-key": "${HEADER_SECRET}"` }));
		expect(broken).toEqual({ status: 'Error', message: 'The "Custom Headers" of the Model Gateway credential is not valid JSON: enter an object such as {"x-portkey-provider": "openai"}' });
		const authorization = await testCredential(credential(KEYS.good, gateway.baseUrl, { customHeaders: JSON.stringify({ Authorization: `Bearer ${KEYS.invalid}` }) }));
		expect(authorization).toEqual({
			status: 'Error',
			message: 'The "Custom Headers" of the Model Gateway credential may not set "Authorization": the API Key is sent as the Authorization header',
		});
	});

	it('never shows a key or a header value, in any message or in n8n\'s log', () => {
		expect(messages.length).toBeGreaterThanOrEqual(14);
		for (const message of messages) for (const value of FORBIDDEN) expect(message).not.toContain(value);
		const n8nLog = fs.readFileSync(n8n.logFile, 'utf8');
		for (const value of FORBIDDEN) expect(n8nLog).not.toContain(value);
	});
});
