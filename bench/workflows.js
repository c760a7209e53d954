// The benchmark's workflows, built in code: each is a Manual Trigger, a Code node that makes the
// input items, and the one node being measured (ours, or n8n's own HTTP Request doing the same
// requests). The measured node is always named MEASURED, so the bench reads its execution time
// from n8n's run data the same way for every workflow.
'use strict';

const MEASURED = 'Measured';
const PACKAGE = 'n8n-nodes-model-gateway';

let nodeCounter = 0;
const nodeId = () => `b3c40000-0000-4000-8000-${String(++nodeCounter).padStart(12, '0')}`;

/** Credentials the workflows reference by id (the bench fills in the keys and URLs). */
const CREDENTIAL_IDS = {
	slow: { id: 'mgwBenchSlow01', name: 'Bench gateway (delayed answers)' },
	fast: { id: 'mgwBenchFast01', name: 'Bench gateway (immediate answers)' },
	slowHeader: { id: 'mgwBenchHdrSlow1', name: 'Bench header auth (delayed gateway)' },
	fastHeader: { id: 'mgwBenchHdrFast1', name: 'Bench header auth (immediate gateway)' },
	limited: { id: 'mgwBenchLimit01', name: 'Bench gateway (rate-limited)' },
	limitedHeader: { id: 'mgwBenchHdrLim1', name: 'Bench header auth (rate-limited gateway)' },
	streaming: { id: 'mgwBenchStream1', name: 'Bench gateway (slow streams, behind a timing proxy)' },
	streamingHeader: { id: 'mgwBenchHdrStrm1', name: 'Bench header auth (behind the timing proxy)' },
};

/**
 * The n8n credentials: our `gatewayApi` for our nodes, and the Header Auth a user would give the
 * HTTP Request node for the same gateway (`Authorization: Bearer <key>`).
 */
function benchCredentials({ slowBaseUrl, fastBaseUrl, limitedBaseUrl, key }) {
	const gateway = (which, baseUrl) => ({ ...CREDENTIAL_IDS[which], type: 'gatewayApi', data: { apiKey: key, baseUrl, groupMultiplier: 1 } });
	const header = (which) => ({ ...CREDENTIAL_IDS[which], type: 'httpHeaderAuth', data: { name: 'Authorization', value: `Bearer ${key}` } });
	const all = [gateway('slow', slowBaseUrl), gateway('fast', fastBaseUrl), header('slowHeader'), header('fastHeader')];
	if (limitedBaseUrl) all.push(gateway('limited', limitedBaseUrl), header('limitedHeader'));
	return all;
}

/** One of n8n's own nodes in a bench workflow. */
const baseNode = (name, type, typeVersion, position, parameters) => ({ id: nodeId(), name, type, typeVersion, position, parameters });

function workflow(id, name, makeItemsCode, measuredNode) {
	const trigger = baseNode('Start', 'n8n-nodes-base.manualTrigger', 1, [0, 0], {});
	const items = baseNode('Items', 'n8n-nodes-base.code', 2, [220, 0], { jsCode: makeItemsCode });
	const measured = { id: nodeId(), name: MEASURED, position: [440, 0], ...measuredNode };
	const link = (node) => ({ main: [[{ node, type: 'main', index: 0 }]] });
	return {
		id,
		name,
		nodes: [trigger, items, measured],
		connections: { Start: link('Items'), Items: link(MEASURED) },
		settings: { executionOrder: 'v1' },
		active: false,
	};
}

const questionsCode = (count) => `return Array.from({ length: ${count} }, (_, i) => ({ json: { question: 'Question ' + i + ': what is a good name for a fern?' } }));`;

const CHAT_MODEL = 'chat-sonnet-5';
const CHAT_MAX_TOKENS = 256;

/** The measured Gateway Chat node: the item's question, `concurrency` at a time, with credential `credential`. */
function gatewayChatNode(concurrency, credential) {
	return {
		type: `${PACKAGE}.gatewayChat`,
		typeVersion: 1,
		parameters: {
			model: { __rl: true, mode: 'list', value: CHAT_MODEL },
			messages: { values: [{ role: 'user', content: '={{ $json.question }}' }] },
			maxTokens: CHAT_MAX_TOKENS,
			options: { concurrency },
		},
		credentials: { gatewayApi: credential },
	};
}

/** n8n's HTTP Request node sending the same chat request to `baseUrl`, with Header Auth `credential` (`batch`: its Options → Batching, if any). */
function httpChatNode(baseUrl, batch, credential, question = '$json.question') {
	return {
		type: 'n8n-nodes-base.httpRequest',
		typeVersion: 4.2,
		parameters: {
			method: 'POST',
			url: `${baseUrl}/v1/chat/completions`,
			authentication: 'genericCredentialType',
			genericAuthType: 'httpHeaderAuth',
			sendBody: true,
			specifyBody: 'json',
			jsonBody: `={{ JSON.stringify({ model: '${CHAT_MODEL}', max_tokens: ${CHAT_MAX_TOKENS}, messages: [{ role: 'user', content: ${question} }] }) }}`,
			options: batch ? { batching: { batch } } : {},
		},
		credentials: { httpHeaderAuth: credential },
	};
}

/** Gateway Chat over `count` items, `concurrency` at a time, against the delayed gateway. */
function chatWorkflow(id, { count, concurrency }) {
	return workflow(id, `Bench: Gateway Chat, ${count} items, concurrency ${concurrency}`, questionsCode(count), gatewayChatNode(concurrency, CREDENTIAL_IDS.slow));
}

/**
 * n8n's HTTP Request node sending the same chat requests, set up as a user would for speed: Header
 * Auth, a JSON body, and Options → Batching with all items in one batch and no pause (which is
 * also what it does with Batching left unset: it starts every item's request at once).
 */
function httpChatWorkflow(id, { count, baseUrl }) {
	return workflow(id, `Bench: HTTP Request chat, ${count} items at once`, questionsCode(count), httpChatNode(baseUrl, { batchSize: count, batchInterval: 0 }, CREDENTIAL_IDS.slowHeader));
}

const bucketQuestionsCode = (count, bucket) =>
	`return Array.from({ length: ${count} }, (_, i) => ({ json: { question: '[bucket:${bucket}] Question ' + i + ': what is a good name for a fern?' } }));`;

/** Gateway Chat over `count` items against the rate-limited gateway, in token bucket `bucket`. */
function rateLimitedChatWorkflow(id, { count, concurrency, bucket }) {
	return workflow(
		id,
		`Bench: Gateway Chat, ${count} items, concurrency ${concurrency}, rate-limited (${bucket})`,
		bucketQuestionsCode(count, bucket),
		gatewayChatNode(concurrency, CREDENTIAL_IDS.limited),
	);
}

/**
 * The HTTP Request node against the rate-limited gateway, tuned by hand as a user who knows the
 * limit would: Batching of R items per batch and a 1 s interval; a refused item becomes an error
 * item (Continue On Fail) rather than stopping the run.
 */
function httpRateLimitedChatWorkflow(id, { count, bucket, baseUrl, perSecond }) {
	return workflow(id, `Bench: HTTP Request chat, ${count} items, batches of ${perSecond} per second (${bucket})`, bucketQuestionsCode(count, bucket), {
		...httpChatNode(baseUrl, { batchSize: perSecond, batchInterval: 1000 }, CREDENTIAL_IDS.limitedHeader),
		onError: 'continueRegularOutput',
	});
}

const plantsCode = (count, firstId) =>
	`return Array.from({ length: ${count} }, (_, i) => ({ json: { id: ${firstId} + i, name: 'Fern ' + i, tag: 'bench' } }));`;

/** Gateway Plant Create, one item after another (Concurrency 1), against the immediate gateway. */
function plantWorkflow(id, { count, firstId }) {
	return workflow(id, `Bench: Gateway Plant Create, ${count} items one at a time`, plantsCode(count, firstId), {
		type: `${PACKAGE}.gatewayPlantCreate`,
		typeVersion: 1,
		parameters: { id: '={{ $json.id }}', name: '={{ $json.name }}', tag: '={{ $json.tag }}', options: { concurrency: 1 } },
		credentials: { gatewayApi: CREDENTIAL_IDS.fast },
	});
}

/** The HTTP Request node doing the same POST /plants, in its default setup (every item at once). */
function httpPlantWorkflow(id, { count, firstId, baseUrl }) {
	return workflow(id, `Bench: HTTP Request POST /plants, ${count} items`, plantsCode(count, firstId), {
		type: 'n8n-nodes-base.httpRequest',
		typeVersion: 4.2,
		parameters: {
			method: 'POST',
			url: `${baseUrl}/plants`,
			authentication: 'genericCredentialType',
			genericAuthType: 'httpHeaderAuth',
			sendBody: true,
			specifyBody: 'json',
			jsonBody: '={{ JSON.stringify({ id: $json.id, name: $json.name, tag: $json.tag }) }}',
			options: {},
		},
		credentials: { httpHeaderAuth: CREDENTIAL_IDS.fastHeader },
	});
}

/**
 * Gateway Video Generate over `count` items: submit, wait (5 s polls, the gateway finishes a task on
 * its third poll) and download. `promptTag` adds a magic word such as `[big:512]`.
 */
function videoWorkflow(id, { count, promptTag = '', download = true, concurrency = 10 }) {
	const code = `return Array.from({ length: ${count} }, (_, i) => ({ json: { prompt: 'A fern unfolding in time-lapse, take ' + i + '${promptTag ? ` ${promptTag}` : ''}' } }));`;
	return workflow(id, `Bench: Gateway Video Generate, ${count} item(s)${promptTag ? ` ${promptTag}` : ''}`, code, videoNode({ download, concurrency }));
}

/** The measured Gateway Video Generate node (Generate); `options` are added to its Options. */
function videoNode({ download = true, concurrency = 10, credential = CREDENTIAL_IDS.fast, options = {}, continueOnFail = false }) {
	return {
		type: `${PACKAGE}.gatewayVideoGenerate`,
		typeVersion: 1,
		parameters: {
			operation: 'generate',
			model: { __rl: true, mode: 'list', value: 'video-2-0-fast-260128' },
			prompt: '={{ $json.prompt }}',
			seconds: 5,
			size: '1280x720',
			options: { pollIntervalSeconds: 5, maxWaitSeconds: 300, downloadVideo: download, concurrency, ...options },
		},
		credentials: { gatewayApi: credential },
		// A video that fails (e.g. "still running") becomes an error item the bench counts.
		...(continueOnFail ? { onError: 'continueRegularOutput' } : {}),
	};
}

/** The credential of a row with its own gateway (issue 19's rows each start one). */
const ownGatewayCredential = ({ id, baseUrl, key }) => ({ id, name: `Bench gateway ${id}`, type: 'gatewayApi', data: { apiKey: key, baseUrl, groupMultiplier: 1 } });

/**
 * Rows 11 (issue 19): `count` videos (prompts `take <i>`, which the timing gateway reads) at the
 * gateway of credential `credentialId`, without download; failed videos come out as error items.
 */
function slowVideoWorkflow(id, { count, concurrency, credentialId, options }) {
	return workflow(
		id,
		`Bench: Gateway Video Generate, ${count} videos at a slow gateway`,
		videoPromptsCode(count),
		videoNode({ download: false, concurrency, credential: { id: credentialId, name: `Bench gateway ${credentialId}` }, options, continueOnFail: true }),
	);
}

const videoPromptsCode = (count) => `return Array.from({ length: ${count} }, (_, i) => ({ json: { prompt: 'A fern unfolding in time-lapse, take ' + i } }));`;

/**
 * A workflow whose `count` input items all carry the same file, read once from disk into n8n's
 * binary data store (`Start → Frame → Items → Measured`): in n8n's filesystem mode the items hold
 * a reference to it, not its bytes, so what the measured node keeps in memory is its own.
 */
function fileItemsWorkflow(id, name, { filePath, count, json, measuredNode }) {
	const base = workflow(id, name, '', measuredNode);
	const [trigger, items, measured] = base.nodes;
	items.parameters.jsCode = `const frame = $input.first().binary; return Array.from({ length: ${count} }, (_, i) => ({ json: ${json}, binary: frame }));`;
	items.position = [440, 0];
	measured.position = [660, 0];
	const frame = baseNode('Frame', 'n8n-nodes-base.readWriteFile', 1, [220, 0], { operation: 'read', fileSelector: filePath, options: { dataPropertyName: 'data' } });
	const link = (node) => ({ main: [[{ node, type: 'main', index: 0 }]] });
	return { ...base, nodes: [trigger, frame, items, measured], connections: { Start: link('Frame'), Frame: link('Items'), Items: link(MEASURED) } };
}

/** Row 11c: `count` videos, each with the same first frame from binary field `data`. */
function framedVideoWorkflow(id, { filePath, count, concurrency, credentialId, options }) {
	return fileItemsWorkflow(id, `Bench: Gateway Video Generate, ${count} videos with a first frame each`, {
		filePath,
		count,
		json: "{ prompt: 'A fern unfolding in time-lapse, take ' + i }",
		measuredNode: videoNode({
			download: false,
			concurrency,
			credential: { id: credentialId, name: `Bench gateway ${credentialId}` },
			options: { imageBinaryProperty: 'data', ...options },
			continueOnFail: true,
		}),
	});
}

/** Row 11d: `count` Gateway Chat items, each with the same image attachment from binary field `data`. */
function attachedChatWorkflow(id, { filePath, count, concurrency, credentialId }) {
	const node = gatewayChatNode(concurrency, { id: credentialId, name: `Bench gateway ${credentialId}` });
	node.parameters.options.binaryAttachments = 'data';
	return fileItemsWorkflow(id, `Bench: Gateway Chat, ${count} items with an image each`, {
		filePath,
		count,
		json: "{ question: 'Question ' + i + ': what plant is in this photo?' }",
		measuredNode: { ...node, onError: 'continueRegularOutput' },
	});
}

/**
 * Rows 10a/10b: a production Webhook (typeVersion 2.1, Respond: Streaming, POST /webhook/<path>)
 * → Gateway Chat or Gateway Messages with Stream on, one item: the webhook body's `question` as
 * the user message. n8n streams the node's text to the webhook caller as JSON lines. `node`
 * 'baseline': n8n's HTTP Request node instead, sending the same request to `baseUrl`.
 */
function streamingWebhookWorkflow(id, { node, path, webhookId, baseUrl }) {
	const trigger = {
		id: nodeId(),
		name: 'Webhook',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2.1,
		position: [0, 0],
		webhookId,
		parameters: { httpMethod: 'POST', path, responseMode: 'streaming', options: {} },
	};
	// The baseline: n8n's own HTTP Request node sends the same chat request (it does not stream).
	const measured =
		node === 'baseline'
			? { id: nodeId(), name: MEASURED, position: [220, 0], ...httpChatNode(baseUrl, undefined, CREDENTIAL_IDS.streamingHeader, '$json.body.question') }
			: {
					id: nodeId(),
					name: MEASURED,
					type: `${PACKAGE}.${{ chat: 'gatewayChat', messages: 'gatewayMessages' }[node]}`,
					typeVersion: 1,
					position: [220, 0],
					parameters: {
						model: { __rl: true, mode: 'list', value: CHAT_MODEL },
						messages: { values: [{ role: 'user', content: '={{ $json.body.question }}' }] },
						maxTokens: 64,
						stream: true,
						options: {},
					},
					credentials: { gatewayApi: CREDENTIAL_IDS.streaming },
				};
	return {
		id,
		name: `Bench: streaming Webhook → ${measured.type}`,
		nodes: [trigger, measured],
		connections: { Webhook: { main: [[{ node: MEASURED, type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
		active: false,
	};
}

/** The credential of the streaming workflows, at `baseUrl` (the timing proxy). */
const streamingCredentials = ({ baseUrl, key }) => [
	{ ...CREDENTIAL_IDS.streaming, type: 'gatewayApi', data: { apiKey: key, baseUrl, groupMultiplier: 1 } },
	{ ...CREDENTIAL_IDS.streamingHeader, type: 'httpHeaderAuth', data: { name: 'Authorization', value: `Bearer ${key}` } },
];

module.exports = {
	MEASURED,
	streamingWebhookWorkflow,
	streamingCredentials,
	benchCredentials,
	chatWorkflow,
	httpChatWorkflow,
	rateLimitedChatWorkflow,
	httpRateLimitedChatWorkflow,
	plantWorkflow,
	httpPlantWorkflow,
	videoWorkflow,
	slowVideoWorkflow,
	framedVideoWorkflow,
	attachedChatWorkflow,
	ownGatewayCredential,
};
