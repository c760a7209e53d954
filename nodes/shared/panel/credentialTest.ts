/**
 * The Model Gateway credential's Test, in plain words: the editor's Test button (and n8n's
 * `POST /rest/credentials/test`) runs `testGatewayCredential`, which every node names with
 * `testedBy: 'gatewayApiTest'` and offers in `methods.credentialTest`.
 *
 * Why a function and not the credential's declarative `test`: n8n answers a declarative test
 * with its own bare words ("Unauthorized", "Not Found", the code "ECONNREFUSED") and drops the
 * server's reason; its `rules` only map a status to one fixed text. n8n (2.x and 1.x) calls a
 * node's test function only when the credential type has no `test` of its own, so the credential
 * has none (the community lint rule accepts a credential every node tests with `testedBy`).
 *
 * The test is one `GET /v1/models` (then the key's balance, when the gateway reports one) through our own transport (the key and the custom headers to
 * the gateway's origin only, redirects handled as the nodes handle them, one deadline) and our own
 * error classification, so its words are those of the node errors; every message is masked.
 */
import type {
	ICredentialTestFunction,
	ICredentialTestFunctions,
	ICredentialsDecrypted,
	IDataObject,
	IHttpRequestOptions,
	ILoadOptionsFunctions,
	INode,
	INodeCredentialTestResult,
} from 'n8n-workflow';

import { checkGatewayCredential } from '../credential/settings';
import type { CredentialProblem, GatewaySettings } from '../credential/settings';
import { GatewayError, NOT_THE_GATEWAY_HINT } from '../failures/errors';
import type { GatewayErrorKind } from '../failures/errors';
import { SecretMasker } from '../credential/secrets';
import { GatewayClient, itemDeadline } from '../wire/transport';
import { readBalance } from '../account/readBalance';
import { balanceWords } from '../account/balance';
import type { ByteStream } from '../wire/transport';

/** The name in the nodes' `testedBy` (written there as a literal: n8n's lint reads it from the source). */
export const GATEWAY_CREDENTIAL_TEST = 'gatewayApiTest';

/** What the test asks for: the model list, which every new-api style gateway serves. */
export const TEST_PATH = '/v1/models';
/** A test answers within this time, or says that the gateway did not. */
export const TEST_DEADLINE_MS = 15_000;

/** The request helper n8n gives a credential test (request-promise options, answered by axios). */
type LegacyRequest = ICredentialTestFunctions['helpers']['request'];

interface LegacyResponse {
	statusCode?: number;
	headers?: Record<string, unknown>;
	body?: unknown;
}

/**
 * A finished body (text, bytes or nothing) as the stream the transport reads a test's answer from:
 * iterated once, listened to (`once`) and destroyed; a test reads no event stream.
 */
function finishedStream(body: unknown): ByteStream {
	let chunk: Buffer | null = body === undefined || body === null ? null : Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
	const stream = {
		destroyed: false,
		get readableEnded() {
			return chunk === null;
		},
		once: () => stream,
		destroy() {
			stream.destroyed = true;
			chunk = null;
		},
		async *[Symbol.asyncIterator]() {
			const out = chunk;
			chunk = null;
			if (out) yield out;
		},
	};
	return stream as unknown as ByteStream;
}

/**
 * The transport's request (n8n's `httpRequest` options: full response, body as a stream, no
 * status errors, no redirects followed) sent with the request helper of a credential test.
 */
export function legacyHttpRequest(request: LegacyRequest): (options: IHttpRequestOptions) => Promise<unknown> {
	return async (options: IHttpRequestOptions) => {
		const response = (await request({
			uri: options.url,
			method: options.method ?? 'GET',
			headers: options.headers ?? {},
			...(options.body !== undefined ? { body: options.body } : {}),
			json: false,
			useStream: true,
			resolveWithFullResponse: true,
			simple: false,
			followRedirect: false,
			followAllRedirects: false,
			timeout: options.timeout,
		})) as LegacyResponse;
		const body = response.body as Partial<ByteStream> | undefined;
		const isStream = typeof body === 'object' && body !== null && typeof body.once === 'function' && Symbol.asyncIterator in body;
		return { statusCode: response.statusCode ?? 0, headers: response.headers ?? {}, body: isStream ? body : finishedStream(response.body) };
	};
}

/** The node our client reports errors against (never shown: the test returns text). */
const TEST_NODE: INode = {
	id: 'model-gateway-credential-test',
	name: 'Model Gateway credential test',
	type: 'n8n-nodes-model-gateway.gatewayChat',
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
};

/** The little of a node's context the gateway client uses, built from a credential test's helpers. */
function testContext(helpers: ICredentialTestFunctions['helpers'], data: IDataObject): ILoadOptionsFunctions {
	const context = {
		getCredentials: async () => data,
		getNode: () => TEST_NODE,
		helpers: { httpRequest: legacyHttpRequest(helpers.request) },
	};
	return context as unknown as ILoadOptionsFunctions;
}

/** What to do about a failed test, where it differs from what a node says about the same failure. */
const TEST_HINTS: Partial<Record<GatewayErrorKind, string>> = {
	quota: "Top up the account, or ask the gateway's administrator which group the key belongs to and what that group may use.",
	bad_request:
		'The gateway refused the test request for the reason quoted. Relays that need extra headers (Portkey, Helicone, …) say so here: check the Custom Headers and the Base URL.',
	unknown_model: 'Check the Base URL: it should be the gateway itself.',
	timeout: 'Check the Base URL and that the gateway is running; a gateway behind a slow proxy may need another try.',
	protocol: NOT_THE_GATEWAY_HINT,
};

const sentence = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`);

/** A failed test in plain words (not yet masked). */
export function describeTestFailure(error: unknown, settings: Pick<GatewaySettings, 'baseUrl'>): string {
	if (!(error instanceof GatewayError)) {
		const message = (error as { message?: unknown })?.message;
		return `The credential test failed: ${typeof message === 'string' ? message : String(error)}`;
	}
	if (error.status === 404) {
		const said = error.gatewayMessage ? ` ("${error.gatewayMessage}")` : '';
		return (
			`This server has no model list: GET ${TEST_PATH} answered HTTP 404${said}, so the key could not be checked this way. ` +
			`The nodes may still work: try one. If they get a 404 too, check the Base URL (now ${settings.baseUrl}).`
		);
	}
	const hint = TEST_HINTS[error.kind] ?? error.hint;
	return hint ? `${sentence(error.fullMessage)} ${hint}` : sentence(error.fullMessage);
}

/** A balance read gets this long within the test; a gateway without one adds nothing. */
export const TEST_BALANCE_DEADLINE_MS = 10_000;

/** "; 12.34 USD left on this key" when the gateway reports a balance, else nothing (never a failure). */
async function balanceClause(client: GatewayClient): Promise<string> {
	try {
		const balance = await readBalance(client, { retry: false, deadlineMs: TEST_BALANCE_DEADLINE_MS, ...itemDeadline(TEST_BALANCE_DEADLINE_MS, 'the credential test') });
		return `; ${balanceWords(balance)}`;
	} catch {
		return '';
	}
}

/**
 * The test itself: the credential's fields checked (each refusal names the field), then one
 * `GET /v1/models`. Every message is masked: never the key, its part after `sk-`, or a custom
 * header value.
 */
export async function testGatewayCredential(this: ICredentialTestFunctions, credential: ICredentialsDecrypted): Promise<INodeCredentialTestResult> {
	const data = (credential?.data ?? {}) as IDataObject;
	let settings: GatewaySettings;
	try {
		settings = checkGatewayCredential(data);
	} catch (error) {
		// checkGatewayCredential raises only CredentialProblems, whose words never repeat a secret.
		return { status: 'Error', message: (error as CredentialProblem).message };
	}
	const masker = SecretMasker.of(settings);
	try {
		const client = await GatewayClient.create(testContext(this.helpers, data));
		const answer = await client.json<{ data?: unknown }>({ path: TEST_PATH, method: 'GET', deadlineMs: TEST_DEADLINE_MS, retry: false, what: `GET ${TEST_PATH}` });
		const listed = Array.isArray(answer.data) ? ` and lists ${answer.data.length} model${answer.data.length === 1 ? '' : 's'}` : '';
		const balance = await balanceClause(client);
		return { status: 'OK', message: masker.mask(`Connection successful: the gateway accepted the API Key${listed}${balance}.`) };
	} catch (error) {
		return { status: 'Error', message: masker.mask(describeTestFailure(error, settings)) };
	}
}

/** Every node's `methods.credentialTest`: one definition, shared. */
export const credentialTest: Record<string, ICredentialTestFunction> = { [GATEWAY_CREDENTIAL_TEST]: testGatewayCredential };
