// Goal 4: reading and aggregating a large answer stream must cost about what parsing its JSON
// costs, and grow linearly with its size. Runs on the built node code (dist/): the real SSE
// parser, reply aggregation and output of Gateway Chat and Gateway Messages, through the same
// callChat they use in n8n, fed the stream in network-sized chunks. bench/run.js starts this file
// on n8n's own Node binary, so the numbers are those of the Node the nodes really run on:
//
//   <node> bench/aggregation.js --gateway <baseUrl> [--repeats 9]   -> prints the results as JSON
//
// The streams are made of the loopback gateway's own frames: one real streamed answer is fetched,
// and its answer-text frames are repeated until the stream has the wanted size. The aggregated
// output is checked against the text those frames carry, so a parser that drops events fails.
'use strict';

const path = require('node:path');
const { Readable } = require('node:stream');

const { gatewayClient } = require('../test/gateway/testing');

const DIST = path.join(__dirname, '..', 'dist', 'nodes');
const MIB = 1024 * 1024;
/** What one socket read typically hands over on loopback. */
const CHUNK_BYTES = 16 * 1024;
const WARM_UP_RUNS = 2;

/** A streamed answer with reasoning (chat-fable-5 always thinks), as both formats take it. */
const streamBody = (question) => ({ model: 'chat-fable-5', stream: true, max_tokens: 64000, messages: [{ role: 'user', content: question }] });

const FORMATS = {
	chat: {
		label: 'Gateway Chat (chat-completions chunks)',
		path: '/v1/chat/completions',
		/** The answer text a frame adds, or undefined for frames that are not repeated. */
		textOf: (payload) => payload?.choices?.[0]?.delta?.content || undefined,
		outputText: (json) => json.text,
	},
	messages: {
		label: 'Gateway Messages (message events)',
		path: '/v1/messages',
		textOf: (payload) => (payload?.type === 'content_block_delta' && payload.delta?.type === 'text_delta' ? payload.delta.text : undefined),
		outputText: (json) => json.text,
	},
};

function payloadOf(frame) {
	const data = frame
		.split('\n')
		.filter((line) => line.startsWith('data: '))
		.map((line) => line.slice(6))
		.join('\n');
	if (data === '' || data === '[DONE]') return { data };
	return { data, json: JSON.parse(data) };
}

/** The frames of one real streamed answer from the gateway. */
async function fetchFrames(gatewayBaseUrl, format) {
	const spec = FORMATS[format];
	const question = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
	const response = await gatewayClient(gatewayBaseUrl, 'sk-bench-aggregation-0000').post(spec.path, streamBody(question));
	if (!response.ok) throw new Error(`${spec.path} answered HTTP ${response.status}: ${await response.text()}`);
	return (await response.text()).split('\n\n').filter((frame) => frame.trim() !== '');
}

/**
 * The answer `frames` grown to `targetBytes` by repeating its answer-text frames in place.
 * Returns the stream bytes, the JSON text of all its events (for the JSON.parse baseline) and
 * the answer text a correct reader must produce.
 */
function buildStream(frames, format, targetBytes) {
	const spec = FORMATS[format];
	const parsed = frames.map(payloadOf);
	const textIndexes = parsed.map((p, i) => (spec.textOf(p.json) !== undefined ? i : -1)).filter((i) => i >= 0);
	if (textIndexes.length < 10) throw new Error(`the ${format} stream has too few text frames (${textIndexes.length})`);
	const first = textIndexes[0];
	const last = textIndexes[textIndexes.length - 1];
	const head = frames.slice(0, first);
	const body = frames.slice(first, last + 1);
	const tail = frames.slice(last + 1);
	const size = (list) => list.reduce((sum, frame) => sum + Buffer.byteLength(frame) + 2, 0);
	const repeats = Math.max(1, Math.round((targetBytes - size(head) - size(tail)) / size(body)));
	const all = [...head, ...Array.from({ length: repeats }, () => body).flat(), ...tail];
	const bytes = Buffer.from(all.map((frame) => `${frame}\n\n`).join(''));
	const payloads = all.map(payloadOf).filter((p) => p.json !== undefined);
	const bodyText = parsed.slice(first, last + 1).map((p) => spec.textOf(p.json) ?? '').join('');
	const headText = parsed.slice(0, first).map((p) => spec.textOf(p.json) ?? '').join('');
	return {
		format,
		bytes,
		events: all.length,
		jsonText: `[${payloads.map((p) => p.data).join(',')}]`,
		expectedText: headText + bodyText.repeat(repeats),
	};
}

function loadDist() {
	const require_ = (file) => require(path.join(DIST, file));
	return {
		callChat: require_('shared/chat/chatCall.js').callChat,
		chat: { ...require_('shared/chat/completions.js'), wire: require_('shared/chat/completions.js').CHAT_COMPLETIONS },
		messages: { ...require_('GatewayMessages/reply.js'), wire: require_('GatewayMessages/create.js').MESSAGES_WIRE },
	};
}

/** Gateway Chat's or Gateway Messages' stream path after HTTP: callChat, then the output json. */
async function aggregate(dist, format, bytes) {
	// The answer as the transport hands it over: a readable stream of 16 KiB network chunks.
	const network = () => {
		const chunks = [];
		for (let at = 0; at < bytes.length; at += CHUNK_BYTES) chunks.push(bytes.subarray(at, at + CHUNK_BYTES));
		return Readable.from(chunks);
	};
	const node = { name: 'Bench', type: 'bench', typeVersion: 1, position: [0, 0], parameters: {} };
	const ctx = { getNode: () => node, isStreaming: () => false };
	const client = {
		cancelSignal: undefined,
		masker: { mask: (text) => text },
		stream: async () => ({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: network(), failure: (error) => error, alive: () => undefined }),
	};
	const isChat = format === 'chat';
	const reply = await dist.callChat(ctx, client, isChat ? dist.chat.wire : dist.messages.wire, {
		body: {},
		stream: true,
		itemIndex: 0,
		what: 'The bench request',
		deadlineMs: 600_000,
	});
	return isChat ? dist.chat.chatOutput(reply) : dist.messages.messagesOutput(reply);
}

const median = (values) => {
	const sorted = [...values].sort((a, b) => a - b);
	const mid = Math.floor(sorted.length / 2);
	return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** Wall time and CPU time (all threads of this process, GC included) of one run. */
// No forced garbage collection between runs: in n8n the nodes run in a long-lived process with a
// grown heap, and a collection just before a run makes V8 shrink the heap that the run then pays
// to grow again. Runs alternate, so each contender meets the other's garbage alike.
async function timeRun(fn) {
	const cpu = process.cpuUsage();
	const started = process.hrtime.bigint();
	await fn();
	const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
	const used = process.cpuUsage(cpu);
	return { wallMs, cpuMs: (used.user + used.system) / 1000 };
}

/**
 * For each format: a reference stream (`sizesMiB[0]`) and a larger one (`sizesMiB[1]`), timed
 * `repeats` times each, interleaved (ours small, JSON.parse small, ours large, JSON.parse large),
 * so that each ratio is taken between runs made moments apart, then the median of those ratios.
 * @returns {Promise<Array<{format, label, small, large, vsJsonParse, growth}>>} where small and
 *   large are {mib, bytes, events, oursMs, jsonParseMs, oursWallMs, jsonParseWallMs, oursRuns, jsonRuns},
 *   vsJsonParse the median of ours/JSON.parse on the small stream, growth the median of large/small.
 */
async function measureAggregation({ gatewayBaseUrl, formats = ['chat', 'messages'], sizesMiB = [20, 40], repeats = 7, log = () => {} }) {
	const dist = loadDist();
	const framesOf = {};
	for (const format of formats) framesOf[format] = await fetchFrames(gatewayBaseUrl, format);
	const results = [];
	for (const format of formats) {
		const streams = sizesMiB.slice(0, 2).map((mib) => ({ mib, ...buildStream(framesOf[format], format, mib * MIB), oursRuns: [], jsonRuns: [] }));
		for (const stream of streams) {
			const output = await aggregate(dist, format, stream.bytes);
			if (FORMATS[format].outputText(output) !== stream.expectedText) {
				throw new Error(`the ${format} aggregation of a ${stream.mib} MiB stream did not reproduce the streamed text`);
			}
			// Untimed warm-up, so the optimising compiler has settled before the timed runs.
			for (let run = 0; run < WARM_UP_RUNS; run++) {
				await aggregate(dist, format, stream.bytes);
				JSON.parse(stream.jsonText);
			}
		}
		for (let run = 0; run < repeats; run++) {
			for (const stream of streams) {
				stream.oursRuns.push(await timeRun(() => aggregate(dist, format, stream.bytes)));
				stream.jsonRuns.push(await timeRun(() => JSON.parse(stream.jsonText)));
			}
		}
		// CPU time is the measure: on a shared machine, wall time also counts other processes.
		const cpu = (runs) => runs.map((r) => r.cpuMs);
		const [small, large] = streams.map((stream) => ({
			mib: stream.mib,
			bytes: stream.bytes.length,
			events: stream.events,
			oursMs: median(cpu(stream.oursRuns)),
			jsonParseMs: median(cpu(stream.jsonRuns)),
			oursWallMs: median(stream.oursRuns.map((r) => r.wallMs)),
			jsonParseWallMs: median(stream.jsonRuns.map((r) => r.wallMs)),
			oursRuns: stream.oursRuns,
			jsonRuns: stream.jsonRuns,
		}));
		const vsJsonParse = median(small.oursRuns.map((r, i) => r.cpuMs / small.jsonRuns[i].cpuMs));
		const growth = median(large.oursRuns.map((r, i) => r.cpuMs / small.oursRuns[i].cpuMs));
		for (const size of [small, large]) {
			log(
				`aggregation ${format} ${size.mib} MiB (${size.events} events): ours ${size.oursMs.toFixed(0)} ms CPU (${size.oursWallMs.toFixed(0)} wall), ` +
					`JSON.parse ${size.jsonParseMs.toFixed(0)} ms CPU (${size.jsonParseWallMs.toFixed(0)} wall), medians of ${repeats}`,
			);
		}
		log(`aggregation ${format}: ${vsJsonParse.toFixed(2)}x JSON.parse, ${large.mib} vs ${small.mib} MiB ${growth.toFixed(2)}x (medians of paired ratios)`);
		results.push({ format, label: FORMATS[format].label, small, large, vsJsonParse, growth });
	}
	return results;
}

module.exports = { measureAggregation, buildStream, aggregate, loadDist, median };

if (require.main === module) {
	const args = process.argv.slice(2);
	const take = (flag) => {
		const at = args.indexOf(flag);
		return at >= 0 ? args[at + 1] : undefined;
	};
	const gatewayBaseUrl = take('--gateway');
	if (!gatewayBaseUrl) throw new Error('--gateway <baseUrl> of a running loopback gateway is required');
	measureAggregation({ gatewayBaseUrl, repeats: Number(take('--repeats')) || 7, log: (message) => process.stderr.write(`${message}\n`) })
		.then((results) => process.stdout.write(`${JSON.stringify({ node: process.versions.node, results })}\n`))
		.catch((error) => {
			process.stderr.write(`${error.stack || error}\n`);
			process.exit(1);
		});
}
