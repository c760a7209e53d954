'use strict';
// Real media bytes: PNGs are encoded here with zlib; the JPEG, WebP and MP4 are small genuine
// files made once with ffmpeg and committed under test/fixtures (see README.md).
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');
const { Readable, pipeline } = require('node:stream');

const FIXTURES = path.join(__dirname, '..', 'fixtures');
const readFixture = (name) => fs.readFileSync(path.join(FIXTURES, name));

// ---------- images ----------

const IMAGE_SIZE = 64;
// One clearly different colour per image index, so tests can tell the images of one answer apart.
const PALETTE = [
	[220, 60, 60], [60, 170, 80], [50, 100, 220], [240, 190, 40], [150, 70, 200],
	[30, 180, 190], [240, 120, 30], [120, 120, 120], [200, 80, 150], [90, 60, 30],
];

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
	let c = n;
	for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
	return c >>> 0;
});

function crc32(buffer) {
	let crc = 0xffffffff;
	for (const byte of buffer) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
	return (crc ^ 0xffffffff) >>> 0;
}

function pngChunk(type, data) {
	const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
	const length = Buffer.alloc(4);
	length.writeUInt32BE(data.length);
	const crc = Buffer.alloc(4);
	crc.writeUInt32BE(crc32(body));
	return Buffer.concat([length, body, crc]);
}

/** A 64x64 RGBA PNG in the index's colour, with a lighter diagonal band. */
function encodePng(index) {
	const [r, g, b] = PALETTE[index % PALETTE.length];
	const rowLength = 1 + IMAGE_SIZE * 4; // filter byte + RGBA pixels
	const raw = Buffer.alloc(rowLength * IMAGE_SIZE);
	for (let y = 0; y < IMAGE_SIZE; y++) {
		for (let x = 0; x < IMAGE_SIZE; x++) {
			const light = Math.abs(x - y) < 6 ? 60 : 0;
			const at = y * rowLength + 1 + x * 4;
			raw[at] = Math.min(255, r + light);
			raw[at + 1] = Math.min(255, g + light);
			raw[at + 2] = Math.min(255, b + light);
			raw[at + 3] = 255;
		}
	}
	const header = Buffer.alloc(13);
	header.writeUInt32BE(IMAGE_SIZE, 0);
	header.writeUInt32BE(IMAGE_SIZE, 4);
	header.set([8, 6, 0, 0, 0], 8); // 8-bit depth, RGBA, deflate, no filter set, no interlace
	return Buffer.concat([
		Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
		pngChunk('IHDR', header),
		pngChunk('IDAT', zlib.deflateSync(raw)),
		pngChunk('IEND', Buffer.alloc(0)),
	]);
}

const IMAGE_FORMATS = {
	png: { ext: 'png', mime: 'image/png' },
	jpeg: { ext: 'jpg', mime: 'image/jpeg', fixture: 'sample-image.jpg' },
	webp: { ext: 'webp', mime: 'image/webp', fixture: 'sample-image.webp' },
};

const imageCache = new Map();

/** The bytes of image `index` in `format` (png | jpeg | webp). */
function imageBytes(format, index) {
	const key = format === 'png' ? `png:${index % PALETTE.length}` : format;
	if (!imageCache.has(key)) {
		imageCache.set(key, format === 'png' ? encodePng(index) : readFixture(IMAGE_FORMATS[format].fixture));
	}
	return imageCache.get(key);
}

// ---------- video ----------

const MIB = 1024 * 1024;
const PAD_CHUNK = Buffer.alloc(256 * 1024);
let sampleVideo = null;
const videoFixture = () => (sampleVideo ??= readFixture('sample-video.mp4'));

/** Byte length of the served MP4: the fixture, or about `bigMb` MiB when asked for. */
function videoLength(bigMb) {
	const base = videoFixture().length;
	const wanted = bigMb * MIB;
	return wanted - base >= 16 ? wanted : base;
}

/**
 * An ISO BMFF `free` box header for a box of `size` bytes. Players skip `free` boxes, so the
 * padded file is still a valid MP4. Sizes of 4 GiB and more need the 64-bit form.
 */
function freeBoxHeader(size) {
	if (size < 2 ** 32) {
		const header = Buffer.alloc(8);
		header.writeUInt32BE(size, 0);
		header.write('free', 4, 'ascii');
		return header;
	}
	const header = Buffer.alloc(16);
	header.writeUInt32BE(1, 0);
	header.write('free', 4, 'ascii');
	header.writeBigUInt64BE(BigInt(size), 8);
	return header;
}

/** Yields the MP4 chunk by chunk, so even a 512 MiB answer never sits whole in memory. */
function* videoChunks(total) {
	const fixture = videoFixture();
	yield fixture;
	const padSize = total - fixture.length;
	if (padSize <= 0) return;
	const header = freeBoxHeader(padSize);
	yield header;
	let left = padSize - header.length;
	while (left > 0) {
		const n = Math.min(left, PAD_CHUNK.length);
		yield n === PAD_CHUNK.length ? PAD_CHUNK : PAD_CHUNK.subarray(0, n);
		left -= n;
	}
}

/** Streams the MP4 with its exact content-length, respecting back-pressure. */
function sendVideo(res, bigMb) {
	const total = videoLength(bigMb);
	res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': total, 'accept-ranges': 'none' });
	if (res.req.method === 'HEAD') return res.end();
	// pipeline() destroys both sides if the client goes away; nothing to do about that here.
	pipeline(Readable.from(videoChunks(total), { objectMode: false }), res, () => {});
}

module.exports = { IMAGE_FORMATS, imageBytes, sendVideo };
