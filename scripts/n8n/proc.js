// Child processes for the n8n scripts: output to a log file (n8n and npm print a lot), a progress
// line every `tickMs` so a long step is never silent, and the log's tail in errors.
'use strict';

const fs = require('node:fs');
const { spawn } = require('node:child_process');

function tail(file, lines = 40) {
	try {
		return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
	} catch {
		return '';
	}
}

/**
 * Resolves with { code, signal, ms, logFile } however the process ends.
 * onTick(seconds): called every tickMs. deadlineMs: SIGKILL after that long. killWhen(): checked
 * every tick; once true, the process gets 15 s to exit on its own before SIGKILL.
 */
function spawnLogged(cmd, args, { cwd, env, logFile, tickMs = 15000, onTick, deadlineMs, killWhen, log = () => {} }) {
	return new Promise((resolve, reject) => {
		const started = Date.now();
		const out = fs.openSync(logFile, 'a');
		fs.writeSync(out, `\n$ ${cmd} ${args.join(' ')}\n`);
		const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', out, out] });
		let lingerTimer;
		const deadline =
			deadlineMs &&
			setTimeout(() => {
				log(`${args[0] || cmd} still running after ${deadlineMs / 1000} s: killing it`);
				child.kill('SIGKILL');
			}, deadlineMs);
		const ticker = setInterval(() => {
			if (onTick) onTick(Math.round((Date.now() - started) / 1000));
			if (killWhen && !lingerTimer && killWhen()) lingerTimer = setTimeout(() => child.kill('SIGKILL'), 15000);
		}, tickMs);
		const stop = () => {
			clearInterval(ticker);
			clearTimeout(lingerTimer);
			clearTimeout(deadline);
			fs.closeSync(out);
		};
		child.on('error', (err) => {
			stop();
			reject(err);
		});
		child.on('exit', (code, signal) => {
			stop();
			resolve({ code, signal, ms: Date.now() - started, logFile });
		});
	});
}

/** An Error for a failed step, with the end of its log. */
function stepFailed(what, { code, signal, logFile }, lines = 40) {
	return new Error(`${what} failed (${signal || code})\n--- last lines of ${logFile} ---\n${tail(logFile, lines)}`);
}

/** A step of an install: resolves with its duration in ms, fails with the end of the log, says every 15 s that it is still busy. */
async function runStep(cmd, args, { cwd, env, logFile, step, log }) {
	const res = await spawnLogged(cmd, args, { cwd, env, logFile, onTick: (s) => log(`${step}… ${s} s`) });
	if (res.code !== 0) throw stepFailed(`${cmd} ${args.join(' ')}`, res);
	return res.ms;
}

module.exports = { spawnLogged, stepFailed, tail, runStep };
