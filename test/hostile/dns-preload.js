'use strict';
// Makes `example.test` and every `*.example.test` name resolve to 127.0.0.1 in this process,
// without touching /etc/hosts, so the hostile gateway can play two host names on one machine.
// Load it with `node -r <this file>`, `NODE_OPTIONS=--require <absolute path>` or `require()`.
// Every other name goes to the original resolver. Requiring it again (even from another jest
// module registry, which shares the core `dns` module) patches nothing more.
const dns = require('node:dns');

const MARK = Symbol.for('n8n-nodes-model-gateway.hostile.dnsPreload');
const LOOPBACK = '127.0.0.1';

/** True for example.test and its subdomains (any case, trailing dot allowed). */
function isTestName(hostname) {
	if (typeof hostname !== 'string') return false;
	const name = hostname.toLowerCase().replace(/\.$/, '');
	return name === 'example.test' || name.endsWith('.example.test');
}

function wantsAll(options) {
	return options !== null && typeof options === 'object' && options.all === true;
}

if (!dns[MARK]) {
	const originalLookup = dns.lookup;
	const patchedLookup = function lookup(hostname, options, callback) {
		if (typeof options === 'function') {
			callback = options;
			options = {};
		}
		if (!isTestName(hostname)) return originalLookup.call(dns, hostname, options, callback);
		process.nextTick(() => {
			if (wantsAll(options)) callback(null, [{ address: LOOPBACK, family: 4 }]);
			else callback(null, LOOPBACK, 4);
		});
		return {};
	};
	dns.lookup = patchedLookup;

	const promises = dns.promises;
	if (promises && typeof promises.lookup === 'function') {
		const originalPromiseLookup = promises.lookup;
		promises.lookup = function lookup(hostname, options) {
			if (!isTestName(hostname)) return originalPromiseLookup.call(promises, hostname, options);
			const answer = { address: LOOPBACK, family: 4 };
			return Promise.resolve(wantsAll(options) ? [answer] : answer);
		};
	}
	Object.defineProperty(dns, MARK, { value: { originalLookup, isTestName }, enumerable: false });
}

module.exports = { isTestName, LOOPBACK };
