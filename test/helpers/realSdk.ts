/**
 * n8n's real AI node SDK, from the n8n 2.41.1 the e2e suite installs into its cache (tests of it are
 * skipped when it is not installed). Loading it and LangChain takes many seconds on a busy machine:
 * `useRealSdk` loads it once, in a `beforeAll` with a time limit of its own, so the tests' limits
 * measure the tests, not the first load.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import type { AiNodeSdk } from '../../nodes/GatewayChatModel/sdk';

const RUNTIME_MODULES = path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'n8n-nodes-model-gateway', 'n8n-2.41.1', 'node_modules');
const SDK_DIR = path.join(RUNTIME_MODULES, '@n8n', 'ai-node-sdk');
const SDK_LOAD_LIMIT_MS = 180_000;

export const describeWithSdk = fs.existsSync(SDK_DIR) ? describe : describe.skip;

let loaded: AiNodeSdk | undefined;

/** Call inside a `describeWithSdk` block: returns the loader its tests pass to the Chat Model. */
export function useRealSdk(): () => Promise<AiNodeSdk> {
	beforeAll(() => {
		loaded ??= require(SDK_DIR) as AiNodeSdk;
	}, SDK_LOAD_LIMIT_MS);
	return async () => loaded ?? (require(SDK_DIR) as AiNodeSdk);
}
