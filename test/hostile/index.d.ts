// Types of the hostile gateway (index.js), for the TypeScript tests that start it.

export interface HostileOptions {
	/** Interval of the one-space drips (drip-body, drip-status), ms. Default 5000. */
	dripIntervalMs?: number;
	/** Interval of the `: keep-alive` comments (keepalive-stream), ms. Default 10000. */
	keepAliveIntervalMs?: number;
	/** Status polls answered QUEUED / IN_PROGRESS before the terminal state. Default 2. */
	videoPollsToFinish?: number;
	/** One line per request on stderr. Default false. */
	log?: boolean;
}

/** gateway: the gateway host; sibling: files.gw.example.test (same port); other-port: the second port. */
export type HostileOrigin = 'gateway' | 'sibling' | 'other-port';

export interface HostileRequest {
	method: string;
	/** The request target as received, query included (redirect landings start with /landing/). */
	path: string;
	/** The Host header as received. */
	host: string;
	/** Lower-cased names, values as received (authorization included). */
	headers: Record<string, string | string[] | undefined>;
	/** The exact body as text ('' for none). */
	body: string;
	/** Scenario named by the body or the path (task id, /files/<scenario>/), or null. */
	scenario: string | null;
	/** Arrival time, ms since the epoch. */
	at: number;
	/** True once the client hung up before the answer ended. */
	aborted: boolean;
	origin: HostileOrigin;
	/** Status code sent, null if no headers were sent (yet). */
	status: number | null;
	/** True when the server destroyed the socket on purpose (acted-then-reset). */
	dropped: boolean;
}

export interface HostilePlant {
	/** The id's digits as sent. */
	id: string;
	name: string;
	tag?: string;
}

export interface HostileTask {
	id: string;
	scenario: string | null;
	model: string;
	/** Status polls answered so far. */
	polls: number;
	/** Authorization header of the submit. */
	authorization: string;
}

export interface HostileCounters {
	/** POST requests received on every origin. */
	posts: number;
	/** Image generations processed (normal answers, acted-then-* included). */
	imageGenerations: number;
	/** Video tasks created. */
	videoTasks: number;
	/** Plants stored. */
	plantsStored: number;
	chatCompletions: number;
	messages: number;
}

export interface HostileGateway {
	/** http://gw.example.test:PORT */
	baseUrl: string;
	/** http://files.gw.example.test:PORT (same server, other host name) */
	siblingUrl: string;
	/** http://gw.example.test:PORT2 */
	otherPortUrl: string;
	port: number;
	otherPort: number;
	/** Every request, oldest first; the same array for the server's lifetime. */
	requests: HostileRequest[];
	/** Stored plants by id digits. */
	plants: Map<string, HostilePlant>;
	/** Video tasks by task id. */
	tasks: Map<string, HostileTask>;
	counters: HostileCounters;
	/** Empties requests, plants, tasks and counters (in place). */
	reset(): void;
	/** How many logged requests match every given field (`path` compared without the query). */
	count(filter?: Partial<Pick<HostileRequest, 'method' | 'path' | 'scenario' | 'origin' | 'host' | 'status'>>): number;
	/** Requests to the sibling host or the other port that carried an Authorization header. */
	leakedAuthorization(): HostileRequest[];
	/** Closes both ports and every socket at once, never-ending answers included. */
	close(): Promise<void>;
}

export function startHostileGateway(options?: HostileOptions): Promise<HostileGateway>;

/** Absolute path of dns-preload.js, for NODE_OPTIONS=--require in child processes. */
export const DNS_PRELOAD: string;
export const GATEWAY_HOST: 'gw.example.test';
export const SIBLING_HOST: 'files.gw.example.test';
export const MOVED_ORIGIN: 'https://new.example.test';
