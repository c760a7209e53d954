// Folders in the machine's cache that an install fills (an n8n runtime, a shared add-on build).
// Promises: one installer at a time per folder, across processes (a dead holder's lock is taken
// over); a half-done folder is thrown away only when this project's scripts made it.
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const LOCK_STALE_MS = 30 * 60 * 1000;

/** <XDG_CACHE_HOME or ~/.cache>/n8n-nodes-model-gateway: everything the scripts install lives here. */
function cacheRoot() {
	const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
	return path.join(cache, 'n8n-nodes-model-gateway');
}

function sleep(ms) {
	return new Promise((r) => setTimeout(r, ms));
}

function pidAlive(pid) {
	try {
		process.kill(pid, 0);
		return true;
	} catch (e) {
		return e.code === 'EPERM';
	}
}

/** Runs `fn` holding `<dir>.lock` (the test suite and `npm run demo` may start together). */
async function withLock(dir, log, fn) {
	const lock = `${dir}.lock`;
	fs.mkdirSync(path.dirname(lock), { recursive: true });
	let waitedSince = 0;
	let lastSaid = 0;
	for (;;) {
		try {
			fs.mkdirSync(lock);
			fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
			break;
		} catch (e) {
			if (e.code !== 'EEXIST') throw e;
			let pid = 0;
			try {
				pid = Number(fs.readFileSync(path.join(lock, 'pid'), 'utf8'));
			} catch {
				// the holder has not written its pid yet
			}
			const age = Date.now() - fs.statSync(lock).mtimeMs;
			if ((pid && !pidAlive(pid)) || age > LOCK_STALE_MS) {
				fs.rmSync(lock, { recursive: true, force: true });
				continue;
			}
			if (!waitedSince || Date.now() - lastSaid > 15000) {
				waitedSince ||= Date.now();
				lastSaid = Date.now();
				log(`waiting for another install into ${dir} (pid ${pid || '?'})… ${Math.round((lastSaid - waitedSince) / 1000)} s`);
			}
			await sleep(1000);
		}
	}
	try {
		return await fn();
	} finally {
		fs.rmSync(lock, { recursive: true, force: true });
	}
}

/** Empties `dir` for a fresh install, but only a folder whose package.json is named `owner` (or an empty one). */
function resetDir(dir, owner) {
	if (fs.existsSync(dir)) {
		const entries = fs.readdirSync(dir);
		let ours = false;
		try {
			ours = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).name === owner;
		} catch {
			// no package.json: ours only if empty
		}
		if (entries.length && !ours) {
			throw new Error(`${dir} is not empty and was not made by this project's scripts; refusing to delete it`);
		}
		fs.rmSync(dir, { recursive: true, force: true });
	}
	fs.mkdirSync(dir, { recursive: true });
}

/** The JSON in `file`, or null when it is missing or unreadable. */
function readJson(file) {
	try {
		return JSON.parse(fs.readFileSync(file, 'utf8'));
	} catch {
		return null;
	}
}

module.exports = { cacheRoot, withLock, resetDir, readJson };
