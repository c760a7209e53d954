'use strict';
// Bytes the hostile gateway serves as files: small real PNGs, a small MP4, and big MP4s
// generated on the fly (never held in memory).
const fs = require('node:fs');
const path = require('node:path');

const { imageBytes } = require('../gateway/media');

const MIB = 1024 * 1024;

// ---------- PNG ----------

/** A valid PNG, one colour per index (so images of one answer differ): the loopback gateway's own. */
function pngBytes(index = 0) {
	return imageBytes('png', Math.abs(index));
}

// ---------- MP4 ----------

/** A real `ftyp` box: size 24, brand isom, minor 0x200, compatible isom + mp41. */
const FTYP = Buffer.from([
	0x00, 0x00, 0x00, 0x18, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d, 0x00, 0x00, 0x02, 0x00,
	0x69, 0x73, 0x6f, 0x6d, 0x6d, 0x70, 0x34, 0x31,
]);

/** The header of an `mdat` box of `size` bytes (64-bit form from 4 GiB on). */
function mdatHeader(size) {
	if (size < 2 ** 32) {
		const header = Buffer.alloc(8);
		header.writeUInt32BE(size, 0);
		header.write('mdat', 4, 'ascii');
		return header;
	}
	const header = Buffer.alloc(16);
	header.writeUInt32BE(1, 0);
	header.write('mdat', 4, 'ascii');
	header.writeBigUInt64BE(BigInt(size), 8);
	return header;
}

let smallVideo = null;

/**
 * The normal video: the repository's real sample MP4 when it is there, else a 64 KiB
 * ftyp + mdat file.
 */
function smallMp4() {
	if (smallVideo) return smallVideo;
	try {
		smallVideo = fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'sample-video.mp4'));
	} catch {
		const total = 64 * 1024;
		const body = Buffer.alloc(total);
		FTYP.copy(body, 0);
		mdatHeader(total - FTYP.length).copy(body, FTYP.length);
		smallVideo = body;
	}
	return smallVideo;
}

const CHUNK = 256 * 1024;
const ZEROS = Buffer.alloc(CHUNK);

/**
 * Streams an MP4 of exactly `mib` MiB: the ftyp box, an mdat box header covering the rest,
 * then zeros. Writes 256 KiB at a time and waits for 'drain' (back-pressure); stops when the
 * response closes.
 */
function streamBigMp4(res, mib) {
	const total = mib * MIB;
	res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': total, 'accept-ranges': 'none' });
	if (res.req.method === 'HEAD') {
		res.end();
		return;
	}
	const mdat = mdatHeader(total - FTYP.length);
	const first = Buffer.alloc(Math.min(total, CHUNK));
	FTYP.copy(first, 0);
	mdat.copy(first, FTYP.length);
	let sent = 0;
	const pump = () => {
		while (sent < total) {
			if (res.destroyed || res.writableEnded) return;
			const n = Math.min(CHUNK, total - sent);
			const chunk = sent === 0 ? first.subarray(0, n) : ZEROS.subarray(0, n);
			sent += n;
			if (sent >= total) {
				res.end(chunk);
				return;
			}
			if (!res.write(chunk)) {
				res.once('drain', pump);
				return;
			}
		}
	};
	pump();
}

module.exports = { MIB, FTYP, pngBytes, smallMp4, streamBigMp4 };
