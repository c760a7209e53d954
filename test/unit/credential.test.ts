import { GatewayApi } from '../../credentials/GatewayApi.credentials';

describe('Model Gateway API credential', () => {
	const credential = new GatewayApi();

	it('keeps the public names of the contract', () => {
		expect(credential.name).toBe('gatewayApi');
		expect(credential.displayName).toBe('Model Gateway API');
		expect(credential.properties.map((property) => property.name)).toEqual(['apiKey', 'baseUrl', 'groupMultiplier', 'customHeaders']);
		expect(credential.properties[0].typeOptions?.password).toBe(true);
		expect(credential.properties[2].default).toBe(1);
		// Header values are often keys of their own: hidden like the API key, and optional.
		expect(credential.properties[3]).toMatchObject({ type: 'string', default: '', typeOptions: { password: true } });
		expect(credential.properties[3].required).not.toBe(true);
		// Tested by every node's `testedBy: 'gatewayApiTest'` (nodes/shared/panel/credentialTest.ts): GET /v1/models in plain words.
		expect((credential as { test?: unknown }).test).toBeUndefined();
	});

	it('says in its label and hint what the Group Multiplier is for (its name stays groupMultiplier)', () => {
		const multiplier = credential.properties.find((property) => property.name === 'groupMultiplier');
		expect(multiplier?.displayName).toMatch(/^Group Multiplier \(.*cost estimates\)$/i);
		expect(multiplier?.description).toMatch(/price/i);
		expect(multiplier?.hint).toMatch(/Leave 1/);
	});

	it('adds the bearer header and tolerates a pasted /v1', async () => {
		const options = await credential.authenticate(
			{ apiKey: ' sk-abc123 ', baseUrl: 'https://gw.example.com/v1/', groupMultiplier: 1 },
			{ url: '/v1/models', baseURL: 'https://gw.example.com/v1/', headers: { Accept: 'application/json' } },
		);
		expect(options.headers).toEqual({ Accept: 'application/json', Authorization: 'Bearer sk-abc123' });
		expect(options.baseURL).toBe('https://gw.example.com');
	});

	it('adds the custom headers, the API key still being the Authorization header', async () => {
		const options = await credential.authenticate(
			{ apiKey: 'sk-abc123', baseUrl: 'https://gw.example.com', customHeaders: '{"x-portkey-provider": "openai", "x-trace": 7}' },
			{ url: '/v1/models', headers: { Accept: 'application/json' } },
		);
		expect(options.headers).toEqual({ Accept: 'application/json', 'x-portkey-provider': 'openai', 'x-trace': '7', Authorization: 'Bearer sk-abc123' });
	});

	it('refuses a key without sk- and never repeats it', async () => {
		const attempt = credential.authenticate({ apiKey: 'abc-very-secret-value', baseUrl: 'https://gw.example.com' }, { url: '/v1/models' });
		await expect(attempt).rejects.toThrow('must begin with "sk-"');
		await expect(attempt).rejects.not.toThrow('abc-very-secret-value');
	});

	it('refuses a base URL that is not http(s)', async () => {
		await expect(credential.authenticate({ apiKey: 'sk-1', baseUrl: 'gw.example.com' }, { url: '/v1/models' })).rejects.toThrow('Base URL');
	});

	it('refuses custom headers that set Authorization, without repeating their value', async () => {
		const attempt = credential.authenticate(
			{ apiKey: 'sk-abc123', baseUrl: 'https://gw.example.com', customHeaders: '{"Authorization": "Bearer sk-other-secret-value"}' },
			{ url: '/v1/models' },
		);
		await expect(attempt).rejects.toThrow('The "Custom Headers" of the Model Gateway credential may not set "Authorization"');
		await expect(attempt).rejects.not.toThrow('other-secret-value');
	});
});
