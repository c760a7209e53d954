/**
 * Issue 26: the secrets are known by value, in every form a relay or a log may write them (cut to
 * a prefix of 8 or more characters, URL-encoded by any common encoder and twice, JSON-escaped with
 * `\/` and `\u`), and nothing that merely looks like a key is masked (a task id `task-sk-…`).
 */
import { SecretMasker, StreamMasker } from '../../nodes/shared/credential/secrets';
import { secretEncodings } from '../helpers/secretEncodings';

const KEY = 'sk-Zq8v3LmN0pRt5XwY2bKc7HdJ9fGs4AeU';
const HEADER = 'pk/Se+cr=Va lue-0042/x';
const LATIN = 'café-Tok3n/x9Q';
const masker = SecretMasker.of({ apiKey: KEY, customHeaders: { 'x-relay-secret': HEADER, 'x-latin-token': LATIN, 'x-portkey-provider': 'openai' } });

const streamed = (pieces: string[]) => {
	const stream = new StreamMasker(masker);
	return pieces.map((piece) => stream.push(piece)).join('') + stream.flush();
};

/** Every form of every prefix of 8 or more characters of `value` (and the value itself). */
function cases(name: string, value: string): Array<[string, string]> {
	const out: Array<[string, string]> = [];
	for (let length = 8; length <= value.length; length += length < 12 ? 1 : 5) {
		for (const [form, text] of Object.entries(secretEncodings(value.slice(0, length)))) out.push([`${name}, first ${length}, ${form}`, text]);
	}
	for (const [form, text] of Object.entries(secretEncodings(value))) out.push([`${name} whole, ${form}`, text]);
	return out;
}

describe('each secret, cut and in each form, is masked whole', () => {
	it.each([...cases('the header value', HEADER), ...cases('a Latin-1 header value', LATIN), ...cases('the key', KEY)])('%s', (_name, form) => {
		expect(masker.mask(`upstream said: "${form}" (end)`)).toBe('upstream said: "***" (end)');
	});

	it.each([...cases('the header value', HEADER), ...cases('the key', KEY)].filter((_c, i) => i % 3 === 0))('%s, streamed in two pieces at every cut and a character at a time', (_name, form) => {
		const text = `upstream said: "${form}" (end)`;
		for (let cut = 1; cut < text.length; cut++) expect([cut, streamed([text.slice(0, cut), text.slice(cut)])]).toEqual([cut, 'upstream said: "***" (end)']);
		expect(streamed([...text])).toBe('upstream said: "***" (end)');
	});

	it('masks a prefix of 8 characters or more that ends a stream piece, before the rest arrives', () => {
		const stream = new StreamMasker(masker);
		const first = stream.push(`quote: ${HEADER.slice(0, 9)}`);
		expect(first).not.toContain(HEADER.slice(0, 3));
		expect(first + stream.push(`${HEADER.slice(9)} end`) + stream.flush()).toBe('quote: *** end');
	});
});

describe('nothing that merely looks like a key is masked', () => {
	const texts = [
		'task-sk-9f8e7d6c5b',
		'Video task task-sk-9f8e7d6c5b failed: content policy',
		'clip-task-sk-9f8e7d6c5b.mp4',
		'https://cdn.example.com/files/sk-9f8e7d6c5b/v.mp4',
		'another key sk-other-9876543210 here',
		'Authorization: Bearer abc.def',
		'Basic dXNlcjpwYXNz',
		'risk-report, task-123 and flask-app',
		// A start of the key shorter than 8 characters, and of the header value.
		`${KEY.slice(0, 7)} and ${HEADER.slice(0, 7)}`,
		// Escapes of ordinary text.
		'a\\/b \\u0041\\u00e9 %41%2F%252F q=hello+world',
	];
	it.each(texts)('%s', (text) => {
		expect(masker.mask(text)).toBe(text);
		expect(streamed([...text])).toBe(text);
		expect(masker.maskDeep({ task_id: text })).toEqual({ task_id: text });
	});
});

describe('a large answer', () => {
	it('keeps a 5 MB answer full of escapes of ordinary text whole (its cost is bench row 12b)', () => {
		const escaped = 'The fern grows \\/ in %2F shade \\u0041nd likes water. '.repeat(100_000);
		expect(masker.mask(escaped)).toBe(escaped);
	});
});
