/**
 * The secrets of one credential, and the one function that removes them from anything shown:
 * the key, its part after `sk-` (relays quote it without the prefix), custom header values, and
 * anything shaped like a key or a bearer token.
 */
// Not inside a word: `risk-report`, `task-123` and `flask-app` are no keys.
const KEY_PATTERN = /(?<![A-Za-z0-9])sk-[A-Za-z0-9_\-.]{3,}/g;
const BEARER_PATTERN = /(Bearer\s+)[^\s"',;}\]]+/gi;
const BASIC_PATTERN = /(Basic\s+)[A-Za-z0-9+/=]{6,}/g;
/** Shorter secrets would mask ordinary words. */
const MIN_SECRET_LENGTH = 6;

export class SecretMasker {
	private readonly secrets: string[];

	constructor(secrets: ReadonlyArray<string | undefined> = []) {
		const list = new Set<string>();
		for (const secret of secrets) {
			const text = String(secret ?? '').trim();
			if (text.length < MIN_SECRET_LENGTH) continue;
			list.add(text);
			if (text.startsWith('sk-') && text.length - 3 >= MIN_SECRET_LENGTH) list.add(text.slice(3));
		}
		// Longest first, so the whole key is replaced before its tail.
		this.secrets = [...list].sort((a, b) => b.length - a.length);
	}

	mask(text: string): string {
		let out = String(text ?? '');
		for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join('***');
		return out.replace(KEY_PATTERN, 'sk-***').replace(BEARER_PATTERN, '$1***').replace(BASIC_PATTERN, '$1***');
	}

	/** A copy of a JSON-like value with every string masked. */
	maskDeep<T>(value: T): T {
		if (typeof value === 'string') return this.mask(value) as T;
		if (Array.isArray(value)) return value.map((entry) => this.maskDeep(entry)) as T;
		if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
			const out: Record<string, unknown> = {};
			for (const [key, entry] of Object.entries(value)) out[key] = this.maskDeep(entry);
			return out as T;
		}
		return value;
	}
}

/** The masker for errors raised before a credential was read: pattern-based only. */
export const patternMasker = new SecretMasker();
