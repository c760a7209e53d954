// Jest globalTeardown of the e2e project: stops the loopback gateway globalSetup started.
'use strict';

module.exports = async function globalTeardown() {
	const gateway = globalThis.__MGW_E2E_GATEWAY__;
	delete globalThis.__MGW_E2E_GATEWAY__;
	if (gateway) await gateway.close();
};
