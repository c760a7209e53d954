// n8n loads the nodes and credentials listed under "n8n" in package.json; nothing is exported here.
module.exports = {};
