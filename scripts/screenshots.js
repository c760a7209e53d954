#!/usr/bin/env node
// `npm run screenshots`: retakes docs/screenshots/*.png from the real n8n editor. Starts what
// `npm run dev` starts (own folder .n8n-screenshots/, so a running `npm run dev` is not touched),
// signs in with Debian's Chromium through playwright-core, and for each of our five nodes opens
// the first example workflow that uses it, runs the node ("Execute step") and photographs its
// panel: input, parameters and output. Then one example workflow's canvas after a full run.
// Every picture twice: in n8n's light theme (`<name>.png`) and its dark theme (`<name>-dark.png`).
//
// Every picture is checked before it is written: the node icon loaded, no error toast, nothing
// of n8n's "install this node" placeholder. Chromium is installed with apt-get when missing (root).
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { spawnLogged, stepFailed } = require('./n8n/proc');
const { REPO_ROOT } = require('./n8n/workflowSet');
const { startDevEnvironment } = require('./dev');

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
	'--headless',
	'--no-sandbox',
	'--disable-gpu',
	'--disable-quic',
	'--no-first-run',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
];
const OUT_DIR = path.join(REPO_ROOT, 'docs', 'screenshots');
const VIEWPORT = { width: 1280, height: 800 };
const PACKAGE_PREFIX = 'n8n-nodes-model-gateway.';

// One panel picture per node; `output` picks the output view where n8n's default is not the clearest.
const NODE_SHOTS = [
	{ type: 'gatewayImageGenerate', file: 'gateway-image-generate.png' },
	{ type: 'gatewayVideoGenerate', file: 'gateway-video-generate.png' },
	{ type: 'gatewayChat', file: 'gateway-chat.png', output: 'json' },
	{ type: 'gatewayMessages', file: 'gateway-messages.png', output: 'json' },
	{ type: 'gatewayMessages', file: 'gateway-messages-files-json.png', output: 'json', workflow: 'Invoice PDF' },
	{ type: 'gatewayPlantCreate', file: 'gateway-plant-create.png' },
];
// Canvas pictures: the first example workflow with this node, after running it whole; `panel`
// then also photographs that node's panel (a sub-node, such as a chat model, has no Execute step).
const CANVAS_SHOTS = [
	{ type: 'gatewayImageGenerate', file: 'workflow-image-daily-post.png' },
	{ type: 'gatewayChatModel', file: 'gateway-chat-model-agent.png', panel: 'gateway-chat-model.png' },
];

/** n8n's themes, as its editor stores the choice (localStorage `N8N_THEME`); the file name suffix of each. */
const THEMES = [
	{ name: 'light', suffix: '' },
	{ name: 'dark', suffix: '-dark' },
];
const themed = (file, theme) => file.replace(/\.png$/, `${theme.suffix}.png`);

const log = (msg) => process.stderr.write(`[screenshots] ${msg}\n`);

// Debian's chromium, installed with apt when missing (root only; otherwise the command to run).
async function ensureChromium() {
	if (fs.existsSync(CHROMIUM)) return CHROMIUM;
	const apt = '/usr/bin/apt-get';
	if (process.getuid?.() !== 0 || !fs.existsSync(apt)) {
		throw new Error(`${CHROMIUM} is missing: install it with \`sudo apt-get update && sudo apt-get install -y chromium\``);
	}
	const logFile = path.join(os.tmpdir(), 'mgw-chromium-install.log');
	const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
	for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'chromium']]) {
		const step = `apt-get ${args.join(' ')}`;
		log(`${step} (log: ${logFile})`);
		const res = await spawnLogged(apt, args, { env, logFile, onTick: (s) => log(`${step}… ${s} s`) });
		if (res.code !== 0) throw stepFailed(step, res);
	}
	if (!fs.existsSync(CHROMIUM)) throw new Error(`apt-get installed chromium but ${CHROMIUM} is still missing`);
	return CHROMIUM;
}

/** The first example workflow containing a node of `type` (and whose name contains `named`), and that node's name. */
function findNode(workflows, type, named = '') {
	for (const workflow of workflows.filter((w) => w.name.includes(named))) {
		const node = workflow.nodes.find((n) => n.type === PACKAGE_PREFIX + type);
		if (node) return { workflow, nodeName: node.name };
	}
	throw new Error(`no example workflow uses ${PACKAGE_PREFIX}${type}`);
}

const toasts = (page) => page.locator('.el-notification');

async function closeToasts(page) {
	for (const button of await page.locator('.el-notification .el-notification__closeBtn').all()) {
		await button.click().catch(() => {}); // it may have closed itself meanwhile
	}
	await page.waitForFunction(() => !document.querySelector('.el-notification'), null, { timeout: 10000 });
}

// Clicks `button` and waits for n8n's toast that says how the run ended; fails on anything else.
async function runAndWait(page, button, what, timeoutMs = 120000) {
	await closeToasts(page);
	await button.click();
	await toasts(page).first().waitFor({ timeout: timeoutMs });
	const texts = await toasts(page).allInnerTexts();
	if (!texts.every((text) => /executed successfully/i.test(text))) {
		throw new Error(`running ${what} did not succeed; n8n says: ${texts.join(' | ')}`);
	}
	await closeToasts(page);
}

// What must hold before a picture is kept: our icons drawn, no error or install placeholder.
async function checkPage(page, what) {
	const problems = await page.evaluate((prefix) => {
		const found = [];
		for (const node of document.querySelectorAll(`[data-test-id="canvas-node"][data-node-type^="${prefix}"]`)) {
			const img = node.querySelector('img');
			if (!img || !img.complete || img.naturalWidth === 0) found.push(`no icon drawn for ${node.dataset.nodeName}`);
		}
		const text = document.body.innerText;
		for (const phrase of ['Install this node', 'not currently installed', 'Unrecognized node type', 'Problem in node']) {
			if (text.includes(phrase)) found.push(`the page says "${phrase}"`);
		}
		for (const toast of document.querySelectorAll('.el-notification')) found.push(`toast: ${toast.innerText}`);
		return found;
	}, PACKAGE_PREFIX);
	if (problems.length) throw new Error(`${what}: ${problems.join('; ')}`);
}

async function shoot(page, file, what) {
	await page.mouse.move(VIEWPORT.width - 2, VIEWPORT.height / 2); // no hover buttons in the picture
	await page.waitForTimeout(500); // let transitions settle
	await checkPage(page, what);
	const target = path.join(OUT_DIR, file);
	await page.screenshot({ path: target });
	log(`${path.relative(REPO_ROOT, target)}: ${what} (${Math.round(fs.statSync(target).size / 1024)} KB)`);
}

async function signIn(page, url, owner) {
	await page.goto(`${url}/signin`);
	await page.fill('#emailOrLdapLoginId', owner.email);
	await page.fill('#password', owner.password);
	await page.click('[data-test-id="form-submit-button"]');
	await page.waitForURL((u) => !u.pathname.includes('signin'), { timeout: 30000 });
}

async function openWorkflow(page, url, workflow) {
	await page.goto(`${url}/workflow/${workflow.id}`);
	await page.locator('[data-test-id="canvas-node"]').first().waitFor({ timeout: 60000 });
	// Node icons are separate requests: wait until every one of ours is drawn.
	await page.waitForFunction(
		(prefix) =>
			[...document.querySelectorAll(`[data-test-id="canvas-node"][data-node-type^="${prefix}"] img`)].every(
				(img) => img.complete && img.naturalWidth > 0,
			),
		PACKAGE_PREFIX,
		{ timeout: 30000 },
	);
}

async function nodePanel(page, url, workflows, shot) {
	const { workflow, nodeName } = findNode(workflows, shot.type, shot.workflow);
	const what = `${nodeName} (${shot.type}) in "${workflow.name}"`;
	await openWorkflow(page, url, workflow);
	await page.locator(`[data-test-id="canvas-node"][data-node-name="${nodeName}"]`).dblclick();
	const ndv = page.locator('[data-test-id="ndv"]');
	await ndv.locator('[data-test-id="node-parameters"]').waitFor();
	// "Execute step" runs the nodes before it too, so the input and output panels fill.
	await runAndWait(page, ndv.locator('[data-test-id="node-execute-button"]').first(), what);
	const output = ndv.locator('[data-test-id="output-panel"]');
	await output.locator('[data-test-id="node-run-status-success"]').waitFor();
	if (shot.output) await output.locator(`[data-test-id="radio-button-${shot.output}"]`).click();
	await shoot(page, shot.file, what);
	await ndv.locator('[data-test-id="ndv-close-button"]').click();
}

async function canvas(page, url, workflows, shot) {
	const { workflow, nodeName } = findNode(workflows, shot.type);
	const what = `canvas of "${workflow.name}" after a run`;
	await openWorkflow(page, url, workflow);
	await runAndWait(page, page.locator('[data-test-id="execute-workflow-button"]'), `"${workflow.name}"`);
	await page.locator('[data-test-id="zoom-to-fit"]').click();
	await shoot(page, shot.file, what);
	if (!shot.panel) return;
	await page.locator(`[data-test-id="canvas-node"][data-node-name="${nodeName}"]`).dblclick();
	const ndv = page.locator('[data-test-id="ndv"]');
	await ndv.waitFor();
	await shoot(page, shot.panel, `${nodeName} (${shot.type}) after the run of "${workflow.name}"`);
	await ndv.locator('[data-test-id="ndv-close-button"]').click();
}

async function main() {
	const { chromium } = require('playwright-core');
	const executablePath = await ensureChromium();
	fs.mkdirSync(OUT_DIR, { recursive: true });
	const dev = await startDevEnvironment({ userFolder: path.join(REPO_ROOT, '.n8n-screenshots', 'user'), log });
	const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'mgw-chromium-'));
	let context;
	try {
		context = await chromium.launchPersistentContext(profile, {
			executablePath,
			headless: true,
			args: CHROMIUM_ARGS,
			viewport: VIEWPORT,
			deviceScaleFactor: 1,
		});
		const page = context.pages()[0] || (await context.newPage());
		page.setDefaultTimeout(30000);
		await signIn(page, dev.url, dev.owner);
		for (const theme of THEMES) {
			// The editor reads the theme when it starts: set it, then every page loads in it.
			await page.evaluate((name) => localStorage.setItem('N8N_THEME', name), theme.name);
			for (const shot of NODE_SHOTS) await nodePanel(page, dev.url, dev.workflows, { ...shot, file: themed(shot.file, theme) });
			for (const shot of CANVAS_SHOTS) {
				await canvas(page, dev.url, dev.workflows, { ...shot, file: themed(shot.file, theme), panel: shot.panel && themed(shot.panel, theme) });
			}
		}
	} finally {
		await context?.close();
		fs.rmSync(profile, { recursive: true, force: true });
		await dev.stop();
	}
	log(`done: ${(NODE_SHOTS.length + CANVAS_SHOTS.length + 1) * THEMES.length} pictures in ${path.relative(process.cwd(), OUT_DIR)}/`);
}

if (require.main === module) {
	main().catch((error) => {
		process.stderr.write(`[screenshots] failed: ${error.message || error}\n`);
		process.exit(1);
	});
}

module.exports = { ensureChromium };
