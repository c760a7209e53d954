/**
 * The credential's values read and checked in one place (credentialSettings.ts), for the nodes,
 * the credential's authentication and its test: the forms of the Base URL that cannot work are
 * refused saying what to change, and a bad Custom Headers value is refused naming the field and
 * never repeating a value (values are often secrets of their own).
 */
import { NodeOperationError } from 'n8n-workflow';
import type { INode } from 'n8n-workflow';

import { CredentialProblem, checkApiKey, checkBaseUrl, checkCustomHeaders, checkGatewayCredential, readGatewayCredential } from '../../nodes/shared/credential/settings';

const node: INode = { id: 'n1', name: 'Gateway Node', type: 'n8n-nodes-model-gateway.test', typeVersion: 1, position: [0, 0], parameters: {} };

/** The problem a check raises; fails the test when it raises nothing or something else. */
function problemOf(check: () => unknown): CredentialProblem {
	try {
		check();
	} catch (error) {
		if (error instanceof CredentialProblem) return error;
		throw error;
	}
	throw new Error('expected a CredentialProblem');
}

describe('Base URL', () => {
	it.each([
		['https://gw.example.com', 'https://gw.example.com'],
		['https://gw.example.com/', 'https://gw.example.com'],
		['https://gw.example.com/v1', 'https://gw.example.com'],
		['https://gw.example.com/v1/', 'https://gw.example.com'],
		['  http://127.0.0.1:8080/gateway/v1/  ', 'http://127.0.0.1:8080/gateway'],
	])('accepts %s as %s', (raw, normalised) => {
		expect(checkBaseUrl(raw)).toBe(normalised);
	});

	it.each([
		['https://gw.example.com/v1/chat/completions', '"/v1/chat/completions"', 'https://gw.example.com'],
		['https://gw.example.com/gateway/v1/messages/', '"/v1/messages/"', 'https://gw.example.com/gateway'],
		['https://gw.example.com/v1/images/generations', '"/v1/images/generations"', 'https://gw.example.com'],
		['https://gw.example.com/v1/models', '"/v1/models"', 'https://gw.example.com'],
	])('refuses a pasted endpoint path %s, naming the part to remove and the Base URL to use', (raw, part, base) => {
		const problem = problemOf(() => checkBaseUrl(raw));
		expect(problem.field).toBe('Base URL');
		expect(problem.message).toBe(`The "Base URL" of the Model Gateway credential ends with the endpoint path ${part}: remove it, so the Base URL is ${base}`);
	});

	it.each([
		['https://gw.example.com/?key=abc', 'contains a query string ("?…"): remove it'],
		['https://gw.example.com/v1?x', 'contains a query string ("?…"): remove it'],
		['https://gw.example.com/#top', 'contains a fragment ("#…"): remove it'],
		['https://user:pass@gw.example.com', 'contains a user name or password (user:pass@): remove them'],
		['https://user@gw.example.com', 'contains a user name or password (user:pass@): remove them'],
		['ftp://gw.example.com', 'must start with http:// or https://, not ftp://'],
		['gw.example.com', 'must look like http(s)://host[:port][/path]'],
		['', 'is empty'],
	])('refuses %s', (raw, said) => {
		const problem = problemOf(() => checkBaseUrl(raw));
		expect(problem.field).toBe('Base URL');
		expect(problem.message).toContain(`The "Base URL" of the Model Gateway credential ${said}`);
	});

	it('never repeats a password given in the address', () => {
		expect(problemOf(() => checkBaseUrl('https://admin:hunter2-secret@gw.example.com')).message).not.toContain('hunter2-secret');
	});
});

describe('API Key', () => {
	it('accepts a key beginning with sk-, trimmed', () => {
		expect(checkApiKey('  sk-abc123\n')).toBe('sk-abc123');
	});

	it.each([
		['', 'is empty'],
		['abc-very-secret-value', 'must begin with "sk-"'],
		['sk-abc def-secret', 'contains spaces or line breaks'],
	])('refuses %j without repeating it', (raw, said) => {
		const problem = problemOf(() => checkApiKey(raw));
		expect(problem.message).toContain(`The "API Key" of the Model Gateway credential ${said}`);
		if (raw !== '') expect(problem.message).not.toContain(raw.slice(4));
	});
});

describe('Custom Headers', () => {
	it('reads a JSON object of header names to text values (or nothing)', () => {
		expect(checkCustomHeaders('{"x-portkey-provider": "openai", "x-retries": 3, "x-debug": true}')).toEqual({
			'x-portkey-provider': 'openai',
			'x-retries': '3',
			'x-debug': 'true',
		});
		expect(checkCustomHeaders({ 'x-a': 'b' })).toEqual({ 'x-a': 'b' });
		for (const empty of [undefined, null, '', '   ']) expect(checkCustomHeaders(empty)).toEqual({});
	});

	const SECRET = 'pk-live-9f8e7d6c5b4a-secret';

	it.each([
		[`{"x-portkey-api-key": "${SECRET}"`, 'is not valid JSON'],
		[`["${SECRET}"]`, 'must be a JSON object of header names to text values'],
		[`"${SECRET}"`, 'must be a JSON object of header names to text values'],
		['42', 'must be a JSON object of header names to text values'],
		[`{"Authorization": "Bearer ${SECRET}"}`, 'may not set "Authorization": the API Key is sent as the Authorization header'],
		[`{"authorization": "${SECRET}"}`, 'may not set "authorization"'],
		[`{"Host": "${SECRET}"}`, 'may not set "Host": the node sets it itself'],
		[`{"x-portkey-config": {"key": "${SECRET}"}}`, 'has a value for "x-portkey-config" that is not text'],
		[`{"x-list": ["${SECRET}"]}`, 'has a value for "x-list" that is not text'],
		[`{"x-null": null}`, 'has a value for "x-null" that is not text'],
		[`{"x-a": "${SECRET}\\r\\nX-Injected: 1"}`, 'has a line break in the value of "x-a"'],
		[`{"bad name": "${SECRET}"}`, 'has an invalid header name "bad name"'],
	])('refuses %s, naming the field and never the value', (raw, said) => {
		const problem = problemOf(() => checkCustomHeaders(raw));
		expect(problem.field).toBe('Custom Headers');
		expect(problem.message).toContain(`The "Custom Headers" of the Model Gateway credential ${said}`);
		expect(problem.message).not.toContain(SECRET);
		expect(problem.message).not.toContain('9f8e7d6c5b4a');
	});
});

describe('the whole credential', () => {
	it('reads every value, with a group multiplier of 1 when it makes no sense', () => {
		expect(checkGatewayCredential({ apiKey: 'sk-abc123', baseUrl: 'https://gw.example.com/v1', groupMultiplier: 0.8, customHeaders: '{"x-a":"b"}' })).toEqual({
			apiKey: 'sk-abc123',
			baseUrl: 'https://gw.example.com',
			groupMultiplier: 0.8,
			customHeaders: { 'x-a': 'b' },
		});
		expect(checkGatewayCredential({ apiKey: 'sk-abc123', baseUrl: 'https://gw.example.com', groupMultiplier: -1 }).groupMultiplier).toBe(1);
		expect(checkGatewayCredential({ apiKey: 'sk-abc123', baseUrl: 'https://gw.example.com', groupMultiplier: 'x' }).groupMultiplier).toBe(1);
	});

	it('is the node error before any request, saying which field to correct', () => {
		const attempt = () => readGatewayCredential({ apiKey: 'sk-abc123', baseUrl: 'https://gw.example.com/?token=sk-abc123' }, node);
		expect(attempt).toThrow(NodeOperationError);
		expect(attempt).toThrow('The "Base URL" of the Model Gateway credential contains a query string ("?…"): remove it');
		try {
			attempt();
		} catch (error) {
			expect((error as NodeOperationError).description).toBe('Open the Model Gateway credential and correct this field.');
			expect(JSON.stringify({ ...(error as object), message: (error as Error).message })).not.toContain('sk-abc123');
		}
	});
});
