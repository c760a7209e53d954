/**
 * Review of 6434f44 (URL-encoded runs of the key are masked). Holds: lower-case hex, every
 * character escaped, split mid-escape over 1-character pieces, ordinary URLs, a 5 MB text of
 * `%41` in linear time. Breaks: the same run double-encoded (`%252F`), as a link inside a link's
 * query is written.
 */
import { SecretMasker, StreamMasker } from '../../nodes/shared/credential/secrets';

const KEY = 'sk-_h5-Tw2srMty=-ZF5_Pm5s2eDFcZi/8hdwtKt2DT=2Vg';
const masker = new SecretMasker([KEY]);
const streamed = (pieces: string[]) => {
	const stream = new StreamMasker(masker);
	return pieces.map((piece) => stream.push(piece)).join('') + stream.flush();
};
const everyEscaped = (text: string) => [...text].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');

describe('URL-encoded runs of the key', () => {
	it('masks a run written double-encoded (a link put into the query of another link)', () => {
		const run = 'FcZi/8hdwtKt';
		const inner = `https://cdn.example.com/f/${encodeURIComponent(run)}.png`;
		const outer = `https://relay.example.com/fetch?u=${encodeURIComponent(inner)}`;
		expect(outer).toContain('FcZi%252F8hdwtKt');
		expect(masker.mask(outer)).toBe('https://relay.example.com/fetch?u=https%3A%2F%2Fcdn.example.com%2Ff%2F***.png');
	});

	it('masks a run with every character escaped in lower-case hex, whole and streamed one character at a time', () => {
		const text = `see ${everyEscaped('Mty=-ZF5_P')} now`;
		expect(masker.mask(text)).toBe('see *** now');
		expect(streamed([...text])).toBe('see *** now');
	});

	it('keeps ordinary URLs, other escapes and task ids whole', () => {
		for (const text of ['https://cdn.example.com/a%2Fb/c?q=hello%20world&x=%E2%9C%93#%2F', 'https://ex.com/s?q=Tw2srMt%2B&r=%25%32%46', 'task_openai_1%2Fabc', 'a+b%2Bc%3D']) {
			expect(masker.mask(text)).toBe(text);
			expect(streamed([...text])).toBe(text);
		}
	});

	it('keeps 5 MB of %41 escapes whole (their cost is bench row 12c)', () => {
		const text = '%41'.repeat(5_000_000 / 3);
		expect(masker.mask(text)).toBe(text);
	});
});
