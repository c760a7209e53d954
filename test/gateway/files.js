'use strict';
// The file host: a second origin that serves generated images and videos, the way relays hand
// out links on a CDN or object store. Like a signed object-store URL, it needs no key and
// refuses one: a request carrying an Authorization header gets 400, so a client that leaks the
// gateway key to another host fails loudly (the request log also records the header).
const { sendText, sendJson } = require('./http');
const { IMAGE_FORMATS, imageBytes, sendVideo } = require('./media');
const { randomHex } = require('./util');

function objectStoreError(ctx, status, code, message) {
	const body =
		'<?xml version="1.0" encoding="UTF-8"?>\n' +
		`<Error><Code>${code}</Code><Message>${message}</Message>` +
		`<Resource>${ctx.path}</Resource><RequestId>${randomHex(8).toUpperCase()}</RequestId></Error>\n`;
	sendText(ctx.res, status, 'application/xml', body);
}

/** What an expired signed link answers: 403 with a small XML body. */
const sendExpired = (ctx) => objectStoreError(ctx, 403, 'AccessDenied', 'Request has expired');

const sendNoSuchKey = (ctx) => objectStoreError(ctx, 404, 'NoSuchKey', 'The specified key does not exist.');

/** Serves a succeeded video task's MP4 (shared by the file host and the API's /content route). */
function deliverVideo(ctx, task) {
	if (!task || task.status !== 'SUCCESS') return sendNoSuchKey(ctx);
	if (task.flags.expired) return sendExpired(ctx);
	sendVideo(ctx.res, task.flags.bigMb);
}

function deliverImage(ctx, image, ext) {
	if (!image || IMAGE_FORMATS[image.format].ext !== ext) return sendNoSuchKey(ctx);
	if (image.expired) return sendExpired(ctx);
	const bytes = imageBytes(image.format, image.index);
	ctx.res.writeHead(200, { 'content-type': IMAGE_FORMATS[image.format].mime, 'content-length': bytes.length });
	ctx.res.end(ctx.method === 'HEAD' ? undefined : bytes);
}

const IMAGE_PATH = /^\/files\/images\/([\w-]+)\.(png|jpg|webp)$/;
const VIDEO_PATH = /^\/files\/videos\/([\w-]+)\.mp4$/;

function handleFileRequest(ctx) {
	if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
		return objectStoreError(ctx, 405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.');
	}
	if (ctx.req.headers.authorization !== undefined) {
		return objectStoreError(ctx, 400, 'InvalidArgument', 'Only one auth mechanism allowed; the link is already signed, do not send an Authorization header');
	}
	let m = IMAGE_PATH.exec(ctx.path);
	if (m) return deliverImage(ctx, ctx.gw.images.get(m[1]), m[2]);
	m = VIDEO_PATH.exec(ctx.path);
	if (m) return deliverVideo(ctx, ctx.gw.tasks.get(m[1]));
	if (ctx.path === '/health') return sendJson(ctx.res, 200, { ok: true });
	return sendNoSuchKey(ctx);
}

module.exports = { handleFileRequest, deliverVideo };
