/**
 * The Model Gateway credential's values, read and checked in one place for the nodes, the
 * credential's own authentication and its test: the key (never echoed), the base URL (the forms
 * users paste, and the ones that cannot work), the group multiplier and the custom headers.
 */
import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, INode } from 'n8n-workflow';

import { SecretMasker } from './secrets';
import { isHttpUrl, normalizeBaseUrl, parseUrl } from './url';

export const CREDENTIAL_TYPE = 'gatewayApi';

export interface GatewaySettings {
	apiKey: string;
	baseUrl: string;
	groupMultiplier: number;
	/** Sent with every request to the gateway's own origin, never elsewhere. */
	customHeaders: Record<string, string>;
}

/** Endpoint paths users paste into the Base URL along with the address. */
const ENDPOINT_SUFFIX = /\/v1\/(chat\/completions|messages|images\/generations|video\/generations|models|responses|completions|embeddings)\/?$/i;
/** Headers the credential sets itself, or that would break the request. */
const FORBIDDEN_HEADERS = new Set(['authorization', 'host', 'content-length', 'content-type', 'transfer-encoding', 'connection']);
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** A problem with the credential, in words that never contain the key or header values. */
export class CredentialProblem extends Error {
	constructor(
		readonly field: string,
		problem: string,
	) {
		super(`The "${field}" of the Model Gateway credential ${problem}`);
		this.name = 'CredentialProblem';
	}
}

function parseJson(text: string): unknown {
	try {
		return JSON.parse(text) as unknown;
	} catch {
		return undefined;
	}
}

export function checkApiKey(raw: unknown): string {
	const apiKey = String(raw ?? '').trim();
	if (apiKey === '') throw new CredentialProblem('API Key', 'is empty: paste the gateway token (it begins with "sk-")');
	if (!apiKey.startsWith('sk-')) throw new CredentialProblem('API Key', 'must begin with "sk-" (the key is not shown here)');
	if (/\s/.test(apiKey)) throw new CredentialProblem('API Key', 'contains spaces or line breaks: paste the token alone');
	return apiKey;
}

/** The base URL, normalised; refuses the forms that cannot work and says what to change. */
export function checkBaseUrl(raw: unknown): string {
	const text = String(raw ?? '').trim();
	if (text === '') throw new CredentialProblem('Base URL', 'is empty: enter the gateway address, e.g. https://gateway.example.com');
	const url = parseUrl(text);
	if (url === undefined) throw new CredentialProblem('Base URL', 'must look like http(s)://host[:port][/path], e.g. https://gateway.example.com');
	if (url.protocol !== 'http:' && url.protocol !== 'https:') {
		throw new CredentialProblem('Base URL', `must start with http:// or https://, not ${url.protocol}//`);
	}
	if (url.username !== '' || url.password !== '') {
		throw new CredentialProblem('Base URL', 'contains a user name or password (user:pass@): remove them; the API Key is the only credential sent');
	}
	if (url.search !== '' || text.includes('?')) throw new CredentialProblem('Base URL', 'contains a query string ("?…"): remove it');
	if (url.hash !== '' || text.includes('#')) throw new CredentialProblem('Base URL', 'contains a fragment ("#…"): remove it');
	const endpoint = ENDPOINT_SUFFIX.exec(url.pathname);
	if (endpoint) {
		const base = `${url.origin}${url.pathname.slice(0, endpoint.index)}`;
		throw new CredentialProblem('Base URL', `ends with the endpoint path "${endpoint[0]}": remove it, so the Base URL is ${base}`);
	}
	const normalised = normalizeBaseUrl(text);
	if (!isHttpUrl(normalised)) throw new CredentialProblem('Base URL', 'must look like http(s)://host[:port][/path]');
	return normalised;
}

/** A JSON object, given as an object or as JSON text, or nothing (`{}`); else `refuse`'s error, with JSON.parse's words for text that is no JSON. */
export function jsonObjectOf(raw: unknown, refuse: (jsonError?: string) => Error): IDataObject {
	if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) return {};
	let value = raw;
	if (typeof raw === 'string') {
		try {
			value = JSON.parse(raw);
		} catch (error) {
			throw refuse((error as Error).message);
		}
	}
	if (typeof value !== 'object' || value === null || Array.isArray(value)) throw refuse();
	return value as IDataObject;
}

/** `customHeaders`: a JSON object of header names to text values (or nothing). */
export function checkCustomHeaders(raw: unknown): Record<string, string> {
	const value = jsonObjectOf(raw, (jsonError) => {
		if (jsonError !== undefined) return new CredentialProblem('Custom Headers', 'is not valid JSON: enter an object such as {"x-portkey-provider": "openai"}');
		return new CredentialProblem('Custom Headers', 'must be a JSON object of header names to text values, e.g. {"x-portkey-provider": "openai"}');
	});
	const headers: Record<string, string> = {};
	for (const [name, headerValue] of Object.entries(value)) {
		if (!HEADER_NAME.test(name)) throw new CredentialProblem('Custom Headers', `has an invalid header name "${name.slice(0, 40)}"`);
		if (FORBIDDEN_HEADERS.has(name.toLowerCase())) {
			throw new CredentialProblem('Custom Headers', `may not set "${name}": ${name.toLowerCase() === 'authorization' ? 'the API Key is sent as the Authorization header' : 'the node sets it itself'}`);
		}
		// Values are not repeated in messages: they may be secrets.
		if (typeof headerValue !== 'string' && typeof headerValue !== 'number' && typeof headerValue !== 'boolean') {
			throw new CredentialProblem('Custom Headers', `has a value for "${name}" that is not text`);
		}
		const text = String(headerValue);
		if (/[\r\n]/.test(text)) throw new CredentialProblem('Custom Headers', `has a line break in the value of "${name}"`);
		// HTTP sends header values as Latin-1: other characters would arrive changed (`ключ-77` as `--77`).
		if ([...text].some((character) => (character.codePointAt(0) ?? 0) > 0xff)) {
			throw new CredentialProblem('Custom Headers', `has a value for "${name}" with characters that a header cannot carry (only Latin-1 letters, digits and signs)`);
		}
		headers[name] = text;
	}
	return headers;
}

/** All credential values, checked; the errors name the field and never repeat a secret. */
export function checkGatewayCredential(credentials: IDataObject): GatewaySettings {
	const multiplier = Number(credentials.groupMultiplier ?? 1);
	return {
		apiKey: checkApiKey(credentials.apiKey),
		baseUrl: checkBaseUrl(credentials.baseUrl),
		groupMultiplier: Number.isFinite(multiplier) && multiplier >= 0 ? multiplier : 1,
		customHeaders: checkCustomHeaders(credentials.customHeaders),
	};
}

/** As checkGatewayCredential, with a problem as the node's error (before any request). */
export function readGatewayCredential(credentials: IDataObject, node: INode): GatewaySettings {
	try {
		return checkGatewayCredential(credentials);
	} catch (error) {
		// checkGatewayCredential raises only CredentialProblems, whose words hold no secret.
		throw new NodeOperationError(node, (error as Error).message, { description: 'Open the Model Gateway credential and correct this field.' });
	}
}

/**
 * The secret policy of the credential as it was entered, also when a field fails its check (the
 * node reports that later; its values are secrets all the same): read before anything else, so
 * even an input check's error is masked with it.
 */
export function secretPolicyOf(credentials: IDataObject): SecretMasker {
	const parsed = typeof credentials.customHeaders === 'string' ? parseJson(credentials.customHeaders) : credentials.customHeaders;
	const customHeaders: Record<string, string> = {};
	if (typeof parsed === 'object' && parsed !== null) for (const [name, value] of Object.entries(parsed)) customHeaders[name] = String(value);
	return SecretMasker.of({ apiKey: String(credentials.apiKey ?? '').trim(), customHeaders });
}
