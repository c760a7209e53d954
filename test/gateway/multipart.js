'use strict';
// A multipart/form-data reader (RFC 7578 / RFC 2046), strict as Go's mime/multipart is (what
// new-api reads forms with): the boundary from the Content-Type, a delimiter line before each
// part, headers, the content up to the next delimiter, and the closing delimiter `--boundary--`.
// A body that breaks any of these is refused with a MultipartError, in Go's words where Go has them.

class MultipartError extends Error {}

/** The boundary of a `multipart/form-data` Content-Type, quoted or not. */
function boundaryOf(contentType) {
	const [type, ...params] = String(contentType ?? '').split(';');
	if (type.trim().toLowerCase() !== 'multipart/form-data') throw new MultipartError("request Content-Type isn't multipart/form-data");
	for (const param of params) {
		const match = /^\s*boundary\s*=\s*(?:"([^"]*)"|([^\s;]*))\s*$/i.exec(param);
		if (match) {
			const boundary = match[1] ?? match[2];
			if (boundary && boundary.length <= 70) return boundary;
			throw new MultipartError('mime: invalid media parameter');
		}
	}
	throw new MultipartError('no multipart boundary param in Content-Type');
}

// Go's mime.ParseMediaType, what mime/multipart reads a Content-Disposition with.
const TSPECIALS = '()<>@,;:\\"/[]?=';
const isTokenChar = (char) => char > ' ' && char < '\x7f' && !TSPECIALS.includes(char);

/**
 * A quoted-string as Go reads it (mime/mediatype.go consumeValue): `\` escapes a tspecial only (an
 * MSIE file path keeps its other backslashes), so a `\` just before the closing quote hides it; a
 * string without its closing quote is no value. Returns [value, rest], or undefined.
 */
function quotedString(text) {
	let value = '';
	for (let i = 1; i < text.length; i++) {
		const char = text[i];
		if (char === '"') return [value, text.slice(i + 1)];
		if (char === '\\' && i + 1 < text.length && TSPECIALS.includes(text[i + 1])) {
			value += text[++i];
			continue;
		}
		value += char;
	}
	return undefined;
}

/**
 * `name="x"; filename="y"` parameters of a Content-Disposition value (keys lowercased), or undefined
 * when Go's parser refuses the value: then Go's part has no name, and its ReadForm skips the part.
 */
function headerParams(value) {
	const params = {};
	let rest = value.slice(value.indexOf(';') === -1 ? value.length : value.indexOf(';'));
	while ((rest = rest.trimStart()) !== '') {
		if (rest[0] !== ';') return undefined;
		rest = rest.slice(1).trimStart();
		if (rest === '') break;
		let end = 0;
		while (end < rest.length && isTokenChar(rest[end])) end++;
		const key = rest.slice(0, end).toLowerCase();
		rest = rest.slice(end).trimStart();
		if (key === '' || rest[0] !== '=') return undefined;
		rest = rest.slice(1).trimStart();
		let parsed;
		if (rest[0] === '"') parsed = quotedString(rest);
		else {
			let tokenEnd = 0;
			while (tokenEnd < rest.length && isTokenChar(rest[tokenEnd])) tokenEnd++;
			parsed = tokenEnd === 0 ? undefined : [rest.slice(0, tokenEnd), rest.slice(tokenEnd)];
		}
		if (parsed === undefined || key in params) return undefined;
		[params[key], rest] = parsed;
	}
	return params;
}

/** A header line holding a control character other than tab: Go's textproto refuses the whole form. */
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;

function partHeaders(text) {
	const headers = {};
	for (const line of text.split('\r\n')) {
		const colon = line.indexOf(':');
		if (colon <= 0 || CONTROL.test(line)) throw new MultipartError(`malformed MIME header line: ${JSON.stringify(line.slice(0, 80))}`);
		headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
	}
	return headers;
}

/**
 * Parses `body` (a Buffer) sent with `contentType`: `{ fields: {name: [text]}, files: {name: [{fileName, contentType, bytes}]} }`.
 * Throws a MultipartError for a body that is no well-formed form.
 */
function parseMultipart(contentType, body) {
	const boundary = boundaryOf(contentType);
	const delimiter = Buffer.from(`--${boundary}`);
	const form = { fields: {}, files: {} };
	// The first delimiter may follow a preamble; every later one follows a CRLF.
	let at = body.indexOf(delimiter);
	if (at === -1) throw new MultipartError('multipart: NextPart: EOF');
	for (;;) {
		at += delimiter.length;
		if (body.subarray(at, at + 2).toString() === '--') return form; // the closing delimiter (an epilogue may follow)
		if (body.subarray(at, at + 2).toString() !== '\r\n') throw new MultipartError(`multipart: expecting a new Part; got line ${JSON.stringify(body.subarray(at, at + 40).toString('latin1'))}`);
		at += 2;
		const headersEnd = body.indexOf('\r\n\r\n', at);
		if (headersEnd === -1) throw new MultipartError('multipart: NextPart: EOF');
		const headers = partHeaders(body.subarray(at, headersEnd).toString('utf8'));
		const contentStart = headersEnd + 4;
		const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), contentStart);
		if (next === -1) throw new MultipartError('multipart: NextPart: EOF');
		addPart(form, headers, body.subarray(contentStart, next));
		at = next + 2;
	}
}

function addPart(form, headers, content) {
	const disposition = headers['content-disposition'] ?? '';
	if (!/^form-data\s*(;|$)/i.test(disposition)) throw new MultipartError(`a part without Content-Disposition: form-data (${disposition.slice(0, 60) || 'none'})`);
	const { name, filename } = headerParams(disposition) ?? {};
	if (!name) return; // Go's ReadForm skips a part without a name (or whose Content-Disposition it cannot read)
	// Go reads a part with an empty file name as a text field.
	if (filename === undefined || filename === '') {
		(form.fields[name] ??= []).push(content.toString('utf8'));
		return;
	}
	(form.files[name] ??= []).push({ fileName: filename, contentType: headers['content-type'] ?? 'application/octet-stream', bytes: Buffer.from(content) });
}

module.exports = { parseMultipart, MultipartError };
