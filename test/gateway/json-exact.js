'use strict';
// A JSON parser that keeps every number as its source text (a JsonNumber), so an int64 id
// beyond 2^53 can be checked and echoed digit for digit. JSON.parse would round it, and
// Node 20's JSON.parse gives a reviver no access to the source text.

class JsonNumber {
	constructor(raw) {
		this.raw = raw;
	}
}

const MAX_DEPTH = 64;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WHITESPACE = /[ \t\n\r]*/y;

function parseExactJson(text) {
	let pos = 0;
	const fail = (what) => {
		throw new SyntaxError(`${what} at position ${pos}`);
	};
	const skipSpace = () => {
		WHITESPACE.lastIndex = pos;
		WHITESPACE.exec(text);
		pos = WHITESPACE.lastIndex;
	};
	const expect = (ch) => {
		skipSpace();
		if (text[pos] !== ch) fail(`expected '${ch}'`);
		pos++;
	};

	function parseString() {
		const start = pos;
		pos++; // opening quote
		while (pos < text.length && text[pos] !== '"') pos += text[pos] === '\\' ? 2 : 1;
		if (pos >= text.length) fail('unterminated string');
		pos++;
		// The token is delimited; JSON.parse validates its escapes and decodes it.
		return JSON.parse(text.slice(start, pos));
	}

	function parseValue(depth) {
		if (depth > MAX_DEPTH) fail('nesting too deep');
		skipSpace();
		const ch = text[pos];
		if (ch === '{') return parseObject(depth);
		if (ch === '[') return parseArray(depth);
		if (ch === '"') return parseString();
		for (const [word, value] of [['true', true], ['false', false], ['null', null]]) {
			if (text.startsWith(word, pos)) {
				pos += word.length;
				return value;
			}
		}
		NUMBER.lastIndex = pos;
		const m = NUMBER.exec(text);
		if (!m) fail('unexpected token');
		pos = NUMBER.lastIndex;
		return new JsonNumber(m[0]);
	}

	/** Reads the comma-separated items of an object or array, from its opening bracket to `close`. */
	function parseItems(close, parseItem) {
		pos++;
		skipSpace();
		if (text[pos] === close) {
			pos++;
			return;
		}
		for (;;) {
			parseItem();
			skipSpace();
			if (text[pos] === close) {
				pos++;
				return;
			}
			expect(',');
		}
	}

	function parseObject(depth) {
		const object = Object.create(null); // "__proto__" is then an ordinary key
		parseItems('}', () => {
			skipSpace();
			if (text[pos] !== '"') fail('expected a property name');
			const key = parseString();
			expect(':');
			object[key] = parseValue(depth + 1);
		});
		return object;
	}

	function parseArray(depth) {
		const array = [];
		parseItems(']', () => array.push(parseValue(depth + 1)));
		return array;
	}

	const value = parseValue(0);
	skipSpace();
	if (pos !== text.length) fail('unexpected text after the JSON value');
	return value;
}

module.exports = { parseExactJson, JsonNumber };
