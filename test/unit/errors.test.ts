import { classifyError, describeHttpError, describeNetworkError, parseErrorBody, scrubSecrets } from '../../nodes/shared/errors';

const KEY = 'sk-live-0123456789abcdefSECRET';

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

	it('summarises an HTML page instead of dumping it', () => {
		const html = '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr>nginx</body></html>';
		const parsed = parseErrorBody(html, 'text/html');
		expect(parsed.html).toBe(true);
		expect(parsed.message).toBe('an HTML error page ("502 Bad Gateway")');
	});

	it('copes with an empty body and with plain text', () => {
		expect(parseErrorBody('')).toEqual({});
		expect(parseErrorBody('upstream timeout')).toEqual({ message: 'upstream timeout' });
	});
});

describe('classification and messages', () => {
	it.each([
		[401, '{"error":{"message":"Invalid token","code":"invalid_api_key"}}', 'authentication', /^Authentication failed.*"Invalid token"/],
		[403, '{"error":{"message":"user quota is not enough","code":"insufficient_user_quota"}}', 'quota', /^No quota/],
		[429, '', 'rate_limit', /^Rate limited.*\(HTTP 429\)$/],
		[503, '{"error":{"message":"No available channel for model x","code":"model_not_found"}}', 'unknown_model', /^Unknown model.*"No available channel for model x" \(code model_not_found\)/],
		[400, '{"error":{"message":"n must be at most 10","type":"invalid_request_error"}}', 'bad_request', /^Bad request.*"n must be at most 10"/],
		[400, '{"error":4001,"message":"plant name rejected"}', 'bad_request', /"plant name rejected" \(code 4001\)/],
		[502, '<html><title>502 Bad Gateway</title></html>', 'server', /answered with an HTML error page \("502 Bad Gateway"\)/],
		[500, '', 'server', /the gateway sent no details/],
	])('HTTP %i %s -> %s', (status, body, kind, message) => {
		const details = describeHttpError(status as number, body as string, body.startsWith('<') ? 'text/html' : 'application/json');
		expect(details.kind).toBe(kind);
		expect(details.message).toMatch(message as RegExp);
	});

	it('treats 503 without model_not_found as a server failure', () => {
		expect(classifyError(503, { message: 'service busy' })).toBe('server');
	});

	it('never repeats the key, even when the gateway echoes it', () => {
		const body = `{"error":{"message":"token ${KEY} is invalid (Bearer ${KEY})"}}`;
		const details = describeHttpError(401, body, 'application/json', KEY);
		expect(details.message).not.toContain(KEY);
		expect(details.message).toContain('sk-***');
		expect(scrubSecrets(`Authorization: Bearer abc.def`, undefined)).toBe('Authorization: Bearer ***');
	});

	it('names network failures without their request configuration', () => {
		expect(describeNetworkError({ code: 'ECONNRESET' }, 'Creating the plant')).toMatch(/connection was dropped/);
		expect(describeNetworkError({ code: 'ECONNREFUSED' }, 'X')).toMatch(/refused/);
		expect(describeNetworkError({ code: 'ECONNABORTED', message: 'timeout of 5ms exceeded' }, 'X')).toMatch(/timed out/);
		expect(describeNetworkError({ message: `bad ${KEY}` }, 'X', KEY)).not.toContain(KEY);
	});
});
