/**
 * Files for the attachment tests: real PNG and PDF bytes, image headers of any size, input items
 * with binary data, and n8n's binary helpers for the test execution context (`getBinaryDataBuffer`,
 * `assertBinaryData`, `getBinaryMetadata`), reading the inline Base64 as n8n's default mode does.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import type { IBinaryData, IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

export const FIXTURES = path.join(__dirname, '..', 'fixtures');
export const sampleJpeg = () => fs.readFileSync(path.join(FIXTURES, 'sample-image.jpg'));
export const sampleWebp = () => fs.readFileSync(path.join(FIXTURES, 'sample-image.webp'));
export const sampleMp4 = () => fs.readFileSync(path.join(FIXTURES, 'sample-video.mp4'));

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
	let c = n;
	for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
	return c >>> 0;
});

function crc32(buffer: Buffer): number {
	let crc = 0xffffffff;
	for (const byte of buffer) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
	return (crc ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
	const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
	const length = Buffer.alloc(4);
	length.writeUInt32BE(data.length);
	const crc = Buffer.alloc(4);
	crc.writeUInt32BE(crc32(body));
	return Buffer.concat([length, body, crc]);
}

/** A real, decodable RGB PNG of `width`×`height` in one colour. */
export function pngBytes(width = 8, height = 8, colour: [number, number, number] = [200, 40, 40]): Buffer {
	const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => colour).flat())]);
	const header = Buffer.alloc(13);
	header.writeUInt32BE(width, 0);
	header.writeUInt32BE(height, 4);
	header.set([8, 2, 0, 0, 0], 8);
	return Buffer.concat([
		Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
		pngChunk('IHDR', header),
		pngChunk('IDAT', zlib.deflateSync(Buffer.concat(Array.from({ length: height }, () => row)))),
		pngChunk('IEND', Buffer.alloc(0)),
	]);
}

/** Only a PNG signature and header claiming `width`×`height` (enough for the checks before sending), padded to `size` bytes. */
export function pngHeader(width: number, height: number, size = 64): Buffer {
	const header = Buffer.alloc(13);
	header.writeUInt32BE(width, 0);
	header.writeUInt32BE(height, 4);
	header.set([8, 2, 0, 0, 0], 8);
	const head = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk('IHDR', header)]);
	return Buffer.concat([head, Buffer.alloc(Math.max(0, size - head.length))]);
}

/** A small valid one-page PDF that shows `lines` of text. */
export function pdfBytes(lines: string[] = ['Invoice INV-2026-0042', 'Total: 1234.50 EUR']): Buffer {
	const escape = (text: string) => text.replace(/[\\()]/g, (c) => `\\${c}`);
	const stream = `BT /F1 14 Tf 72 720 Td 18 TL ${lines.map((line) => `(${escape(line)}) '`).join(' ')} ET`;
	const objects = [
		'<< /Type /Catalog /Pages 2 0 R >>',
		'<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
		'<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
		`<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
		'<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
	];
	let body = '%PDF-1.4\n';
	const offsets: number[] = [];
	objects.forEach((object, i) => {
		offsets.push(body.length);
		body += `${i + 1} 0 obj\n${object}\nendobj\n`;
	});
	const xref = body.length;
	body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
	body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
	return Buffer.from(body, 'latin1');
}

export const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

export interface FileSpec {
	bytes: Buffer;
	fileName?: string;
	/** What n8n was told (not what the bytes are). */
	mimeType?: string;
}

/** An input item with these binary fields, kept inline as n8n's default binary mode keeps them. */
export function binaryItem(files: Record<string, FileSpec>, json: IDataObject = {}): INodeExecutionData {
	const binary: Record<string, IBinaryData> = {};
	for (const [property, file] of Object.entries(files)) {
		binary[property] = {
			data: file.bytes.toString('base64'),
			mimeType: file.mimeType ?? 'application/octet-stream',
			fileName: file.fileName,
			bytes: file.bytes.length,
		};
	}
	return { json, binary };
}

/** Which binary fields each read asked for, in order: `reads` counts them. */
export interface BinaryReads {
	reads: Array<{ itemIndex: number; property: string }>;
}

/** Adds n8n's binary helpers to a test context: they read the items' inline Base64, as n8n's default mode does. */
export function withBinaryHelpers(ctx: IExecuteFunctions): BinaryReads {
	const log: BinaryReads = { reads: [] };
	const binaryOf = (itemIndex: number, property: string) => {
		const binary = ctx.getInputData()[itemIndex]?.binary?.[property];
		// n8n's own words
		if (!binary) throw new Error(`This operation expects the node's input data to contain a binary file '${property}', but none was found [item ${itemIndex}]`);
		return binary;
	};
	Object.assign(ctx.helpers, {
		assertBinaryData: (itemIndex: number, property: string) => binaryOf(itemIndex, property),
		getBinaryDataBuffer: async (itemIndex: number, property: string) => {
			log.reads.push({ itemIndex, property });
			return Buffer.from(binaryOf(itemIndex, property).data, 'base64');
		},
		getBinaryMetadata: async () => await Promise.reject(new Error('no binary data store in the test context')),
	});
	return log;
}

/** A PNG first frame of `size` bytes written to a temporary file for the test file, removed after all its tests. */
export function frameOnDisk(size: number): string {
	const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'frame-'));
	const frame = path.join(directory, 'frame.png');
	fs.writeFileSync(frame, pngHeader(64, 64, size));
	afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));
	return frame;
}
