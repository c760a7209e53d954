/**
 * The memory a large b64_json answer costs (issue 19: "large b64_json is decoded without holding
 * the whole answer twice"). Measured in a child process of its own (test/helpers/imageMemoryChild.js,
 * with --expose-gc), against a loopback gateway in this process that answers 4 images of 25 MB:
 * 100 MB of images in 133 MB of JSON. Reading the answer whole, as text, then parsing it, then
 * decoding it rose 638 MB above the start (with the old 64 MiB limit raised so that it kept the
 * answer at all: almost five times the answer); decoding each image as it streams in rises about
 * 140 MB, the images themselves and one image's pieces while it is put together.
 */
import { spawn } from 'child_process';
import * as crypto from 'crypto';
import * as http from 'http';
import type { AddressInfo } from 'net';
import * as path from 'path';

const MiB = 1024 * 1024;
const IMAGES = 4;
const IMAGE_BYTES = 25 * MiB;

/** A file of `size` bytes that starts as a PNG does (the node types it from its first bytes). */
function imageOf(size: number, seed: number): Buffer {
	const bytes = Buffer.alloc(size, seed);
	bytes.write('\x89PNG\r\n\x1a\n', 'latin1');
	return bytes;
}

interface ChildResult {
	startRss: number;
	peakRss: number;
	items: number;
	stored: Array<{ size: number; sha256: string }>;
}

async function runChild(baseUrl: string): Promise<ChildResult> {
	const helpers = path.join(__dirname, '../helpers');
	const child = spawn(process.execPath, ['--expose-gc', '-r', path.join(helpers, 'registerTs.js'), path.join(helpers, 'imageMemoryChild.js'), baseUrl, String(IMAGES)], {
		cwd: path.join(__dirname, '../..'),
	});
	let out = '';
	let err = '';
	child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
	child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
	const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
	if (code !== 0) throw new Error(`the child process failed (${code}): ${err}`);
	return JSON.parse(out) as ChildResult;
}

describe('memory of a large b64_json answer', () => {
	const images = Array.from({ length: IMAGES }, (_, index) => imageOf(IMAGE_BYTES, index + 1));
	let answer: Buffer | undefined = Buffer.concat([
		Buffer.from('{"created":1,"data":['),
		...images.flatMap((image, index) => [Buffer.from(`${index ? ',' : ''}{"b64_json":"`), Buffer.from(image.toString('base64')), Buffer.from('","revised_prompt":"r"}')]),
		Buffer.from(']}'),
	]);
	const answerBytes = answer.length;
	let server: http.Server;
	let baseUrl: string;

	beforeAll(async () => {
		server = http.createServer((req, res) => {
			req.resume();
			req.on('end', () => {
				res.writeHead(200, { 'content-type': 'application/json', 'content-length': answerBytes });
				res.end(answer);
			});
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	});
	afterAll(async () => {
		answer = undefined;
		server.closeAllConnections();
		await new Promise((resolve) => server.close(resolve));
	});

	// The measure is Linux's (/proc/self/status and clear_refs).
	const onLinux = process.platform === 'linux' ? it : it.skip;

	onLinux('decodes 4 images of 25 MB holding well under one and a half times the answer, never the answer as text', async () => {
		const result = await runChild(baseUrl);
		expect(result.items).toBe(IMAGES);
		expect(result.stored).toEqual(images.map((image) => ({ size: image.length, sha256: crypto.createHash('sha256').update(image).digest('hex') })));
		const growth = result.peakRss - result.startRss;
		// About the images themselves (100 MB) and one image's pieces while it is put together.
		expect(growth).toBeLessThan(1.5 * answerBytes);
		expect(growth).toBeGreaterThan(IMAGES * IMAGE_BYTES * 0.5);
	}, 120_000);
});
