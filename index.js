// The package's entry point: `require('n8n-nodes-model-gateway')` gives the built node and
// credential classes. n8n itself does not use it: it loads the files listed under `n8n` in
// package.json. The list is read from there, so that a node added to package.json is exported too.
'use strict';

const path = require('node:path');
const { n8n } = require('./package.json');

for (const file of [...n8n.nodes, ...n8n.credentials]) {
	Object.assign(module.exports, require(path.join(__dirname, file)));
}
