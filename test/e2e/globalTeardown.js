// Jest globalTeardown of the e2e projects: stops the loopback gateways globalSetup started.
'use strict';

module.exports = async function globalTeardown() {
	const gateways = globalThis.__MGW_E2E_GATEWAYS__ || [];
	delete globalThis.__MGW_E2E_GATEWAYS__;
	await Promise.all(gateways.map((gateway) => gateway.close()));
};
