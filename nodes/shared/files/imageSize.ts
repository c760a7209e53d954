/**
 * The width and height of an image, read from its header bytes: PNG, JPEG, GIF and WebP (lossy,
 * lossless and extended), typed by sniffFileType. Pure: no decoding. Used to check the native messages
 * format's pixel limits before an image is sent.
 */
import { sniffFileType } from './binary';

/** Bytes [start, end) as Latin-1 text, read here so that measuring an image calls no other file. */
const ascii = (bytes: Buffer, start: number, end: number) => bytes.subarray(start, end).toString('latin1');

export interface ImageDimensions {
	width: number;
	height: number;
}

function pngDimensions(bytes: Buffer): ImageDimensions | undefined {
	// Signature (8), then the IHDR chunk: length (4), "IHDR" (4), width (4), height (4).
	if (bytes.length < 24 || ascii(bytes, 12, 16) !== 'IHDR') return undefined;
	return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

function gifDimensions(bytes: Buffer): ImageDimensions | undefined {
	// "GIF87a"/"GIF89a", then the logical screen width and height, little-endian.
	if (bytes.length < 10) return undefined;
	return { width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) };
}

function webpDimensions(bytes: Buffer): ImageDimensions | undefined {
	if (bytes.length < 30) return undefined;
	switch (ascii(bytes, 12, 16)) {
		case 'VP8 ':
			// Lossy: a 3-byte frame tag and the start code 9d 01 2a, then 14-bit width and height.
			if (bytes[23] !== 0x9d || bytes[24] !== 0x01 || bytes[25] !== 0x2a) return undefined;
			return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff };
		case 'VP8L': {
			// Lossless: the signature 0x2f, then width-1 and height-1 in 14 bits each.
			if (bytes[20] !== 0x2f) return undefined;
			const bits = bytes.readUInt32LE(21);
			return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
		}
		case 'VP8X':
			// Extended: flags (4), then canvas width-1 and height-1 in 24 bits each.
			return { width: bytes.readUIntLE(24, 3) + 1, height: bytes.readUIntLE(27, 3) + 1 };
		default:
			return undefined;
	}
}

/** Start-of-frame markers (baseline, progressive, lossless …): C0–CF except C4 (DHT), C8 (JPG) and CC (DAC). */
const isStartOfFrame = (marker: number) => marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
/** Markers that stand alone, without a length: TEM, RST0–7, SOI. */
const standsAlone = (marker: number) => marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8);

function jpegDimensions(bytes: Buffer): ImageDimensions | undefined {
	let at = 2;
	while (at + 3 < bytes.length) {
		if (bytes[at] !== 0xff) return undefined;
		const marker = bytes[at + 1];
		if (marker === 0xff) {
			at += 1; // a fill byte
			continue;
		}
		if (standsAlone(marker)) {
			at += 2;
			continue;
		}
		// The image data begins (SOS) or ends (EOI) before any frame header: no size to read.
		if (marker === 0xda || marker === 0xd9) return undefined;
		if (isStartOfFrame(marker)) {
			if (at + 9 > bytes.length) return undefined;
			return { width: bytes.readUInt16BE(at + 7), height: bytes.readUInt16BE(at + 5) };
		}
		at += 2 + bytes.readUInt16BE(at + 2);
	}
	return undefined;
}

/**
 * Width and height in pixels; undefined when the bytes are none of these formats or the header is
 * cut short. `mimeType`: the type already read from the same bytes, when the caller has it.
 */
export function imageDimensions(bytes: Buffer, mimeType = sniffFileType(bytes)?.mimeType): ImageDimensions | undefined {
	switch (mimeType) {
		case 'image/png':
			return pngDimensions(bytes);
		case 'image/jpeg':
			return jpegDimensions(bytes);
		case 'image/gif':
			return gifDimensions(bytes);
		case 'image/webp':
			return webpDimensions(bytes);
		default:
			return undefined;
	}
}
