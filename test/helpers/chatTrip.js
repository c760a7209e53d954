'use strict';
// The trip of one chat item, from its parameters to its output item, file by file (issue 27):
// `node test/helpers/chatTrip.js [root]` runs one item with one PNG attachment (kept in the item,
// n8n's default binary mode) through Gateway Chat and Gateway Messages, Stream off and on, against
// the loopback gateway, with every function under `<root>/nodes` instrumented, and prints what
// each item passed through as one line of JSON per run. `root` (default: this checkout) lets the
// same count be taken of another version.
//
// How it counts. Every function entry under nodes/ is recorded with the function that called it
// (the nearest frame of the stack below it that is ours). A call from one file to another is a
// call "from file to file". The transport is the boundary where the request leaves: the calls
// into it count, what it does inside (retries, pacing, encoding, masking) does not.
// - `all`: every call from file to file.
// - `trip`: the calls that carry the item on, i.e. without the calls into helpers: a helper is a
//   function that calls no other file of ours, itself or through functions of its own file (a
//   check such as readInteger, a conversion such as sniffFileType or requestBody, and so the
//   transport's entry points): it returns a value, the item does not pass through it.
// In both, the first entry into the operation counts as a call, `files` are the files entered,
// and `returns` the calls into a file already entered before (calls = files + returns).
const fs = require('fs');
const path = require('path');

const [rootArgument] = process.argv.slice(2);
const HERE = path.join(__dirname, '../..');
const ROOT = path.resolve(rootArgument ?? HERE);
const NODES = path.join(ROOT, 'nodes') + path.sep;
const ts = require(require.resolve('typescript', { paths: [HERE] }));

/** Instrumented functions: file (relative to nodes/), name; `ranges` maps emitted positions to them. */
const functions = [];
const ranges = new Map();
let tracing = false;
let events = [];

function functionName(node) {
	if (node.name && ts.isIdentifier(node.name)) {
		const owner = ts.isClassLike(node.parent) && node.parent.name ? `${node.parent.name.text}.` : '';
		return owner + node.name.text;
	}
	if (ts.isConstructorDeclaration(node)) return `new ${node.parent.name?.text ?? '<class>'}`;
	const parent = node.parent;
	if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && ts.isIdentifier(parent.name)) return parent.name.text;
	return '<anonymous>';
}

/** Adds `__tripEnter(id)` as the first statement of every function body. */
function instrument(file, source) {
	return (context) => (sourceFile) => {
		const f = context.factory;
		const enter = (id) => f.createExpressionStatement(f.createCallExpression(f.createIdentifier('__tripEnter'), undefined, [f.createNumericLiteral(id)]));
		const visit = (node) => {
			if (ts.isFunctionLike(node) && node.body) {
				const line = sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line + 1;
				const id = functions.push({ file, name: functionName(node), line }) - 1;
				const visited = ts.visitEachChild(node, visit, context);
				const body = visited.body;
				const block = ts.isBlock(body) ? f.updateBlock(body, [enter(id), ...body.statements]) : f.createBlock([enter(id), f.createReturnStatement(body)], true);
				if (ts.isArrowFunction(visited)) return f.updateArrowFunction(visited, visited.modifiers, visited.typeParameters, visited.parameters, visited.type, visited.equalsGreaterThanToken, block);
				if (ts.isFunctionDeclaration(visited)) return f.updateFunctionDeclaration(visited, visited.modifiers, visited.asteriskToken, visited.name, visited.typeParameters, visited.parameters, visited.type, block);
				if (ts.isFunctionExpression(visited)) return f.updateFunctionExpression(visited, visited.modifiers, visited.asteriskToken, visited.name, visited.typeParameters, visited.parameters, visited.type, block);
				if (ts.isMethodDeclaration(visited)) return f.updateMethodDeclaration(visited, visited.modifiers, visited.asteriskToken, visited.name, visited.questionToken, visited.typeParameters, visited.parameters, visited.type, block);
				if (ts.isConstructorDeclaration(visited)) return f.updateConstructorDeclaration(visited, visited.modifiers, visited.parameters, block);
				if (ts.isGetAccessorDeclaration(visited)) return f.updateGetAccessorDeclaration(visited, visited.modifiers, visited.name, visited.parameters, visited.type, block);
				if (ts.isSetAccessorDeclaration(visited)) return f.updateSetAccessorDeclaration(visited, visited.modifiers, visited.name, visited.parameters, block);
				return visited;
			}
			return ts.visitEachChild(node, visit, context);
		};
		return ts.visitNode(sourceFile, visit);
	};
}

/** Where each instrumented function lies in the emitted text, to name the caller of a stack frame. */
function mapRanges(filename, output) {
	const sourceFile = ts.createSourceFile(filename, output, ts.ScriptTarget.ES2022, true, ts.ScriptKind.JS);
	const list = [];
	const visit = (node) => {
		if (ts.isFunctionLike(node) && node.body && ts.isBlock(node.body)) {
			const first = node.body.statements[0];
			const call = first && ts.isExpressionStatement(first) && ts.isCallExpression(first.expression) ? first.expression : undefined;
			if (call && ts.isIdentifier(call.expression) && call.expression.text === '__tripEnter') {
				const start = sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile));
				const end = sourceFile.getLineAndCharacterOfPosition(node.end);
				list.push({ id: Number(call.arguments[0].text), start: [start.line + 1, start.character + 1], end: [end.line + 1, end.character + 1] });
			}
		}
		ts.forEachChild(node, visit);
	};
	visit(sourceFile);
	ranges.set(filename, list);
}

const before = (a, b) => a[0] < b[0] || (a[0] === b[0] && a[1] <= b[1]);

function functionAt(filename, line, column) {
	let best;
	for (const range of ranges.get(filename) ?? []) {
		if (before(range.start, [line, column]) && before([line, column], range.end) && (!best || before(best.start, range.start))) best = range;
	}
	return best?.id;
}

require.extensions['.ts'] = (module, filename) => {
	const text = fs.readFileSync(filename, 'utf8');
	const ours = filename.startsWith(NODES);
	const { outputText } = ts.transpileModule(text, {
		compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
		fileName: filename,
		transformers: ours ? { before: [instrument(path.relative(NODES, filename), text)] } : undefined,
	});
	if (ours) mapRanges(filename, outputText);
	module._compile(outputText, filename);
};

const FRAME = /^\s*at (?:async )?(?:.*? \()?(.+?):(\d+):(\d+)\)?$/;

global.__tripEnter = (id) => {
	if (!tracing) return;
	const limit = Error.stackTraceLimit;
	Error.stackTraceLimit = 200;
	const stack = new Error().stack.split('\n').slice(2);
	Error.stackTraceLimit = limit;
	const frames = [];
	for (const line of stack) {
		const match = FRAME.exec(line);
		if (match && path.isAbsolute(match[1])) frames.push({ filename: match[1], line: Number(match[2]), column: Number(match[3]) });
	}
	// frames[0] is the function entered; the caller is the next frame.
	const caller = frames[1];
	const callerId = caller && caller.filename.startsWith(NODES) ? functionAt(caller.filename, caller.line, caller.column) : undefined;
	// Inside the transport too: a function of its attempt (wire/attempt.ts), which a reader reaches only
	// through the answer stream's own destroy, which the transport gave the answer to close its connection.
	const inTransport = frames.slice(1).some((frame) => frame.filename === path.join(NODES, 'shared/wire/transport.ts')) || frames[0]?.filename === path.join(NODES, 'shared/wire/attempt.ts');
	events.push({ id, callerId, inTransport });
};

function summarise(calls) {
	const files = [];
	let returns = 0;
	const entries = {};
	for (const call of calls) {
		const file = functions[call.id].file;
		entries[file] = (entries[file] ?? 0) + 1;
		if (files.includes(file)) returns++;
		else files.push(file);
	}
	const steps = calls.map((call) => {
		const callee = functions[call.id];
		const from = call.callerId === undefined ? 'node file' : `${functions[call.callerId].file} ${functions[call.callerId].name}`;
		return `${from} -> ${callee.file} ${callee.name}`;
	});
	return { files, calls: calls.length, returns, entries, path: steps };
}

/** One item of `format` through its operation, Stream on or off: its trip and all its calls. */
async function traceOne(format, mode, baseUrl) {
	const { createExecuteContext } = require(path.join(HERE, 'test/helpers/executeContext.ts'));
	const { binaryItem, pngBytes, withBinaryHelpers } = require(path.join(HERE, 'test/helpers/files.ts'));
	const [file, name] = format === 'chat' ? ['GatewayChat/complete.ts', 'complete'] : ['GatewayMessages/create.ts', 'createMessage'];
	const operation = require(path.join(NODES, file))[name];
	const test = createExecuteContext({
		parameters: {
			model: { __rl: true, mode: 'list', value: 'chat-sonnet-5' },
			messages: { values: [{ role: 'user', content: 'What is in this picture?' }] },
			maxTokens: 1000,
			stream: mode === 'stream',
			options: { binaryAttachments: 'photo' },
		},
		items: [binaryItem({ photo: { bytes: pngBytes(), fileName: 'photo.png', mimeType: 'image/png' } })],
		credentials: { apiKey: 'sk-chat-trip-0123456789', baseUrl },
	});
	withBinaryHelpers(test.ctx);
	// The operation's own entry, from the node file, is the trip's first call.
	const start = functions.findIndex((fn) => fn.file === file && fn.name === name);
	events = [];
	tracing = true;
	const [output] = await operation.call(test.ctx);
	tracing = false;
	if (!String(output[0].json.text).includes('attached')) throw new Error(`The gateway did not see the attachment: ${JSON.stringify(output[0].json)}`);
	const fileOf = (id) => functions[id].file;
	const ours = events.filter((event) => !event.inTransport && event.callerId !== undefined);
	const crossing = ours.filter((event) => fileOf(event.callerId) !== fileOf(event.id));
	// Not a helper: a function that calls another file, itself or through functions of its own file.
	const onward = new Set(crossing.map((event) => event.callerId));
	for (let grown = true; grown; ) {
		grown = false;
		for (const event of ours) {
			if (onward.has(event.id) && !onward.has(event.callerId)) {
				onward.add(event.callerId);
				grown = true;
			}
		}
	}
	const all = [{ id: start }, ...crossing];
	const trip = all.filter((call) => call.id === start || onward.has(call.id));
	return { format, mode, trip: summarise(trip), all: summarise(all) };
}

async function main() {
	const { startGateway } = require(path.join(HERE, 'test/gateway/index.js'));
	const gateway = await startGateway();
	try {
		for (const format of ['chat', 'messages']) {
			for (const mode of ['plain', 'stream']) process.stdout.write(`${JSON.stringify(await traceOne(format, mode, gateway.baseUrl))}\n`);
		}
	} finally {
		await gateway.close();
	}
}

main().catch((error) => {
	process.stderr.write(`${error.stack ?? error}\n`);
	process.exit(1);
});
