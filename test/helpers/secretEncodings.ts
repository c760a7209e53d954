/**
 * The forms a relay, a proxy or a log may write a secret in (issue 26), as their encoders write
 * them: shared by the unit, integration, generative and e2e tests, so each checks the same list.
 */

const hex = (code: number, upper: boolean) => (upper ? code.toString(16).toUpperCase() : code.toString(16)).padStart(2, '0');

/** Percent-encoding of the UTF-8 bytes of every character outside `safe`. */
function percentEncoded(text: string, safe: RegExp, upper = true): string {
	return [...text].map((char) => (safe.test(char) ? char : [...Buffer.from(char, 'utf8')].map((byte) => `%${hex(byte, upper)}`).join(''))).join('');
}

/** Python's `urllib.parse.quote` (keeps `/`). */
export const pythonQuote = (text: string) => percentEncoded(text, /^[A-Za-z0-9_.~/-]$/);
/** Python's `quote_plus`: a space is `+`, `/` is encoded. */
export const pythonQuotePlus = (text: string) => percentEncoded(text.replace(/ /g, '\u0000'), /^[A-Za-z0-9_.~\u0000-]$/).replace(/\u0000/g, '+');

/** JSON string contents with every character written as a `\u` escape. */
const jsonAllEscaped = (text: string, upper: boolean) => [...text].map((char) => `\\u${hex(char.charCodeAt(0), upper).padStart(4, '0')}`).join('');

/** JSON string contents as PHP writes them (`/` as `\/`). */
const phpJson = (text: string) => JSON.stringify(text).slice(1, -1).replace(/\//g, '\\/');

/** Every form, by name; a form equal to the plain value is left out (but `plain`). */
export function secretEncodings(value: string): Record<string, string> {
	const forms: Record<string, string> = {
		plain: value,
		encodeURIComponent: encodeURIComponent(value),
		'encodeURIComponent, lower-case hex': encodeURIComponent(value).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
		"Python's quote": pythonQuote(value),
		"Python's quote_plus": pythonQuotePlus(value),
		'URL-encoded twice': encodeURIComponent(encodeURIComponent(value)),
		"Python's quote twice": pythonQuote(pythonQuote(value)),
		"PHP's JSON (\\/)": phpJson(value),
		'JSON, non-ASCII as \\u': JSON.stringify(value).slice(1, -1).replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`),
		'JSON, every character as \\u': jsonAllEscaped(value, false),
		'JSON, every character as \\u, upper-case hex': jsonAllEscaped(value, true),
		// One encoder inside another: a JSON body in a URL query, an error text quoted in JSON twice.
		"PHP's JSON, then URL-encoded": encodeURIComponent(phpJson(value)),
		'JSON \\u escapes, then URL-encoded': encodeURIComponent(jsonAllEscaped(value, false)),
		"PHP's JSON twice": phpJson(phpJson(value)),
		'JSON \\u escapes, JSON-escaped again': phpJson(jsonAllEscaped(value, true)),
	};
	const seen = new Set<string>();
	return Object.fromEntries(
		Object.entries(forms).filter(([name, form]) => {
			if (seen.has(form) || (name !== 'plain' && form === value)) return false;
			seen.add(form);
			return true;
		}),
	);
}
