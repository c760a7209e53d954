import type {
	ICredentialDataDecryptedObject,
	ICredentialType,
	IHttpRequestOptions,
	INodeProperties,
	Icon,
} from 'n8n-workflow';

import { CredentialProblem, checkGatewayCredential } from '../nodes/shared/credential/settings';

export class GatewayApi implements ICredentialType {
	name = 'gatewayApi';

	displayName = 'Model Gateway API';

	icon: Icon = { light: 'file:gateway.svg', dark: 'file:gateway.dark.svg' };

	// A literal, as n8n's lint requires; test/unit/docsLinks.test.ts checks it is this page of the
	// repository that package.json names, and that the page exists.
	documentationUrl = 'https://github.com/n8n-nodes-model-gateway/n8n-nodes-model-gateway/blob/main/docs/credentials/gatewayApi.md';

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
			placeholder: 'e.g. https://gateway.example.com',
			description:
				'The gateway address, e.g. https://gateway.example.com or https://example.com/gateway. A trailing "/" or "/v1" is fine.',
		},
		{
			displayName: 'Group Multiplier (Price Factor for Cost Estimates)',
			name: 'groupMultiplier',
			type: 'number',
			typeOptions: { minValue: 0, numberPrecision: 4 },
			default: 1,
			description:
				"The price factor of your key's group on the gateway: the gateway bills each request at the model's price times this factor. Only used for the cost estimates the nodes output.",
			hint: "Leave 1 unless the gateway's console shows another factor for your group, e.g. 0.8 when your group pays 80 %. Nothing sent to the gateway depends on it.",
		},
		// Header values are often keys of their own (Portkey, Helicone): hidden like the API key
		// (eslint.config.mjs explains why n8n's credential-unnecessary-password warning is off here).
		{
			displayName: 'Custom Headers',
			name: 'customHeaders',
			type: 'string',
			typeOptions: { password: true, rows: 3 },
			default: '',
			placeholder: 'e.g. {"x-portkey-provider": "openai", "x-portkey-api-key": "..."}',
			description:
				'Extra headers sent with every request to the gateway (never to file links or other hosts), as a JSON object of header names to text values. Relays such as Portkey or Helicone need them. May not set Authorization.',
		},
	];

	// A function rather than a header template, so that a malformed key or address is refused with a
	// clear message (that never repeats the key) before anything is sent, whoever asks n8n to authenticate.
	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> {
		let settings;
		try {
			settings = checkGatewayCredential(credentials);
		} catch (error) {
			// The problem names the field and never repeats the key or a header value.
			if (error instanceof CredentialProblem) throw new Error(error.message);
			throw error;
		}
		const authenticated: IHttpRequestOptions = {
			...requestOptions,
			headers: { ...requestOptions.headers, ...settings.customHeaders, Authorization: `Bearer ${settings.apiKey}` },
		};
		if (authenticated.baseURL) authenticated.baseURL = settings.baseUrl;
		return authenticated;
	}

	// No declarative `test`: every node tests this credential (`testedBy: 'gatewayApiTest'`);
	// nodes/shared/panel/credentialTest.ts says why.
}
