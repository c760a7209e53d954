#!/usr/bin/env node
'use strict';
// Starts the loopback gateway and prints {"baseUrl":...,"fileBaseUrl":...} on one line.
// Usage: node test/gateway/cli.js [--port N] [--file-port N] [--delay-ms N] [--host H] [--polls N] [--log] [--x-api-key] [--flavor default|newapi]
const { startGateway } = require('./index');

const FLAGS = { '--port': 'port', '--file-port': 'filePort', '--delay-ms': 'delayMs', '--host': 'host', '--polls': 'videoPollsToFinish', '--flavor': 'flavor' };
const TEXT_FLAGS = ['host', 'flavor'];

function parseArgs(argv) {
	const options = {};
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		if (arg === '--log') {
			options.log = true;
			continue;
		}
		if (arg === '--x-api-key') {
			options.acceptXApiKey = true;
			continue;
		}
		const name = FLAGS[arg];
		const value = argv[i + 1];
		if (!name || value === undefined) throw new Error(`unknown or incomplete argument ${arg}`);
		const text = TEXT_FLAGS.includes(name);
		if (!text && !/^\d+$/.test(value)) throw new Error(`${arg} needs a whole number, got ${value}`);
		options[name] = text ? value : Number(value);
		i++;
	}
	return options;
}

async function main() {
	const gateway = await startGateway(parseArgs(process.argv.slice(2)));
	process.stdout.write(`${JSON.stringify({ baseUrl: gateway.baseUrl, fileBaseUrl: gateway.fileBaseUrl })}\n`);
	// For a person (`npm run gateway`): what to put into n8n's credential.
	console.error(`gateway: Base URL ${gateway.baseUrl}, API Key: any key that starts with sk- (e.g. sk-test-1). Ctrl-C stops it.`);
	const stop = () => gateway.close().then(() => process.exit(0));
	process.once('SIGTERM', stop);
	process.once('SIGINT', stop);
}

main().catch((error) => {
	console.error(`gateway: ${error.message}`);
	process.exit(1);
});
