// The package's entry point: `require('n8n-nodes-model-gateway')` gives the built node and
// credential classes. n8n itself does not use it: it loads the files listed under `n8n` in
// package.json. Plain relative requires, so that n8n's package scanner accepts the file;
// test/unit/package.test.ts checks that this list matches package.json's.
'use strict';

module.exports = {
	...require('./dist/nodes/GatewayAccount/GatewayAccount.node.js'),
	...require('./dist/nodes/GatewayChat/GatewayChat.node.js'),
	...require('./dist/nodes/GatewayChatModel/GatewayChatModel.node.js'),
	...require('./dist/nodes/GatewayImageGenerate/GatewayImageGenerate.node.js'),
	...require('./dist/nodes/GatewayMessages/GatewayMessages.node.js'),
	...require('./dist/nodes/GatewayPlantCreate/GatewayPlantCreate.node.js'),
	...require('./dist/nodes/GatewayVideoGenerate/GatewayVideoGenerate.node.js'),
	...require('./dist/credentials/GatewayApi.credentials.js'),
};
