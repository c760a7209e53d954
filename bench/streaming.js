// Rows 10a/10b of `npm run bench` (issue 14, "Streaming overhead"): how much later the first
// answer text reaches a client of a streaming Webhook than the gateway wrote it.
//
// `n8n start` (a real server, production webhooks) runs two workflows: a Webhook set to Respond:
// Streaming → Gateway Chat (Stream on, one item), and the same with Gateway Messages. The loopback
// gateway writes a slow stream: each request first waits (a `slow:MS` fault, so the first answer
// text leaves the gateway about 500 ms after the request came in, for both wire formats), then
// writes one frame every 100 ms (`[stream-pace:100]`). A small proxy in front of the gateway
// records, per request, when the request arrived and when the first upstream bytes carrying answer
// text passed through: the gateway's own time to first text. The client, a plain node:http POST,
// records when the first `{"type":"item"}` line with text arrived since it started the request.
// Ratio = client time to first text / gateway time to first text, per run (the runs take turns);
// medians of the ratios. Everything n8n and our node add (webhook, workflow start, node, request
// out, stream parse, sendChunk, the webhook response) is in the numerator only.
//
// To tell n8n's part from ours, a third workflow behind the same kind of Webhook sends the same
// chat request with n8n's own HTTP Request node, in turn with the others: when its request reaches
// the proxy, since the client started, is what n8n takes with a node of its own (webhook, workflow
// start, evaluating the question's expression, a credential read, a request out): row 10c compares
// our nodes' time to the same point with it. Each run starts SETTLE_MS after the one before.
'use strict';

const crypto = require('node:crypto');
const http = require('node:http');
const path = require('node:path');

const { startGateway } = require('../test/gateway');
const { startServer } = require('../scripts/n8n/headless');
const { n8nRest } = require('../scripts/n8n/queue');
const { median } = require('./aggregation');
const W = require('./workflows');

const PACE_MS = 100;
/** Where the first answer text sits in each format's stream: chat's 2nd frame, messages' 4th. */
const FORMATS = {
	chat: { id: 'mgwBenchStrm001', path: 'bench-stream-chat', route: '/v1/chat/completions', framesBeforeText: 1, text: /[{,]"content":"[^"]/ },
	messages: { id: 'mgwBenchStrm002', path: 'bench-stream-messages', route: '/v1/messages', framesBeforeText: 3, text: /"type":"text_delta","text":"[^"]/ },
};
const TARGET_FIRST_TEXT_MS = 500;
/** The pause before each measured run, so that it does not overlap the end of the one before. */
const SETTLE_MS = 500;
const BASELINE = { id: 'mgwBenchStrm003', path: 'bench-stream-baseline', route: '/v1/chat/completions' };

/** A pass-through proxy noting, per request, its arrival and when the first answer text passed. */
function startTimingProxy(target) {
	const records = [];
	const upstream = new URL(target);
	const server = http.createServer((req, res) => {
		const record = { path: req.url, arrivedAt: performance.now(), firstTextAt: undefined, status: undefined, head: '' };
		records.push(record);
		const out = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent: false /* a fresh connection each time: a pooled one met a 400 */ }, (answer) => {
			record.status = answer.statusCode;
			res.writeHead(answer.statusCode, answer.headers);
			res.flushHeaders();
			const pattern = Object.values(FORMATS).find((f) => req.url.startsWith(f.route))?.text;
			let seen = '';
			answer.on('data', (chunk) => {
				if (record.head.length < 300) record.head += chunk.toString('utf8').slice(0, 300 - record.head.length);
				if (record.firstTextAt === undefined && pattern) {
					seen = (seen + chunk.toString('utf8')).slice(-4096);
					if (pattern.test(seen)) record.firstTextAt = performance.now();
				}
				res.write(chunk);
			});
			answer.on('end', () => res.end());
			answer.on('error', () => res.destroy());
		});
		out.on('error', () => res.destroy());
		req.pipe(out);
	});
	return new Promise((resolve) =>
		server.listen(0, '127.0.0.1', () =>
			resolve({
				baseUrl: `http://127.0.0.1:${server.address().port}`,
				records,
				close: () => new Promise((done) => (server.closeAllConnections(), server.close(() => done()))),
			}),
		),
	);
}

/** POSTs `question` to the webhook and reads n8n's JSON lines: time to the first text item, the text, the status. */
function askWebhook(url, question, timeoutMs = 60000) {
	return new Promise((resolve, reject) => {
		const startedAt = performance.now();
		let firstTextAt;
		let rest = '';
		let text = '';
		const types = [];
		const request = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, timeout: timeoutMs }, (response) => {
			response.setEncoding('utf8');
			const line = (l) => {
				if (l.trim() === '') return;
				let chunk;
				try {
					chunk = JSON.parse(l);
				} catch {
					return types.push(`not JSON: ${l.slice(0, 80)}`);
				}
				types.push(chunk.type);
				if (chunk.type === 'item' && typeof chunk.content === 'string' && chunk.content !== '') {
					firstTextAt ??= performance.now();
					text += chunk.content;
				}
			};
			response.on('data', (data) => {
				const lines = (rest + data).split('\n');
				rest = lines.pop();
				lines.forEach(line);
			});
			response.on('end', () => {
				line(rest);
				resolve({ status: response.statusCode, startedAt, firstTextAt, ms: firstTextAt === undefined ? undefined : firstTextAt - startedAt, text, types });
			});
			response.on('error', reject);
		});
		request.on('timeout', () => request.destroy(new Error(`no answer from ${url} within ${timeoutMs / 1000} s`)));
		request.on('error', reject);
		request.end(JSON.stringify({ question }));
	});
}

/**
 * Runs rows 10a/10b: its own gateway, proxy and `n8n start`, all stopped again, also on failure.
 * Returns { chat, messages }, each { clientMs, gatewayMs, ratio (median of paired ratios), runs, problem? }.
 */
async function measureStreaming({ runtime, out, repeats, log }) {
	const gateway = await startGateway({ delayMs: 0 });
	const proxy = await startTimingProxy(gateway.baseUrl);
	const key = `sk-bench-${crypto.randomBytes(8).toString('hex')}`;
	const webhookIds = { chat: crypto.randomUUID(), messages: crypto.randomUUID(), baseline: crypto.randomUUID() };
	let n8n;
	try {
		n8n = await startServer({
			runtime,
			credentials: W.streamingCredentials({ baseUrl: proxy.baseUrl, key }),
			workflows: Object.entries({ ...FORMATS, baseline: BASELINE }).map(([node, f]) =>
				W.streamingWebhookWorkflow(f.id, { node, path: f.path, webhookId: webhookIds[node], baseUrl: proxy.baseUrl }),
			),
			userFolder: path.join(out, 'streaming'),
			owner: { email: 'bench@example.com', password: 'Gateway-Bench-1', firstName: 'Bench', lastName: 'Owner' },
			log: (message) => log(`streaming: ${message}`),
		});
		const rest = n8nRest(n8n, runtime);
		for (const f of [...Object.values(FORMATS), BASELINE]) await rest.activate(f.id);

		let serial = 0;
		/** A baseline run: when n8n's HTTP Request node's request reached the proxy, since the client started. */
		const baseline = async () => {
			const from = proxy.records.length;
			const client = await askWebhook(`${n8n.url}/webhook/${BASELINE.path}`, `Run ${++serial}: name a fern in a few words`);
			const g = proxy.records.slice(from).find((r) => r.path.startsWith(BASELINE.route));
			const problem = client.status !== 200 ? `the webhook answered HTTP ${client.status} (${client.types.join(' ')})` : g ? undefined : 'no request reached the gateway';
			return { inboundMs: g ? g.arrivedAt - client.startedAt : undefined, problem };
		};
		/** One run: queue the wait so the first text leaves the gateway ~500 ms after the request, then ask. */
		const run = async (node) => {
			const f = FORMATS[node];
			const waitMs = TARGET_FIRST_TEXT_MS - f.framesBeforeText * PACE_MS;
			gateway.queueFaults(f.route, [`slow:${waitMs}`]);
			const from = proxy.records.length;
			const question = `Run ${++serial}: name a fern in a few words [stream-pace:${PACE_MS}]`;
			const client = await askWebhook(`${n8n.url}/webhook/${f.path}`, question);
			const upstream = proxy.records.slice(from).filter((r) => r.path.startsWith(f.route));
			const g = upstream[0];
			const gatewayMs = g?.firstTextAt === undefined ? undefined : g.firstTextAt - g.arrivedAt;
			let problem;
			if (client.status !== 200) problem = `the webhook answered HTTP ${client.status} (${client.types.join(' ')})`;
			else if (upstream.length !== 1) problem = `${upstream.length} gateway requests instead of 1`;
			else if (gatewayMs === undefined) problem = `no answer text passed the proxy (HTTP ${g.status}: ${JSON.stringify(g.head)})`;
			else if (client.ms === undefined) problem = `no text item reached the client (lines: ${client.types.join(' ') || 'none'})`;
			else if (!client.text.includes(`Run ${serial}: name a fern`)) problem = `the streamed text is not the answer: ${JSON.stringify(client.text.slice(0, 120))}`;
			// Where the added time goes: before the request reached the gateway, and after its first text left it.
			const inboundMs = g ? g.arrivedAt - client.startedAt : undefined;
			const outboundMs = g?.firstTextAt !== undefined && client.firstTextAt !== undefined ? client.firstTextAt - g.firstTextAt : undefined;
			return { clientMs: client.ms, gatewayMs, ratio: client.ms / gatewayMs, addedMs: client.ms - gatewayMs, inboundMs, outboundMs, lines: client.types.length, problem };
		};

		// Activation registers the production webhooks a moment later: each is asked until it answers
		// (404 till then), then once more; these runs (not measured) also let n8n load the nodes' code.
		const warmUp = async (name, once) => {
			for (let attempt = 0; ; attempt++) {
				const warm = await once();
				if (!/HTTP 404/.test(warm.problem ?? '')) {
					if (warm.problem) throw new Error(`streaming warm-up (${name}): ${warm.problem}`);
					break;
				}
				gateway.reset(); // the slow answer queued for a request that never came
				if (attempt > 60) throw new Error(`the ${name} webhook was never registered`);
				await new Promise((resolve) => setTimeout(resolve, 500));
			}
			await once();
		};
		for (const node of Object.keys(FORMATS)) await warmUp(node, () => run(node));
		await warmUp('baseline', baseline);
		const runs = { chat: [], messages: [] };
		const baselineRuns = [];
		for (let r = 0; r < repeats; r++) {
			const order = [['chat', 'messages', 'baseline'], ['messages', 'baseline', 'chat'], ['baseline', 'chat', 'messages']][r % 3];
			for (const node of order) {
				// n8n finishes an execution (saving it) after its webhook answer has ended: a run started
				// at once shares the process with that, by about 90 ms after an HTTP Request node's run.
				await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
				if (node === 'baseline') {
					const b = await baseline();
					baselineRuns.push(b);
					log(`streaming: baseline run ${r + 1}: n8n's HTTP Request node reached the gateway ${b.inboundMs?.toFixed(0)} ms after the client started${b.problem ? ` (${b.problem})` : ''}`);
					continue;
				}
				const m = await run(node);
				runs[node].push(m);
				log(`streaming: ${node} run ${r + 1}: client ${m.clientMs?.toFixed(0)} ms, gateway ${m.gatewayMs?.toFixed(0)} ms (added: ${m.inboundMs?.toFixed(0)} ms before the request reached it, ${m.outboundMs?.toFixed(0)} ms after its first text)${m.problem ? ` (${m.problem})` : ''}`);
			}
		}
		const side = (node) => {
			const list = runs[node];
			const problem = list.find((m) => m.problem)?.problem;
			if (problem) return { problem, runs: list };
			return {
				clientMs: median(list.map((m) => m.clientMs)),
				gatewayMs: median(list.map((m) => m.gatewayMs)),
				addedMs: median(list.map((m) => m.addedMs)),
				ratio: median(list.map((m) => m.ratio)),
				inboundMs: median(list.map((m) => m.inboundMs)),
				outboundMs: median(list.map((m) => m.outboundMs)),
				runs: list,
			};
		};
		const baselineProblem = baselineRuns.find((b) => b.problem)?.problem;
		const baselineInboundMs = baselineProblem ? undefined : median(baselineRuns.map((b) => b.inboundMs));
		const oursInboundMs = median([...runs.chat, ...runs.messages].map((m) => m.inboundMs));
		return { chat: side('chat'), messages: side('messages'), oursInboundMs, baselineInboundMs, baselineProblem, settleMs: SETTLE_MS, paceMs: PACE_MS, targetFirstTextMs: TARGET_FIRST_TEXT_MS };
	} finally {
		await n8n?.stop();
		await proxy.close();
		await gateway.close();
	}
}

module.exports = { measureStreaming, startTimingProxy, askWebhook };
