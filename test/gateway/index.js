'use strict';
// Loopback model gateway for tests, demos and benchmarks. Usage and behaviour: README.md.
const http = require('node:http');
const { createState, setOptions, resetState, handleRequest } = require('./server');

function listen(server, port, host) {
	return new Promise((resolve, reject) => {
		server.once('error', reject);
		server.listen(port, host, () => {
			server.off('error', reject);
			resolve(server.address().port);
		});
	});
}

function closeServer(server) {
	return new Promise((resolve) => {
		server.close(() => resolve());
		server.closeAllConnections(); // do not wait for keep-alive sockets or running downloads
	});
}

const urlHost = (host) => (host.includes(':') ? `[${host}]` : host);

/**
 * Starts the API origin and the file host. Resolves to
 * `{ baseUrl, fileBaseUrl, port, filePort, requests, taskIds, reset, queueFaults, setOptions, close }`.
 */
async function startGateway({ port = 0, filePort = 0, host = '127.0.0.1', delayMs = 0, videoPollsToFinish = 3, log = false, acceptXApiKey = false, ...modeOptions } = {}) {
	// The mode (`flavor`) and its settings: only the ones given, so the others keep their defaults.
	const given = Object.fromEntries(Object.entries(modeOptions).filter(([, value]) => value !== undefined));
	const gw = createState({ delayMs, videoPollsToFinish, log, acceptXApiKey, ...given });
	const api = http.createServer((req, res) => handleRequest(gw, 'api', req, res));
	const files = http.createServer((req, res) => handleRequest(gw, 'files', req, res));
	const apiPort = await listen(api, port, host);
	let filesPort;
	try {
		filesPort = await listen(files, filePort, host);
	} catch (error) {
		await closeServer(api);
		throw error;
	}
	gw.baseUrl = `http://${urlHost(host)}:${apiPort}`;
	gw.fileBaseUrl = `http://${urlHost(host)}:${filesPort}`;
	return {
		baseUrl: gw.baseUrl,
		fileBaseUrl: gw.fileBaseUrl,
		port: apiPort,
		filePort: filesPort,
		requests: gw.requests,
		taskIds: () => [...gw.tasks.keys()],
		reset: () => resetState(gw),
		queueFaults: (pathPrefix, faults) => gw.faults.add(pathPrefix, faults),
		setOptions: (partial) => setOptions(gw, partial),
		close: () => Promise.all([closeServer(api), closeServer(files)]).then(() => undefined),
	};
}

module.exports = { startGateway };
