/**
 * JSON text with integers beyond 2^53 (int64 ids): `JSON.parse` would round them silently, so
 * such literals are turned into strings of their exact digits before parsing.
 */
export function parseJsonKeepingBigIntegers<T = unknown>(text: string): T {
	let out = '';
	let inString = false;
	for (let i = 0; i < text.length; i++) {
		const char = text[i];
		if (inString) {
			out += char;
			if (char === '\\') out += text[++i] ?? '';
			else if (char === '"') inString = false;
			continue;
		}
		if (char === '"') {
			inString = true;
			out += char;
			continue;
		}
		if (char === '-' || (char >= '0' && char <= '9')) {
			let end = i + 1;
			while (end < text.length && /[0-9.eE+-]/.test(text[end])) end++;
			const literal = text.slice(i, end);
			const unsafe = /^-?\d+$/.test(literal) && !Number.isSafeInteger(Number(literal));
			out += unsafe ? `"${literal}"` : literal;
			i = end - 1;
			continue;
		}
		out += char;
	}
	return JSON.parse(out) as T;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * An int64 from a number or a string of digits, as the exact digits to put in JSON.
 * Returns an error text when the value is not a whole number in the int64 range, or is a
 * number that is already beyond 2^53 (and so may have been rounded before it got here).
 */
export function toInt64Literal(value: unknown): { digits?: string; problem?: string } {
	if (typeof value === 'number') {
		if (!Number.isInteger(value)) return { problem: `must be a whole number, not ${value}` };
		if (!Number.isSafeInteger(value)) {
			return { problem: 'is beyond 2^53 as a number, so it may already have been rounded: pass it as a string of digits' };
		}
		return { digits: String(value) };
	}
	const text = String(value ?? '').trim();
	if (text === '') return { problem: 'must not be empty' };
	if (!/^-?\d+$/.test(text)) return { problem: `must be a whole number, not "${text.slice(0, 40)}"` };
	const big = BigInt(text);
	if (big < INT64_MIN || big > INT64_MAX) return { problem: 'is outside the int64 range (-9223372036854775808 to 9223372036854775807)' };
	return { digits: big.toString() };
}
