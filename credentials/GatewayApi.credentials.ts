import type {
	ICredentialDataDecryptedObject,
	ICredentialTestRequest,
	ICredentialType,
	IHttpRequestOptions,
	INodeProperties,
	Icon,
} from 'n8n-workflow';

import { isHttpUrl, normalizeBaseUrl } from '../nodes/shared/url';

export class GatewayApi implements ICredentialType {
	name = 'gatewayApi';

	displayName = 'Model Gateway API';

	icon: Icon = { light: 'file:gateway.svg', dark: 'file:gateway.dark.svg' };

	documentationUrl = 'https://www.npmjs.com/package/n8n-nodes-model-gateway';

	properties: INodeProperties[] = [
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			required: true,
			default: '',
			placeholder: 'sk-...',
			description: 'The gateway token. It begins with "sk-".',
		},
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			required: true,
			default: '',
			placeholder: 'https://gateway.example.com',
			description:
				'The gateway address, e.g. https://gateway.example.com or https://example.com/gateway. A trailing "/" or "/v1" is fine.',
		},
		{
			displayName: 'Group Multiplier',
			name: 'groupMultiplier',
			type: 'number',
			typeOptions: { minValue: 0, numberPrecision: 4 },
			default: 1,
			description:
				"Your group's discount multiplier on the gateway. Only used for the cost estimates the nodes output.",
		},
	];

	// A function rather than a header template, so that a malformed key or address is refused with a
	// clear message (that never repeats the key) before anything is sent, for nodes and test alike.
	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> {
		const apiKey = String(credentials.apiKey ?? '').trim();
		if (!apiKey.startsWith('sk-')) {
			throw new Error(
				'The Model Gateway API key must begin with "sk-". Check the API Key field of the credential (the key is not shown here).',
			);
		}
		const baseUrl = String(credentials.baseUrl ?? '');
		if (!isHttpUrl(normalizeBaseUrl(baseUrl))) {
			throw new Error(
				'The Model Gateway Base URL must look like http(s)://host[:port][/path], for example https://gateway.example.com',
			);
		}
		const authenticated: IHttpRequestOptions = {
			...requestOptions,
			headers: { ...requestOptions.headers, Authorization: `Bearer ${apiKey}` },
		};
		if (authenticated.baseURL) authenticated.baseURL = normalizeBaseUrl(authenticated.baseURL);
		return authenticated;
	}

	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl}}',
			url: '/v1/models',
			method: 'GET',
		},
	};
}
