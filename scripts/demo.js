#!/usr/bin/env node
// `npm run demo`: runs every example workflow (examples/*.json) in a real headless n8n with this
// package loaded, prints what each of our nodes produced, and writes the files (images, videos,
// chat replies) into demo-output/<example>/.
//
// Gateway: the bundled loopback one (test/gateway, offline) unless GATEWAY_BASE_URL and
// GATEWAY_API_KEY are set (GATEWAY_GROUP_MULTIPLIER optional). DEMO_ONLY=image,chat runs only the
// examples whose file, id or name contains one of the parts. Exits 1 when a workflow failed; an
// example refused because it needs a newer n8n than the one run (Gateway Chat Model on n8n 1.x) is
// expected there, not a failure.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const { ensureRuntime } = require('./n8n/runtime');
const { runWorkflows } = require('./n8n/headless');
const { REPO_ROOT, EXAMPLE_CREDENTIAL, collectWorkflows, gatewayCredential, startGatewayTarget } = require('./n8n/workflowSet');

const OUT_DIR = path.join(REPO_ROOT, 'demo-output');
// Kept after the run (git-ignored): n8n.log and the database, for when something fails.
const USER_FOLDER = path.join(REPO_ROOT, '.n8n-demo', 'user');
const PACKAGE_PREFIX = 'n8n-nodes-model-gateway.';

const log = (msg) => process.stderr.write(`[demo] ${msg}\n`);
const rel = (file) => path.relative(process.cwd(), file) || '.';
const slug = (text) =>
	String(text)
		.toLowerCase()
		.replace(/[^a-z0-9.]+/g, '-')
		.replace(/^-+|-+$/g, '') || 'file';

function formatBytes(n) {
	if (n < 1024) return `${n} B`;
	if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
	return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function excerpt(text, max = 110) {
	const flat = String(text ?? '')
		.replace(/\s+/g, ' ')
		.trim();
	return JSON.stringify(flat.length > max ? `${flat.slice(0, max - 1)}…` : flat);
}

// Width × height from the image header (PNG, JPEG, WebP, GIF); undefined for anything else.
function imageSize(bytes) {
	const ascii = (a, b) => bytes.subarray(a, b).toString('latin1');
	if (bytes.length >= 24 && ascii(1, 4) === 'PNG') return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
	if (bytes.length >= 10 && /^GIF8[79]a$/.test(ascii(0, 6))) return [bytes.readUInt16LE(6), bytes.readUInt16LE(8)];
	if (bytes.length >= 30 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') {
		const chunk = ascii(12, 16);
		if (chunk === 'VP8 ') return [bytes.readUInt16LE(26) & 0x3fff, bytes.readUInt16LE(28) & 0x3fff];
		if (chunk === 'VP8L') {
			const bits = bytes.readUInt32LE(21);
			return [(bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1];
		}
		if (chunk === 'VP8X') return [bytes.readUIntLE(24, 3) + 1, bytes.readUIntLE(27, 3) + 1];
	}
	if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8) {
		// JPEG: walk the segments to the first start-of-frame marker (C0–CF, except C4, C8, CC).
		for (let at = 2; at + 9 < bytes.length; ) {
			if (bytes[at] !== 0xff) return undefined;
			const marker = bytes[at + 1];
			if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
				return [bytes.readUInt16BE(at + 7), bytes.readUInt16BE(at + 5)];
			}
			at += 2 + bytes.readUInt16BE(at + 2);
		}
	}
	return undefined;
}

/** Writes files for one workflow into demo-output/<example file name>/, each name used once. */
function outputFolder(exampleFile) {
	const dir = path.join(OUT_DIR, path.basename(exampleFile, '.json'));
	fs.rmSync(dir, { recursive: true, force: true });
	const used = new Set();
	return {
		dir,
		save(name, bytes) {
			let file = slug(name);
			for (let n = 2; used.has(file); n++) file = slug(name).replace(/(\.[a-z0-9]+)?$/, `-${n}$1`);
			used.add(file);
			fs.mkdirSync(dir, { recursive: true });
			const target = path.join(dir, file);
			fs.writeFileSync(target, bytes);
			return rel(target);
		},
	};
}

function binaryBytes(binary) {
	if (binary.data !== undefined) return Buffer.from(binary.data, 'base64');
	if (binary.storagePath) return fs.readFileSync(binary.storagePath); // above the hook's inline limit
	throw new Error(`binary ${binary.fileName || ''} carries no data${binary.inlineError ? `: ${binary.inlineError}` : ''}`);
}

// Saves every binary of an item; returns one "mime size → file" phrase per file.
function saveBinaries(item, nodeName, out, describe = () => '') {
	return Object.values(item.binary || {}).map((binary) => {
		const bytes = binaryBytes(binary);
		const file = out.save(`${nodeName}-${binary.fileName || `file.${binary.fileExtension || 'bin'}`}`, bytes);
		return `${binary.mimeType}${describe(bytes)} ${formatBytes(bytes.length)}, saved ${file}`;
	});
}

const errorItems = (items) => items.filter((item) => typeof item.json?.error === 'string');
const okItems = (items) => items.filter((item) => typeof item.json?.error !== 'string');
const refusedLines = (items, what) =>
	errorItems(items).map((item) => `${what} refused (Continue On Fail): ${excerpt(item.json.error, 160)}`);
const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

function tokens(usage) {
	if (!usage) return '';
	const input = usage.prompt_tokens ?? usage.input_tokens;
	const output = usage.completion_tokens ?? usage.output_tokens;
	return input === undefined ? '' : `, ${input} tokens in / ${output} out`;
}

// One summariser per node of this package: (node run, node name, node parameters, output folder) -> lines.
const SUMMARISERS = {
	gatewayChatModel(run) {
		const calls = (run.runs ?? [run]).map((r) => r.connectionOutputs?.ai_languageModel?.[0]?.[0]?.json ?? {});
		const used = calls.reduce((sum, call) => sum + (call.tokenUsage?.totalTokens ?? 0), 0);
		return [`${plural(calls.length, 'model call')} for the agent, ${used} tokens (the gateway's counts)`];
	},
	gatewayImageGenerate(run, name, params, out) {
		const images = okItems(run.items);
		const cost = images.reduce((sum, item) => sum + (Number(item.json.estimatedCostUsd) || 0), 0);
		const lines = [`${plural(images.length, params.operation === 'edit' ? 'edited image' : 'image')} from ${images[0]?.json.model ?? 'the gateway'}, estimatedCostUsd ${Math.round(cost * 1000) / 1000}`];
		for (const item of images) {
			const files = saveBinaries(item, name, out, (bytes) => {
				const size = imageSize(bytes);
				return size ? ` ${size[0]}×${size[1]}` : '';
			});
			lines.push(`image ${item.json.index}: ${files.join('; ') || `not downloaded, link ${item.json.url}`}`);
		}
		return [...lines, ...refusedLines(run.items, 'item')];
	},

	gatewayVideoGenerate(run, name, params, out) {
		const operation = params.operation || 'generate';
		const lines = [];
		if (operation === 'getStatus') {
			// Checked in a loop (Wait → Get Status → If): every check, in order.
			const checks = (run.runs || [run]).flatMap((r) => okItems(r.items));
			const trail = checks.map((item) => `${item.json.status}${item.json.progress ? ` ${item.json.progress}` : ''}`);
			if (checks.length) lines.push(`task ${checks[0].json.task_id}: ${trail.join(' → ')} (${plural(checks.length, 'check')})`);
		} else {
			for (const item of okItems(run.items)) {
				const files = saveBinaries(item, name, out);
				const what = operation === 'submit' ? 'submitted' : `${item.json.status}${item.json.progress ? ` ${item.json.progress}` : ''}`;
				lines.push(`task ${item.json.task_id} ${what}${files.length ? `: ${files.join('; ')}` : ''}`);
			}
		}
		return [...lines, ...refusedLines(run.items, 'item')];
	},

	gatewayChat(run, name, _params, out) {
		return chatLines(run, name, out);
	},

	gatewayMessages(run, name, _params, out) {
		return chatLines(run, name, out);
	},

	gatewayAccount(run) {
		const balances = okItems(run.items).map(({ json: b }) => `${b.unlimited ? 'unlimited' : `${b.available} ${b.unit} available`} (used ${b.used}, granted ${b.granted}; from ${b.source}${b.expiresAt ? `, expires ${b.expiresAt}` : ''})`);
		return [...balances.map((line) => `balance: ${line}`), ...refusedLines(run.items, 'item')];
	},

	gatewayPlantCreate(run) {
		const created = okItems(run.items).map((item) => `${item.json.id} ${item.json.name}${item.json.tag ? ` [${item.json.tag}]` : ''}`);
		const lines = [`${plural(created.length, 'plant')} created: ${created.join(', ') || 'none'}`];
		return [...lines, ...refusedLines(run.items, 'row')];
	},
};

function chatLines(run, name, out) {
	const lines = [];
	okItems(run.items).forEach((item, i) => {
		const { text, thinking, reasoning, model, finishReason, stopReason, usage } = item.json;
		const file = out.save(`${name}-${i + 1}.txt`, `${text ?? ''}\n`);
		lines.push(`${model}, ${finishReason ?? stopReason}${tokens(usage)}: ${excerpt(text)} (saved ${file})`);
		const thought = thinking ?? reasoning;
		if (thought) lines.push(`thinking: ${excerpt(thought, 90)} (saved ${out.save(`${name}-${i + 1}.thinking.txt`, `${thought}\n`)})`);
	});
	return [...lines, ...refusedLines(run.items, 'item')];
}

/** "2.16.0" -> [2, 16, 0] */
const versionParts = (version) => String(version).split('.').map((part) => parseInt(part, 10) || 0);
const olderThan = (version, [major, minor]) => {
	const [a, b] = versionParts(version);
	return a < major || (a === major && b < minor);
};

/**
 * 'ok', 'expected' or 'failed'. Expected: a node refused because it needs a newer n8n than this
 * runtime (Gateway Chat Model on n8n 1.x: "... needs n8n 2.16 or newer"), as it is meant to.
 */
function outcome(result, runtimeVersion) {
	if (result.status === 'success') return 'ok';
	const needs = /needs n8n (\d+)\.(\d+) or newer/.exec(`${result.error?.description ?? ''} ${result.error?.message ?? ''}`);
	return needs && olderThan(runtimeVersion, [Number(needs[1]), Number(needs[2])]) ? 'expected' : 'failed';
}

const LABEL = { ok: 'ok    ', expected: 'refused (expected on this n8n)', failed: 'FAILED' };

/** Lines describing one workflow's outcome; writes its files. */
function summarise(result, workflow, exampleFile, runtimeVersion) {
	const out = outputFolder(exampleFile);
	const seconds = result.durationMs === undefined ? '' : ` in ${(result.durationMs / 1000).toFixed(1)} s`;
	const lines = [`${LABEL[outcome(result, runtimeVersion)]} ${result.name} — ${exampleFile}${seconds}`];
	const byName = Object.fromEntries(workflow.nodes.map((node) => [node.name, node]));
	const ran = Object.entries(result.nodes).sort(([, a], [, b]) => a.startTime - b.startTime);
	for (const [name, run] of ran) {
		const node = byName[name];
		const summariser = node?.type.startsWith(PACKAGE_PREFIX) && SUMMARISERS[node.type.slice(PACKAGE_PREFIX.length)];
		if (!summariser || run.error) continue; // a node's error is the workflow's, printed below
		let nodeLines;
		try {
			nodeLines = summariser(run, name, node.parameters || {}, out);
		} catch (error) {
			nodeLines = [`could not summarise the output: ${error.message}`];
		}
		const [first = 'no output', ...rest] = nodeLines;
		lines.push(`         ${name} → ${first}`, ...rest.map((line) => `           ${line}`));
	}
	if (result.error) {
		const { message, description, node } = result.error;
		lines.push(`         error${node ? ` in ${node}` : ''}: ${message}`);
		if (description) lines.push(`           ${description}`);
	}
	return lines;
}

/**
 * The demo's time, once: installing n8n (a first run) against running the examples.
 * @param {number} totalMs
 * @param {{ms: number} | null} install  from ensureRuntime(): null when n8n was already there
 * @param {string} version
 */
function timeSpent(totalMs, install, version) {
	const s = (ms) => `${Math.round(ms / 1000)} s`;
	if (!install) return `${s(totalMs)} in all; n8n ${version} was already installed`;
	return `${s(totalMs)} in all: installing n8n ${version} ${s(install.ms)} (first run only), running the examples ${s(totalMs - install.ms)}`;
}

async function main() {
	const started = Date.now();
	const { files, workflows } = collectWorkflows({ dirs: ['examples'], only: process.env.DEMO_ONLY || '' });
	const fileOf = Object.fromEntries(Object.entries(files).map(([file, id]) => [id, file]));
	log(`${plural(workflows.length, 'example workflow')}: ${Object.keys(files).join(', ')}`);

	// Checked first: a mistake in the gateway settings should not wait for the n8n install.
	const target = await startGatewayTarget();
	log(`gateway: ${target.label}`);
	const credential = target.real ? { ...EXAMPLE_CREDENTIAL, name: 'Model Gateway' } : EXAMPLE_CREDENTIAL;
	let runtime;
	let results;
	try {
		// The first run installs n8n into a cache folder (minutes); runtime.js reports every 15 s.
		runtime = await ensureRuntime({ log: (msg) => log(`n8n runtime: ${msg}`) });
		results = await runWorkflows({
			runtime,
			credentials: [gatewayCredential(credential, target)],
			workflows,
			userFolder: USER_FOLDER,
			log: (msg) => log(`n8n: ${msg}`),
		});
	} finally {
		await target.close();
	}

	const lines = [''];
	for (const workflow of workflows) lines.push(...summarise(results[workflow.id], workflow, fileOf[workflow.id], runtime.version), '');
	const failed = workflows.filter((w) => outcome(results[w.id], runtime.version) === 'failed');
	const expected = workflows.filter((w) => outcome(results[w.id], runtime.version) === 'expected');
	lines.push(
		`${workflows.length - failed.length - expected.length}/${workflows.length} example workflows succeeded` +
			`${expected.length ? `, ${expected.length} refused as expected (they need a newer n8n)` : ''} in n8n ${runtime.version} ` +
			`against ${target.real ? target.baseUrl : 'the loopback gateway'} (${timeSpent(Date.now() - started, runtime.install, runtime.version)}).`,
		`Files: ${rel(OUT_DIR)}/   n8n log: ${rel(path.join(USER_FOLDER, 'n8n.log'))}`,
	);
	process.stdout.write(`${lines.join('\n')}\n`);
	return failed.length ? 1 : 0;
}

if (require.main === module) {
	main().then(
		(code) => {
			process.exitCode = code;
		},
		(error) => {
			// Failed steps carry the end of their log in the message; a stack adds nothing for a user.
			process.stderr.write(`[demo] failed: ${error.message || error}\n`);
			process.exitCode = 1;
		},
	);
}

module.exports = { imageSize, outcome, timeSpent };
