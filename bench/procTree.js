// Memory of a process tree over time, from Linux's /proc: every `intervalMs` the descendants of a
// root pid are listed and each one's resident set (VmRSS) is read, giving a timeline from which
// the peak within any time window (e.g. while one node ran) can be taken. The kernel's own
// high-water mark (VmHWM, the peak since the process started) is kept too.
'use strict';

const fs = require('node:fs');

const KIB = 1024;

function readStatus(pid) {
	try {
		const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
		const field = (name) => {
			const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text);
			return match ? Number(match[1]) * KIB : 0;
		};
		return { rss: field('VmRSS'), hwm: field('VmHWM') };
	} catch {
		return undefined; // the process has just exited
	}
}

function readCmdline(pid) {
	try {
		return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
	} catch {
		return '';
	}
}

/** pid → parent pid for every process now running. */
function parentsOfAll() {
	const parents = new Map();
	for (const entry of fs.readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			// The command name (2nd field) may hold spaces and parentheses: split after the last ')'.
			const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
			const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
			parents.set(Number(entry), Number(rest[1]));
		} catch {
			// gone meanwhile
		}
	}
	return parents;
}

function descendantsOf(rootPid, parents) {
	const children = new Map();
	for (const [pid, parent] of parents) {
		if (!children.has(parent)) children.set(parent, []);
		children.get(parent).push(pid);
	}
	const found = [];
	const queue = [...(children.get(rootPid) || [])];
	while (queue.length) {
		const pid = queue.shift();
		found.push(pid);
		queue.push(...(children.get(pid) || []));
	}
	return found;
}

/**
 * Samples the processes below `rootPid` (default: this process) whose command line matches
 * `match` (e.g. /execute-batch/), together with their own descendants, until stop() is called;
 * `onSample({ matched, tree, pids })` sees every sample (e.g. to stop a run that grows too big).
 * stop() returns { peakTreeRss, processes: [{ pid, cmd, matched, hwm, peakRss }], samples, timeline }:
 * `matched` marks the processes whose command line matched, `timeline` is [{ t, matched, tree }]
 * (epoch ms; RSS bytes of the matched processes and of the whole tree).
 */
function sampleProcessTree({ rootPid = process.pid, match, intervalMs = 50, onSample } = {}) {
	const seen = new Map();
	const timeline = [];
	let peakTreeRss = 0;
	let samples = 0;
	const tick = () => {
		const parents = parentsOfAll();
		const below = descendantsOf(rootPid, parents);
		const roots = below.filter((pid) => !match || match.test(readCmdline(pid)));
		const tree = new Set(roots);
		for (const pid of roots) for (const child of descendantsOf(pid, parents)) tree.add(child);
		let treeRss = 0;
		let matchedRss = 0;
		for (const pid of tree) {
			const status = readStatus(pid);
			if (!status) continue;
			const known = seen.get(pid) || { pid, cmd: readCmdline(pid).slice(0, 300), matched: roots.includes(pid), hwm: 0, peakRss: 0 };
			known.hwm = Math.max(known.hwm, status.hwm);
			known.peakRss = Math.max(known.peakRss, status.rss);
			seen.set(pid, known);
			treeRss += status.rss;
			if (known.matched) matchedRss += status.rss;
		}
		if (tree.size) {
			samples++;
			timeline.push({ t: Date.now(), matched: matchedRss, tree: treeRss });
			onSample?.({ matched: matchedRss, tree: treeRss, pids: roots });
		}
		peakTreeRss = Math.max(peakTreeRss, treeRss);
	};
	const timer = setInterval(tick, intervalMs);
	return {
		stop() {
			clearInterval(timer);
			return { peakTreeRss, processes: [...seen.values()], samples, timeline };
		},
	};
}

/** The largest RSS (of `which`: 'matched' or 'tree') sampled within [from, to], and how many samples fell there. */
function peakWithin(timeline, from, to, which) {
	const inside = timeline.filter((sample) => sample.t >= from && sample.t <= to);
	return { peak: inside.reduce((max, sample) => Math.max(max, sample[which]), 0), samples: inside.length };
}

module.exports = { sampleProcessTree, peakWithin };
