'use strict';
// Runs Gateway Image Generate once, in its own process, against a gateway that answers b64_json,
// and prints how far its memory rose above where it started: `node --expose-gc -r ./registerTs.js
// imageMemoryChild.js <baseUrl> <n>`. n8n's binary data is kept out of memory here, as n8n's
// filesystem binary mode keeps it, so what is measured is the node's own holding of the answer.
const crypto = require('crypto');
const fs = require('fs');
const { createExecuteContext } = require('./executeContext.ts');
const { GatewayImageGenerate } = require('../../nodes/GatewayImageGenerate/GatewayImageGenerate.node.ts');

/** A line of /proc/self/status, in bytes. */
function residentBytes(field) {
	const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync('/proc/self/status', 'utf8'));
	if (!match) throw new Error(`no ${field} in /proc/self/status`);
	return Number(match[1]) * 1024;
}

async function main() {
	const [baseUrl, n] = process.argv.slice(2);
	const test = createExecuteContext({
		parameters: { model: { __rl: true, mode: 'id', value: 'img-image-2' }, prompt: 'x', n: Number(n), responseFormat: 'b64_json' },
		credentials: { apiKey: 'sk-memory-child-0123456789', baseUrl },
	});
	const stored = [];
	test.ctx.helpers.prepareBinaryData = async (bytes, fileName, mimeType) => {
		stored.push({ size: bytes.length, sha256: crypto.createHash('sha256').update(bytes).digest('hex') });
		return { data: 'filesystem-v2', id: `filesystem-v2:${stored.length}`, fileName, mimeType, bytes: bytes.length };
	};
	const node = new GatewayImageGenerate();
	global.gc();
	global.gc();
	// Linux keeps the highest resident size in VmHWM; writing 5 to clear_refs starts it again from
	// here, so neither loading the modules nor the parent this process was forked from counts.
	fs.writeFileSync('/proc/self/clear_refs', '5');
	const startRss = residentBytes('VmRSS');
	const [output] = await node.execute.call(test.ctx);
	const peakRss = residentBytes('VmHWM');
	process.stdout.write(`${JSON.stringify({ startRss, peakRss, items: output.length, stored })}\n`);
}

main().catch((error) => {
	process.stderr.write(`${error.stack ?? error}\n`);
	process.exit(1);
});
