#!/usr/bin/env node
'use strict';
// Starts the hostile gateway for manual testing and prints its URLs on one JSON line:
// {"baseUrl":…,"siblingUrl":…,"otherPortUrl":…,"dnsPreload":…}. Runs until SIGTERM / SIGINT.
// Usage: node test/hostile/cli.js [--drip-ms N] [--keepalive-ms N] [--polls N] [--log]
// Clients in other processes need the names resolved: NODE_OPTIONS="--require <dnsPreload>",
// or curl --resolve gw.example.test:PORT:127.0.0.1 --resolve files.gw.example.test:PORT:127.0.0.1.
const { startHostileGateway, DNS_PRELOAD } = require('./index');

const FLAGS = { '--drip-ms': 'dripIntervalMs', '--keepalive-ms': 'keepAliveIntervalMs', '--polls': 'videoPollsToFinish' };

function parseArgs(argv) {
	const options = {};
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		if (arg === '--log') {
			options.log = true;
			continue;
		}
		const name = FLAGS[arg];
		const value = argv[i + 1];
		if (!name || value === undefined || !/^\d+$/.test(value)) throw new Error(`unknown or incomplete argument ${arg}`);
		options[name] = Number(value);
		i++;
	}
	return options;
}

async function main() {
	const h = await startHostileGateway(parseArgs(process.argv.slice(2)));
	const line = { baseUrl: h.baseUrl, siblingUrl: h.siblingUrl, otherPortUrl: h.otherPortUrl, dnsPreload: DNS_PRELOAD };
	process.stdout.write(`${JSON.stringify(line)}\n`);
	const stop = () => h.close().then(() => process.exit(0));
	process.once('SIGTERM', stop);
	process.once('SIGINT', stop);
}

main().catch((error) => {
	console.error(`hostile gateway: ${error.message}`);
	process.exit(1);
});
