'use strict';
// Small helpers with no HTTP in them: ids, time, sleeping, and a size-capped map so that
// a long benchmark run cannot grow the gateway's memory without bound.
const crypto = require('node:crypto');

// Unref'd so that a closed gateway with a `slow` fault still pending never keeps a test process alive.
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)).unref());

const unixNow = () => Math.floor(Date.now() / 1000);

function randomHex(bytes) {
	return crypto.randomBytes(bytes).toString('hex');
}

/** new-api style request id: a timestamp followed by random characters. */
function newRequestId() {
	const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 17);
	return `${stamp}${randomHex(4)}`;
}

/** A Map that forgets its oldest entries once it holds more than `limit`. */
class BoundedMap extends Map {
	constructor(limit) {
		super();
		this.limit = limit;
	}

	set(key, value) {
		super.set(key, value);
		if (this.size > this.limit) this.delete(this.keys().next().value);
		return this;
	}
}

module.exports = { sleep, unixNow, randomHex, newRequestId, BoundedMap };
