'use strict';
// Lets a plain `node` child process (one that measures its own memory, without jest around it)
// require the TypeScript sources: each file is transpiled as it is loaded, not type-checked.
const fs = require('fs');
const path = require('path');
const ts = require(require.resolve('typescript', { paths: [path.join(__dirname, '../..')] }));

require.extensions['.ts'] = (module, filename) => {
	const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
		compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
		fileName: filename,
	});
	module._compile(outputText, filename);
};
