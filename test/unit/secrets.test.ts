/**
 * The secret policy of a credential (nodes/shared/credential/secrets.ts): the key in every form a
 * gateway may echo, any 8-character run of its secret part, the Custom Header values that are
 * credentials (by the header's name), and nothing else: settings and ordinary text keep every
 * character.
 */
import { SecretMasker, StreamMasker, isSecretHeader } from '../../nodes/shared/credential/secrets';
import { GatewayApi } from '../../credentials/GatewayApi.credentials';
import { checkCustomHeaders } from '../../nodes/shared/credential/settings';

const KEY = 'sk-Zq8v3LmN0pRt5XwY2bKc7HdJ9fGs4AeU';
const SECRET = KEY.slice(3);
const policy = SecretMasker.of({
	apiKey: KEY,
	customHeaders: {
		'x-api-token': 'Qk7v9',
		'x-relay-secret': 'pk/Se+cr=Value-0042',
		'x-portkey-provider': 'openai',
		'anthropic-version': '2023-06-01',
		'anthropic-beta': 'tools-2024',
		'x-custom-thing': 'opaque-value-77',
	},
});

/** Every way the key may be echoed; none may survive. */
const b64 = (text: string) => Buffer.from(text).toString('base64');
const b64url = (text: string) => Buffer.from(text).toString('base64url');

describe('the key', () => {
	it.each([
		['whole', KEY],
		['after sk-', SECRET],
		['URL-encoded', encodeURIComponent(`${KEY}/`).slice(0, -3)],
		['base64', b64(KEY)],
		['base64 of the secret part', b64(SECRET)],
		['base64url', b64url(KEY)],
		['inside Basic user:key', `Basic ${b64(`user:${KEY}`)}`],
		['inside Basic u:key', b64(`u:${KEY}`)],
		['inside Basic ab:key', b64(`ab:${KEY}`)],
		['inside base64url of a longer text', b64url(`{"k":"${KEY}"}`)],
		['after Bearer', `Bearer ${KEY}`],
	])('%s', (_name, form) => {
		const masked = policy.mask(`the gateway said: ${form} (end)`);
		expect(masked).not.toContain(SECRET.slice(0, 8));
		for (let start = 0; start + 8 <= SECRET.length; start++) expect(masked).not.toContain(SECRET.slice(start, start + 8));
		expect(masked).not.toContain(b64(KEY).slice(4, 16));
		expect(masked).toMatch(/^the gateway said: .*\*\*\*.* \(end\)$/);
	});

	it('masks any run of 8 or more characters of its secret part, and only the run', () => {
		for (let length = 8; length <= SECRET.length; length += 5) {
			for (const start of [0, 3, SECRET.length - length]) {
				const fragment = SECRET.slice(start, start + length);
				expect(policy.mask(`cut:${fragment}…`)).toBe('cut:***…');
			}
		}
		// A quote cut in the middle of the key, then the rest after a break.
		expect(policy.mask(`"…${KEY.slice(0, 20)}" and "${KEY.slice(20)}"`)).toBe('"…***" and "***"');
	});

	it('masks any run of 8 or more characters of its secret part URL-encoded, and only the run (a cut of the key put into a link)', () => {
		const slashed = new SecretMasker(['sk-_h5-Tw2srMty=-ZF5_Pm5s2eDFcZi/8hdwtKt2DT=2Vg']);
		const secret = 'h5-Tw2srMty=-ZF5_Pm5s2eDFcZi/8hdwtKt2DT=2Vg';
		for (let length = 8; length <= secret.length; length += 3) {
			for (let start = 0; start + length <= secret.length; start += 4) {
				const encoded = encodeURIComponent(secret.slice(start, start + length));
				for (const form of [encoded, encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase())]) {
					const masked = slashed.mask(`http://cdn.example.com/files/${form}.png?x=%2Fa`);
					expect(masked).toBe('http://cdn.example.com/files/***.png?x=%2Fa');
				}
			}
		}
		// Escapes of ordinary text, and a 7-character run, keep every character.
		const ordinary = `https://cdn.example.com/a%2Fb/${encodeURIComponent('Tw2srMt')}?q=hello%20world%3D1&r=%E2%9C%93`;
		expect(slashed.mask(ordinary)).toBe(ordinary);
	});

	it('leaves runs of 7 characters and ordinary text alone', () => {
		const text = `Seven ${SECRET.slice(0, 7)} chars; the run finished in 12.5 s, task_openai_1, report.pdf, https://cdn.example.com/a/b.png`;
		expect(policy.mask(text)).toBe(text);
	});

	it('leaves words and numbers of a key made by hand alone (they are no random runs)', () => {
		const handMade = new SecretMasker(['sk-integration-messages-0123456789']);
		expect(handMade.mask('The messages request failed for task_0123456789')).toBe('The messages request failed for task_0123456789');
		expect(handMade.mask('key sk-integration-messages-0123456789 and integration-messages-0123456789')).toBe('key *** and ***');
	});

	it('masks nothing by its shape: keys and tokens it does not know stay (issue 26)', () => {
		expect(policy.mask('another key sk-other-9876543210 here')).toBe('another key sk-other-9876543210 here');
		expect(policy.mask('Authorization: Bearer abc.def')).toBe('Authorization: Bearer abc.def');
		expect(policy.mask('risk-report, task-123 and flask-app')).toBe('risk-report, task-123 and flask-app');
	});
});

describe('Custom Header values', () => {
	it('decides by the header name which values are credentials', () => {
		for (const name of ['x-api-key', 'x-api-token', 'api-key', 'apikey', 'x-portkey-api-key', 'x-portkey-virtual-key', 'X-Auth', 'authorization-extra', 'x-password', 'x-passwd', 'x-signature', 'x-sig', 'x-session-id', 'cookie', 'x-credential', 'x-jwt', 'x-bearer', 'x-client-secret']) {
			expect([name, isSecretHeader(name)]).toEqual([name, true]);
		}
		for (const name of ['x-portkey-provider', 'anthropic-version', 'anthropic-beta', 'x-region', 'x-model', 'x-mode', 'x-route', 'x-trace-id', 'accept-language', 'x-locale', 'x-timeout']) {
			expect([name, isSecretHeader(name)]).toEqual([name, false]);
		}
		// Where the name does not tell, the value is a secret.
		expect(isSecretHeader('x-custom-thing')).toBe(true);
	});

	it('masks a secret value whatever its length, and URL-encoded', () => {
		expect(policy.mask('{"x-api-token":"Qk7v9"}')).toBe('{"x-api-token":"***"}');
		expect(policy.mask('token=Qk7v9.')).toBe('token=***.');
		expect(policy.mask(`got ${encodeURIComponent('pk/Se+cr=Value-0042')} and pk/Se+cr=Value-0042`)).toBe('got *** and ***');
		expect(policy.mask('got pk%2fSe%2bcr%3dValue-0042')).toBe('got ***');
		expect(policy.mask('value opaque-value-77 here')).toBe('value *** here');
		expect(policy.mask(`b64 ${Buffer.from('pk/Se+cr=Value-0042').toString('base64')} end`)).toBe('b64 *** end');
	});

	it('masks a short secret value only as a whole token', () => {
		for (const text of ['task_Qk7v9_1', 'Qk7v9abc', 'file-Qk7v9.png', 'https://cdn.example.com/xQk7v9/y', 'QUEUED_QK7V9']) expect(policy.mask(text)).toBe(text);
	});

	it('masks a short secret value as a whole token in any letter case (a node upper-cases a task state)', () => {
		expect(policy.mask('QUEUED QK7V9')).toBe('QUEUED ***');
		expect(policy.mask('status qk7v9, retry')).toBe('status ***, retry');
		expect(policy.mask('task_QK7V9_1')).toBe('task_QK7V9_1');
	});

	it('never masks the value of a setting', () => {
		const text = 'messages is not supported by openai; anthropic-version=2023-06-01 with tools-2024; task_openai_1';
		expect(policy.mask(text)).toBe(text);
		expect(policy.maskDeep({ task_id: 'task_openai_1', note: 'openai' })).toEqual({ task_id: 'task_openai_1', note: 'openai' });
	});

	it('refuses a value outside Latin-1, naming the header and not the value', () => {
		expect(() => checkCustomHeaders('{"x-access-key":"ключ-доступа-77"}')).toThrow(/"x-access-key"/);
		expect(() => checkCustomHeaders('{"x-access-key":"ключ-доступа-77"}')).not.toThrow(/ключ/);
		expect(checkCustomHeaders('{"x-note":"café"}')).toEqual({ 'x-note': 'café' });
	});

	it("refuses it in the credential's own authentication too", async () => {
		const credentials = { apiKey: KEY, baseUrl: 'https://gw.example.com', customHeaders: '{"x-access-key":"ключ-доступа-77"}' };
		const refused = await new GatewayApi().authenticate(credentials, { url: '/v1/models' }).then(
			() => undefined,
			(error: Error) => error.message,
		);
		expect(refused).toMatch(/"x-access-key"/);
		expect(refused).not.toMatch(/ключ/);
	});
});

describe('masking a stream', () => {
	const streamed = (pieces: string[]) => {
		const stream = new StreamMasker(policy);
		const out = pieces.map((piece) => stream.push(piece));
		return { out, text: out.join('') + stream.flush() };
	};

	it('masks a key split over pieces at every position', () => {
		const text = `Your key is ${KEY}, keep it.`;
		for (let cut = 1; cut < text.length; cut++) {
			for (const second of [cut + 1, cut + 7, text.length]) {
				const pieces = [text.slice(0, cut), text.slice(cut, second), text.slice(second)].filter((piece) => piece !== '');
				expect(streamed(pieces).text).toBe('Your key is ***, keep it.');
			}
		}
	});

	it('masks a URL-encoded run of the key split over pieces at every position', () => {
		const slashed = new SecretMasker(['sk-_h5-Tw2srMty=-ZF5_Pm5s2eDFcZi/8hdwtKt2DT=2Vg']);
		for (const run of ['5_Pm5s2eDFcZi/8hdwtKt2DT=2', '/8hdwtKt2DT=2', 'Mty=-ZF5_P']) {
			const text = `see /files/${encodeURIComponent(run)}.png now`;
			for (let cut = 1; cut < text.length; cut++) {
				const stream = new StreamMasker(slashed);
				expect(stream.push(text.slice(0, cut)) + stream.push(text.slice(cut)) + stream.flush()).toBe('see /files/***.png now');
			}
		}
	});

	it('masks a short secret header value split over pieces, and leaves a Bearer token it does not know', () => {
		expect(streamed(['token ', 'Q', 'k7', 'v9', ' ok']).text).toBe('token *** ok');
		expect(streamed(['auth: Bea', 'rer ', 'abc', 'def', ' done']).text).toBe('auth: Bearer abcdef done');
	});

	it('holds back only a few characters of ordinary text', () => {
		const { out } = streamed(['Hello there, how are you today? ', 'Fine.']);
		expect(out[0].length).toBeGreaterThanOrEqual('Hello there, how are you today? '.length - 7);
		expect(streamed(['Hello there, how are you today? ', 'Fine.']).text).toBe('Hello there, how are you today? Fine.');
	});

	it('is linear: a long text is masked quickly', () => {
		const long = `${'lorem ipsum dolor sit amet '.repeat(40_000)}${KEY}`;
		const started = Date.now();
		expect(policy.mask(long).endsWith('***')).toBe(true);
		expect(Date.now() - started).toBeLessThan(2000);
	});
});
