/**
 * Base-URL handling shared by the credential and the transport: users paste gateway addresses
 * in many forms (trailing slash, trailing /v1, mounted under a path prefix), and every form must
 * reach the same endpoints.
 */

/** `https://gw.example.com/prefix/v1/` -> `https://gw.example.com/prefix` */
export function normalizeBaseUrl(raw: string): string {
	let url = String(raw ?? '').trim();
	url = url.replace(/\/+$/, '');
	url = url.replace(/\/v1$/i, '');
	return url.replace(/\/+$/, '');
}

/** The URL, or undefined for text that is none. */
export function parseUrl(text: string): URL | undefined {
	try {
		return new URL(text);
	} catch {
		return undefined;
	}
}

/** Whether the text is an http(s) URL with a host, optionally a port and a path. */
export function isHttpUrl(raw: string): boolean {
	const url = parseUrl(raw);
	return (url?.protocol === 'http:' || url?.protocol === 'https:') && url.hostname !== '';
}

/** Joins a normalized base URL and an absolute endpoint path such as `/v1/models`. */
export function joinUrl(baseUrl: string, path: string): string {
	return `${normalizeBaseUrl(baseUrl)}/${path.replace(/^\/+/, '')}`;
}

/**
 * A link as a gateway writes it: an http(s) URL, or a reference (`/files/v.mp4`) resolved against
 * the gateway's origin as RFC 3986 resolves references, never against its base path (which the
 * gateway's own routes already include). Undefined for text that is no link: a sentence (new-api
 * writes a failed task's reason there), another scheme.
 */
export function resolveLink(reference: string, baseUrl: string | undefined): string | undefined {
	const written = reference.trim();
	// Whitespace inside is a sentence, unless the text is a whole http(s) URL (a file name with a space).
	if (/\s/.test(written) && !/^https?:\/\//i.test(written)) return undefined;
	try {
		const url = baseUrl === undefined ? new URL(written) : new URL(written, `${new URL(baseUrl).origin}/`);
		return isHttpUrl(url.href) ? url.href : undefined;
	} catch {
		return undefined;
	}
}

/** Same scheme, host and port: only then may a link receive the gateway's bearer key. */
export function isSameOrigin(a: string, b: string): boolean {
	const origin = parseUrl(a)?.origin;
	return origin !== undefined && origin === parseUrl(b)?.origin;
}

/** `host[:port]` of a link, for messages; the text itself when it is no URL. */
export function hostOf(link: string): string {
	return parseUrl(link)?.host ?? String(link).slice(0, 80);
}
