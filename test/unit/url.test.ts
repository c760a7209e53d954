import { isHttpUrl, isSameOrigin, joinUrl, normalizeBaseUrl, resolveLink } from '../../nodes/shared/credential/url';

describe('base URL handling', () => {
	it.each([
		['https://gw.example.com', 'https://gw.example.com'],
		['https://gw.example.com/', 'https://gw.example.com'],
		['https://gw.example.com/v1', 'https://gw.example.com'],
		['https://gw.example.com/v1/', 'https://gw.example.com'],
		['  https://gw.example.com:8443/relay/v1// ', 'https://gw.example.com:8443/relay'],
		['http://127.0.0.1:3000/prefix', 'http://127.0.0.1:3000/prefix'],
	])('normalises %s', (raw, expected) => {
		expect(normalizeBaseUrl(raw)).toBe(expected);
	});

	it('joins every pasted form to the same endpoint', () => {
		for (const base of ['https://a.io/gw', 'https://a.io/gw/', 'https://a.io/gw/v1', 'https://a.io/gw/v1/']) {
			expect(joinUrl(base, '/v1/models')).toBe('https://a.io/gw/v1/models');
		}
		expect(joinUrl('https://a.io', 'plants')).toBe('https://a.io/plants');
	});

	it('accepts only http(s) URLs with a host', () => {
		expect(isHttpUrl('https://a.io')).toBe(true);
		expect(isHttpUrl('http://127.0.0.1:80/x')).toBe(true);
		expect(isHttpUrl('ftp://a.io')).toBe(false);
		expect(isHttpUrl('a.io')).toBe(false);
		expect(isHttpUrl('')).toBe(false);
	});

	it('compares origins by scheme, host and port', () => {
		expect(isSameOrigin('https://a.io/v1/videos/1/content', 'https://a.io/gw')).toBe(true);
		expect(isSameOrigin('https://cdn.a.io/x.mp4', 'https://a.io')).toBe(false);
		expect(isSameOrigin('http://a.io/x', 'https://a.io')).toBe(false);
		expect(isSameOrigin('https://a.io:8443/x', 'https://a.io')).toBe(false);
		expect(isSameOrigin('not a url', 'https://a.io')).toBe(false);
	});
});

describe('resolveLink: a result link as a gateway writes it', () => {
	const base = 'https://gw.example.com/prefix';
	it.each([
		['/files/v.mp4', 'https://gw.example.com/files/v.mp4'],
		['files/v.mp4', 'https://gw.example.com/files/v.mp4'],
		['https://cdn.example.net/v.mp4?sig=1', 'https://cdn.example.net/v.mp4?sig=1'],
		['//cdn.example.net/v.mp4', 'https://cdn.example.net/v.mp4'],
	])('%s against the origin, not the base path', (reference, link) => {
		expect(resolveLink(reference, base)).toBe(link);
	});

	// Review: a link a relay writes with a space around it, or a space in its file name, is still the link.
	it.each([
		[' https://cdn.example.net/v.mp4', 'https://cdn.example.net/v.mp4'],
		['https://cdn.example.net/v.mp4\n', 'https://cdn.example.net/v.mp4'],
		['\t/files/v.mp4 ', 'https://gw.example.com/files/v.mp4'],
		['https://cdn.example.net/my video.mp4', 'https://cdn.example.net/my%20video.mp4'],
	])('%j is the link, its spaces trimmed or encoded', (reference, link) => {
		expect(resolveLink(reference, base)).toBe(link);
	});

	it.each(['task failed: upstream refused the prompt', 'ftp://host/v.mp4', 'javascript:alert(1)', 'data:video/mp4;base64,AAAA'])('%s is no link', (text) => {
		expect(resolveLink(text, base)).toBeUndefined();
	});
});
