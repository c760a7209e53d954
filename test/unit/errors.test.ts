/**
 * The error path as data: gateway error bodies of every shape, their classification (the words of
 * the answer first, then the status), error bodies inside a 200, network failures, the masking of
 * secrets, and the edge, where a failure becomes an n8n error (or a Continue On Fail item) without
 * the key anywhere in it.
 */
import { Base64Text, largestField } from '../../nodes/shared/wire/jsonBody';
import { NodeOperationError } from 'n8n-workflow';
import type { INode } from 'n8n-workflow';

import { asNodeError, errorItem } from '../../nodes/shared/failures/edge';
import {
	GatewayError,
	classifyError,
	errorFromParsed,
	httpError,
	itemFieldsOf,
	missingResultError,
	networkError,
	notAnObjectError,
	withFields,
} from '../../nodes/shared/failures/errors';
import { isErrorShape, parseErrorBody, quoteStart, readErrorFields } from '../../nodes/shared/failures/errorBody';
import { SecretMasker, noSecretsMasker } from '../../nodes/shared/credential/secrets';

// Random as a real key is: ordinary text shares no run of 8 characters with it.
const KEY = 'sk-live-7Hq2Wc9Zr4Lp0Xt6SECRET';
const KEY_TAIL = KEY.slice('sk-'.length);
const HEADER_SECRET = 'portkey-header-secret-42';
const masker = new SecretMasker([KEY, HEADER_SECRET]);
const node: INode = { id: 'n1', name: 'Gateway Node', type: 'n8n-nodes-model-gateway.test', typeVersion: 1, position: [0, 0], parameters: {} };

describe('gateway error bodies', () => {
	it('reads the OpenAI / new-api shape', () => {
		const parsed = parseErrorBody('{"error":{"message":"Invalid token","type":"new_api_error","code":"invalid_api_key"}}');
		expect(parsed).toEqual({ message: 'Invalid token', type: 'new_api_error', code: 'invalid_api_key' });
	});

	it('reads the task shape {code, message, data}', () => {
		expect(parseErrorBody('{"code":"task_not_exist","message":"task_not_exist","data":null}')).toMatchObject({
			code: 'task_not_exist',
			message: 'task_not_exist',
		});
	});

	it('reads the native messages shape', () => {
		expect(parseErrorBody('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')).toMatchObject({
			type: 'overloaded_error',
			message: 'Overloaded',
		});
	});

	it("reads the plant store's {error:<int>, message}", () => {
		expect(parseErrorBody('{"error":409,"message":"plant with id 1 already exists"}')).toEqual({
			code: 409,
			message: 'plant with id 1 already exists',
			type: undefined,
		});
	});

	it('reads {code, msg} and {"success": false, message}', () => {
		expect(readErrorFields({ code: 500, msg: 'internal error' })).toMatchObject({ code: 500, message: 'internal error' });
		expect(readErrorFields({ success: false, message: 'no balance' })).toMatchObject({ message: 'no balance' });
	});

	it('summarises an HTML page instead of dumping it', () => {
		const html = '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr>nginx</body></html>';
		const parsed = parseErrorBody(html, 'text/html');
		expect(parsed.html).toBe(true);
		expect(parsed.message).toBe('an HTML page ("502 Bad Gateway")');
	});

	it('copes with an empty body and with plain text', () => {
		expect(parseErrorBody('')).toEqual({});
		expect(parseErrorBody('upstream timeout')).toEqual({ message: 'upstream timeout' });
	});
});

describe('classification: the words of the answer first, then the status', () => {
	// A body without telling words: the status alone decides.
	it.each([
		[401, 'auth'],
		[402, 'quota'],
		[403, 'quota'],
		[404, 'not_found'],
		[408, 'timeout'],
		[400, 'bad_request'],
		[409, 'bad_request'],
		[422, 'bad_request'],
		[413, 'too_large'],
		[429, 'rate_limit'],
		[500, 'server'],
		[502, 'server'],
		[503, 'server'],
		[504, 'server'],
	])('HTTP %i with an empty body -> %s', (status, kind) => {
		expect(httpError('X', status, '', '').kind).toBe(kind);
		expect(httpError('X', status, '{"error":{"message":"something went wrong"}}', 'application/json').kind).toBe(kind);
	});

	it.each([
		// words beat the status
		[403, '{"error":{"message":"forbidden"}}', 'quota'],
		[403, '{"error":{"message":"invalid token"}}', 'auth'],
		[403, '{"error":{"message":"无效的令牌"}}', 'auth'],
		[403, '{"error":{"message":"user quota is not enough","code":"insufficient_user_quota"}}', 'quota'],
		[400, '{"error":{"message":"Invalid token","code":"invalid_api_key"}}', 'auth'],
		[400, '{"error":{"message":"rate limit reached for requests"}}', 'rate_limit'],
		[404, '{"error":{"message":"The model `chat-x` does not exist","code":"model_not_found"}}', 'unknown_model'],
		[500, '{"error":{"message":"insufficient account balance"}}', 'quota'],
		[503, '{"error":{"message":"No available channel for model x","code":"model_not_found"}}', 'unknown_model'],
		[503, '{"error":{"message":"当前分组 default 下对于模型 x 无可用渠道"}}', 'unknown_model'],
		[503, '{"error":{"message":"service busy"}}', 'server'],
		// statuses with ordinary words
		[401, '{"error":{"message":"Invalid token","code":"invalid_api_key"}}', 'auth'],
		[429, '{"error":{"message":"Too many requests"}}', 'rate_limit'],
		[404, '{"error":{"message":"Not Found"}}', 'not_found'],
		[400, '{"error":{"message":"n must be at most 10","type":"invalid_request_error"}}', 'bad_request'],
		[502, '<html><title>502 Bad Gateway</title></html>', 'server'],
	])('HTTP %i %s -> %s', (status, body, kind) => {
		expect(httpError('X', status, body, body.startsWith('<') ? 'text/html' : 'application/json').kind).toBe(kind);
	});

	it('classifies a 429 that says the quota is used up as quota: waiting does not help (OpenAI sends insufficient_quota as a 429)', () => {
		const body = '{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}';
		expect(httpError('X', 429, body, 'application/json').kind).toBe('quota');
	});

	it.each([
		[{ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 'server'],
		[{ error: { message: 'upstream error: do request failed' } }, 'server'],
		[{ code: 500, msg: 'internal error' }, 'server'],
		[{ code: 'invalid_token', message: 'invalid token Bearer sk-x' }, 'auth'],
		[{ success: false, message: 'insufficient balance' }, 'quota'],
		[{ error: { message: 'No available channel for model y', code: 'model_not_found' } }, 'unknown_model'],
	])('an error inside a 200 (%j) -> %s', (body, kind) => {
		const error = errorFromParsed('X', 200, readErrorFields(body));
		expect(error.kind).toBe(kind);
		expect(classifyError(undefined, readErrorFields(body))).toBe(kind);
	});
});

describe('a body cut short (broken off, silent, past 64 KB): quoted, never read for the kind', () => {
	it.each([
		[502, '{"error":{"message":"upstream error","metadata":{"raw":"rate limit exceeded, ', 'server'],
		[500, '{"error":{"message":"insufficient balance on channel 4, ', 'server'],
		[429, '{"error":{"message":"model_not_found ', 'rate_limit'],
		[400, '{"error":{"message":"invalid token ', 'bad_request'],
	])('HTTP %i: the status alone decides', (status, text, kind) => {
		expect(httpError('X', status, text, 'application/json', {}, undefined, undefined, true).kind).toBe(kind);
		// Whole, the same words would decide.
		expect(httpError('X', status, `${text}"}}`, 'application/json').kind).not.toBe(kind);
	});

	it('a quote shortened before masking leaves out the word it would split (an HTML title, any long quote)', () => {
		const base64 = Buffer.from('sk-unit-cut-title-0123456789abcdef').toString('base64');
		const title = `${'Gateway error '.repeat(7)}Basic ${base64}`;
		expect(parseErrorBody(`<html><title>${title}</title></html>`, 'text/html').message).toBe(`an HTML page ("${'Gateway error '.repeat(7)}Basic…")`);
		expect(quoteStart('one two three', 7)).toBe('one two…');
		expect(quoteStart('one two three', 6)).toBe('one…');
		expect(quoteStart('c2stdW5pdC1jdXQ', 8)).toBe('…');
	});

	it('leaves out the word the cut split, so no part of a token shows', () => {
		expect(parseErrorBody('{"error":{"message":"bad header Basic c2stcjkt', 'application/json', true)).toEqual({ message: '{"error":{"message":"bad header Basic …', cut: true });
		expect(parseErrorBody('upstream said: no ', 'text/plain', true)).toEqual({ message: 'upstream said: no …', cut: true });
		expect(parseErrorBody('c2stcjkt', 'text/plain', true)).toEqual({ cut: true });
	});
});

describe('messages: <what> failed: <kind words> (HTTP status): "<what the gateway said>"', () => {
	it.each([
		[401, '{"error":{"message":"Invalid token","code":"invalid_api_key"}}', 'The chat request failed: the gateway refused the API key (HTTP 401): "Invalid token" (code invalid_api_key)'],
		[
			403,
			'{"error":{"message":"user quota is not enough","code":"insufficient_user_quota"}}',
			'The chat request failed: the gateway refused the request for lack of quota or permission (HTTP 403): "user quota is not enough" (code insufficient_user_quota)',
		],
		[429, '', 'The chat request failed: the gateway asked to slow down (rate limit) (HTTP 429)'],
		[
			503,
			'{"error":{"message":"No available channel for model x","code":"model_not_found"}}',
			'The chat request failed: the gateway has no channel for this model (HTTP 503): "No available channel for model x" (code model_not_found)',
		],
		[400, '{"error":{"message":"n must be at most 10","type":"invalid_request_error"}}', 'The chat request failed: the gateway refused the request (HTTP 400): "n must be at most 10"'],
		[400, '{"error":4001,"message":"plant name rejected"}', 'The chat request failed: the gateway refused the request (HTTP 400): "plant name rejected" (code 4001)'],
		[502, '<html><title>502 Bad Gateway</title></html>', 'The chat request failed: the gateway reported a failure: it answered with an HTML page ("502 Bad Gateway") (HTTP 502)'],
		[500, '', 'The chat request failed: the gateway reported a failure (HTTP 500)'],
	])('HTTP %i %s', (status, body, message) => {
		const error = httpError('The chat request', status, body, body.startsWith('<') ? 'text/html' : 'application/json', { status });
		expect(error.fullMessage).toBe(message);
		// The headline is ours alone: the gateway's words never go into an error's own message.
		expect(error.message).toBe(error.headline);
		expect(error.status).toBe(status);
	});

	it('gives a hint per kind, and says a proxy answered for a 502/503/504 or an HTML page', () => {
		expect(httpError('X', 401, '', '').hint).toMatch(/API Key/);
		expect(httpError('X', 429, '', '').hint).toMatch(/Concurrency/);
		expect(httpError('X', 502, '', '').hint).toMatch(/proxy/);
		expect(httpError('X', 500, '{"error":{"message":"boom"}}', 'application/json').hint).toMatch(/gateway's reason/);
	});

	it('says what a 200 lacked, quoting what came', () => {
		const missing = missingResultError('Generating the images', 'images (no "data" list)', { created: 1 });
		expect(missing.kind).toBe('protocol');
		expect(missing.fullMessage).toBe('Generating the images failed: the gateway\'s answer has no images (no "data" list): "{"created":1}"');
		expect(notAnObjectError('X', 200, null).headline).toBe('X failed: the gateway answered HTTP 200 with null instead of a JSON object');
		expect(notAnObjectError('X', 200, []).headline).toBe('X failed: the gateway answered HTTP 200 with a list instead of a JSON object');
		expect(notAnObjectError('X', 200, 'text').headline).toBe('X failed: the gateway answered HTTP 200 with a JSON string instead of a JSON object');
	});
});

describe('isErrorShape: an error the gateway sent in place of a result', () => {
	it.each([
		[{ error: { message: 'upstream failed', type: 'upstream_error' } }],
		[{ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }],
		[{ success: false, message: 'no balance' }],
		[{ code: 500, msg: 'internal error' }],
		[{ code: 'invalid_token', message: 'invalid token' }],
		[{ error: 400, message: 'plant name rejected' }],
		[{ error: 'bad request' }],
	])('%j is an error', (body) => {
		expect(isErrorShape(body)).toBe(true);
	});

	it.each([
		[{ id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }] }],
		[{ code: 'success', message: '', data: { task_id: 't1', status: 'IN_PROGRESS', progress: '30%' } }],
		[{ code: 'success', data: { status: 'SUCCESS' } }],
		[{ error: null, choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' } }] }],
		[{ error: {}, choices: [] }],
		[{ id: 1, name: 'Monstera', tag: 'green' }],
		[{ code: 0, message: 'ok', data: {} }],
		[{ type: 'message', role: 'assistant', content: [] }],
	])('%j is not an error', (body) => {
		expect(isErrorShape(body)).toBe(false);
	});

	it.each([[null], [[]], ['text'], [42]])('%j is no error shape (it is not an object: a protocol error instead)', (body) => {
		expect(isErrorShape(body)).toBe(false);
	});
});

describe('a GatewayError is read-only: what callers add goes on a copy', () => {
	const original = () => new GatewayError({ kind: 'server', headline: 'Checking video task t1 failed: the gateway reported a failure', status: 502, hint: 'Try later.', mayHaveActed: true, fields: { task_id: 't1' } });

	it('with returns a new error and leaves the original as it was', () => {
		const error = original();
		const wider = error.with({ hint: 'Fetch it later.', fields: { task_id: 't1', item: 2 }, itemIndex: 2 });
		expect(wider).not.toBe(error);
		expect(wider).toBeInstanceOf(GatewayError);
		expect(wider).toMatchObject({ kind: 'server', status: 502, hint: 'Fetch it later.', mayHaveActed: true, fields: { task_id: 't1', item: 2 }, itemIndex: 2 });
		expect(error).toMatchObject({ headline: 'Checking video task t1 failed: the gateway reported a failure', hint: 'Try later.', fields: { task_id: 't1' } });
		expect(error.itemIndex).toBeUndefined();
		const refused = error.with({ mayHaveActed: false });
		expect([refused.mayHaveActed, error.mayHaveActed]).toEqual([false, true]);
	});

	it('a copy keeps every fact, and its stack tells its own headline even when that holds $& or $\' (a Location, a task id)', () => {
		const error = new GatewayError({ kind: 'rate_limit', headline: 'Submitting failed', status: 429, retryAfterMs: 3000, gatewayCode: 'rl', itemIndex: 4, mayHaveActed: false, fields: { task_id: 't1' } });
		const headline = "Submitting failed: the gateway redirected the request to http://relay/$&/$'";
		const copy = error.with({ headline });
		expect(copy).toMatchObject({ kind: 'rate_limit', status: 429, retryAfterMs: 3000, gatewayCode: 'rl', itemIndex: 4, mayHaveActed: false, fields: { task_id: 't1' }, message: headline });
		expect(Object.getPrototypeOf(copy)).toBe(GatewayError.prototype);
		expect(copy.stack).toContain(headline);
	});

	it('withFields copies a GatewayError; its fields cannot be edited in place', () => {
		const error = original();
		const more = withFields(error, { index: 3 });
		expect(more).not.toBe(error);
		expect(more.fields).toEqual({ task_id: 't1', index: 3 });
		expect(error.fields).toEqual({ task_id: 't1' });
		expect(() => {
			(error.fields as Record<string, unknown>).task_id = 'other';
		}).toThrow(TypeError);
	});
});

describe('network failures: only the cause is kept', () => {
	it.each([
		['ECONNRESET', 'network', 'X failed: the connection to gw.example:8080 was dropped before the answer was complete', true],
		['ECONNREFUSED', 'network', 'X failed: the connection to gw.example:8080 was refused', false],
		['ENOTFOUND', 'network', 'X failed: the host name gw.example:8080 could not be resolved', false],
		['ETIMEDOUT', 'timeout', 'X failed: gw.example:8080 did not answer in time', true],
	])('%s -> %s', (code, kind, message, mayHaveActed) => {
		const error = networkError('X', { code, message: `connect ${code}` }, 'gw.example:8080');
		expect(error.kind).toBe(kind);
		expect(error.fullMessage).toBe(message);
		expect(error.mayHaveActed).toBe(mayHaveActed);
	});

	it('finds the code on the cause n8n wraps it in, and never repeats the request it failed with', () => {
		const wrapped = { message: `Request failed with headers {"Authorization":"Bearer ${KEY}"}`, cause: { code: 'ECONNRESET', message: 'socket hang up' } };
		const error = networkError('X', wrapped, 'gw.example');
		expect(error.fullMessage).toBe('X failed: the connection to gw.example was dropped before the answer was complete');
		expect(JSON.stringify({ ...error, message: error.message, stack: error.stack })).not.toContain(KEY_TAIL);
	});
});

describe('SecretMasker', () => {
	it('masks the key', () => {
		expect(masker.mask(`token ${KEY} is invalid`)).toBe('token *** is invalid');
	});

	it("masks the key's part after sk- (relays quote it without the prefix)", () => {
		expect(masker.mask(`无效的令牌 token=${KEY_TAIL}`)).toBe('无效的令牌 token=***');
	});

	it('masks nothing by its shape: a Bearer token or an sk- text that is not the key stays (issue 26)', () => {
		for (const text of ['Authorization: Bearer abc.def', '{"auth":"bearer xyz-123"}', 'another key sk-other-9876543210 here', 'task-sk-9f8e7d6c5b']) expect(masker.mask(text)).toBe(text);
		expect(masker.mask(`invalid token Bearer ${KEY}`)).toBe('invalid token Bearer ***');
		expect(noSecretsMasker.mask(`task-sk-9f8e7d6c5b`)).toBe('task-sk-9f8e7d6c5b');
	});

	it('masks custom header values', () => {
		expect(masker.mask(`header x-portkey-api-key: ${HEADER_SECRET}`)).toBe('header x-portkey-api-key: ***');
	});

	it('leaves ordinary text alone', () => {
		const texts = [
			'The chat request failed: the gateway has no channel for this model (HTTP 503): "No available channel for model chat-sonnet-5"',
			'task_0123456789abcdef failed: content policy',
			'http://files.example:8080/files/images/img_1.png?sig=abc',
			'Creating the plant failed: "plant with id 31 already exists" (code 409)',
			'无可用渠道',
		];
		for (const text of texts) expect(masker.mask(text)).toBe(text);
	});

	it('leaves words that only contain "sk-" alone, so links to generated files stay usable', () => {
		const texts = ['https://cdn.example/risk-report/img_1.png', 'task-0123456789 finished', 'https://flask-app.example/v/1.mp4'];
		for (const text of texts) expect(masker.mask(text)).toBe(text);
	});

	it('masks a short secret only as a whole token, never inside a longer word', () => {
		expect(new SecretMasker(['abc']).mask('abc def')).toBe('*** def');
		expect(new SecretMasker(['abc']).mask('abcdef task_abc_1 x.abc.y')).toBe('abcdef task_abc_1 x.abc.y');
	});

	it('masks every string of a JSON-like value', () => {
		expect(masker.maskDeep({ a: [`x ${KEY}`, 1, null], b: { c: `Bearer ${HEADER_SECRET}` } })).toEqual({ a: ['x ***', 1, null], b: { c: 'Bearer ***' } });
	});
});

/** Everything n8n may show, log or store of an error: its fields, message, description, context, stack and cause. */
function everything(error: unknown): string {
	const e = error as Record<string, unknown>;
	return JSON.stringify({ ...e, message: e.message, description: e.description, context: e.context, stack: e.stack, cause: e.cause, errorResponse: e.errorResponse });
}

describe('the edge: asNodeError and errorItem', () => {
	const failure = () =>
		new GatewayError({
			kind: 'auth',
			headline: 'Submitting the video task failed: the gateway refused the API key',
			hint: 'Check the API Key of the Model Gateway credential.',
			status: 401,
			gatewayMessage: `invalid token Bearer ${KEY}; 无效的令牌 token=${KEY_TAIL}; header ${HEADER_SECRET}`,
			gatewayCode: `bad_${KEY}`,
			fields: { taskId: 'task_1', url: `http://gw.example/v1/videos/task_1/content?key=${KEY}` },
			itemIndex: 3,
		});

	it('quotes the gateway, masked, in message, description, context and stack', () => {
		const nodeError = asNodeError(node, failure(), 0, masker);
		expect(nodeError.message).toBe(
			'Submitting the video task failed: the gateway refused the API key (HTTP 401): "invalid token Bearer ***; 无效的令牌 token=***; header ***" (code bad_***)',
		);
		expect(nodeError.description).toBe('Check the API Key of the Model Gateway credential.');
		expect(nodeError.context.itemIndex).toBe(3);
		expect(nodeError.context.itemFields).toMatchObject({ kind: 'auth', httpCode: 401, taskId: 'task_1', mayHaveActed: false });
		const shown = everything(nodeError);
		expect(shown).not.toContain(KEY_TAIL);
		expect(shown).not.toContain(HEADER_SECRET);
	});

	it('builds a Continue On Fail item with the error, its hint and its fields, paired with the item, without the key', () => {
		const item = errorItem(node, failure(), 3, masker);
		expect(item.pairedItem).toEqual({ item: 3 });
		expect(item.json).toMatchObject({
			error: expect.stringContaining('Submitting the video task failed: the gateway refused the API key (HTTP 401)'),
			errorDescription: 'Check the API Key of the Model Gateway credential.',
			kind: 'auth',
			httpCode: 401,
			taskId: 'task_1',
			url: 'http://gw.example/v1/videos/task_1/content?key=***',
		});
		expect(JSON.stringify(item)).not.toContain(KEY_TAIL);
		expect(JSON.stringify(item)).not.toContain(HEADER_SECRET);
	});

	it('before a credential was read it knows no secret and changes no text; with the policy it masks by value', () => {
		expect(asNodeError(node, failure(), 0).message).toContain('(code bad_sk-live-');
		const masked = asNodeError(node, failure(), 0, masker);
		expect(masked.message).toContain('invalid token Bearer ***');
		expect(masked.message).not.toContain(KEY);
	});

	it('an error without an HTTP answer becomes a NodeOperationError, masked', () => {
		const error = networkError('Creating the plant', { code: 'ECONNRESET' }, 'gw.example').with({ hint: `retry with ${KEY}` });
		const nodeError = asNodeError(node, error, 2, masker);
		expect(nodeError).toBeInstanceOf(NodeOperationError);
		expect(nodeError.message).toBe('Creating the plant failed: the connection to gw.example was dropped before the answer was complete');
		expect(nodeError.context.itemIndex).toBe(2);
		expect(everything(nodeError)).not.toContain(KEY_TAIL);
	});

	it('an unexpected error keeps only its masked message', () => {
		const bug = new TypeError(`Cannot read properties of undefined (reading 'x') near ${KEY}`);
		const nodeError = asNodeError(node, bug, 1, masker);
		expect(nodeError.message).toBe("Cannot read properties of undefined (reading 'x') near ***");
		expect(everything(nodeError)).not.toContain(KEY_TAIL);
		expect(everything(errorItem(node, bug, 1, masker))).not.toContain(KEY_TAIL);
	});

	it("keeps our own input errors as they are, with their fields masked", () => {
		const own = withFields(new NodeOperationError(node, '"Prompt" must not be empty (item 0)', { itemIndex: 0 }), { link: `http://x/?k=${KEY}` });
		expect(itemFieldsOf(own)).toEqual({ link: `http://x/?k=${KEY}` });
		const nodeError = asNodeError(node, own, 0, masker);
		expect(nodeError).toBe(own);
		expect(nodeError.context.itemFields).toEqual({ link: 'http://x/?k=***' });
		expect(errorItem(node, own, 0, masker)).toEqual({ json: { error: '"Prompt" must not be empty (item 0)', link: 'http://x/?k=***' }, pairedItem: { item: 0 } });
	});

	it('keeps fields added on the way up (an image index, a task id)', () => {
		const error = withFields(httpError('Downloading image 2 of item 0', 403, '', ''), { index: 2, url: 'http://cdn.example/img_2.png' });
		expect(errorItem(node, error, 0, masker).json).toMatchObject({ index: 2, url: 'http://cdn.example/img_2.png', httpCode: 403 });
	});
});

describe('issue 26: hints that say what to do', () => {
	it('a 400 whose code names a missing item (new-api task_not_exist) is not_found, not a refusal of fields', () => {
		expect(classifyError(400, { code: 'task_not_exist', message: 'task_not_exist' })).toBe('not_found');
		expect(classifyError(400, { code: 'invalid_request', message: 'the task is not found' })).toBe('bad_request');
	});

	it('a 404 is a missing path or item whatever its message quotes: a path holding "billing" is no quota refusal', () => {
		expect(classifyError(404, { message: 'Invalid URL (GET /v1/dashboard/billing/usage)', type: 'invalid_request_error' })).toBe('not_found');
		expect(classifyError(404, { code: 'rate_limit_exceeded', message: 'no route for /v1/rate-limits' })).toBe('not_found');
		// What a 404 says of the key or the model still decides.
		expect(classifyError(404, { message: 'invalid token' })).toBe('auth');
		expect(classifyError(404, { message: 'model gpt-x does not exist' })).toBe('unknown_model');
	});

	// Review: a 5xx says the gateway may have acted (a paid submit may have created its task); a code naming a missing item does not make it a refusal.
	it.each([500, 502, 503, 504])('a %i whose code names a missing item stays a failure that may have acted, not a refusal', (status) => {
		expect(classifyError(status, { code: 'upstream_task_not_found', message: 'upstream task not found' })).toBe('server');
		const error = httpError('Submitting the video task', status, '{"error":{"code":"file_not_found","message":"file not found"}}', 'application/json', { mayHaveActed: true });
		expect(error.kind).toBe('server');
		expect(error.mayHaveActed).toBe(true);
	});

	it('a 413 says the request is too large for this gateway, naming its largest field and size', () => {
		const error = httpError('Submitting the video task', 413, '<html><title>413 Request Entity Too Large</title></html>', 'text/html', {}, { name: 'image', bytes: 3 * 1024 * 1024, file: true });
		expect(error.headline).toContain('Submitting the video task failed: the request is too large for this gateway');
		expect(error.hint).toMatch(/^Its largest part is the field image \(3\.0 MB\)\. Send a smaller file/);
		expect(error.kind).toBe('too_large');
	});

	// Review: a plain chat call has no file to make smaller.
	it('a 413 on a request that holds no file names its largest field without asking for a smaller file', () => {
		const body = { model: 'chat-sonnet-5', messages: [{ role: 'user', content: 'x'.repeat(5000) }] };
		const error = httpError('The chat request', 413, '', 'text/html', {}, largestField(body));
		expect(error.hint).toMatch(/^Its largest part is the field messages \(4\.9 KB\)\./);
		expect(error.hint).not.toMatch(/file/);
	});

	it.each([
		['a file the node attached', [{ role: 'user', content: [{ type: 'image_url', image_url: { url: new Base64Text(Buffer.alloc(6000), 'data:image/png;base64,') } }] }]],
		['an image as a data: URL (the Chat Model)', [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(8000)}` } }] }]],
	])('a 413 on a chat call with %s asks for a smaller file', (_what, messages) => {
		const error = httpError('The chat request', 413, '', 'text/html', {}, largestField({ model: 'chat-sonnet-5', messages }));
		expect(error.hint).toMatch(/field messages .*Send a smaller file/);
	});
});
