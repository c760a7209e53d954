// Types of the loopback gateway (index.js), for the TypeScript tests that start it.

export interface GatewayOptions {
	/** API origin port; 0 picks a free one. */
	port?: number;
	/** File host port; 0 picks a free one. */
	filePort?: number;
	host?: string;
	/** Delay before every API answer (not file downloads), in ms. */
	delayMs?: number;
	/** Answered status poll on which a video task finishes. */
	videoPollsToFinish?: number;
	/** Print one line per request to stderr. */
	log?: boolean;
	/** Also accept `x-api-key: sk-…` (without Authorization) on /v1/messages, as native-format servers do. */
	acceptXApiKey?: boolean;
}

export interface LoggedRequest {
	server: 'api' | 'files';
	method: string;
	path: string;
	query: Record<string, string>;
	/** Lower-cased names; the authorization value is kept so tests can assert on it. */
	headers: Record<string, string | string[] | undefined>;
	/** The exact body as text. */
	rawBody: string;
	time: number;
}

export type Fault =
	| '429'
	| `429-retry-after:${number}`
	| '502-html'
	| '503-html'
	| '504-html'
	| '500-json'
	| 'reset'
	| `slow:${number}`;

export interface Gateway {
	baseUrl: string;
	fileBaseUrl: string;
	port: number;
	filePort: number;
	requests: LoggedRequest[];
	/** The ids of the video tasks it created (and still keeps), oldest first. */
	taskIds(): string[];
	reset(): void;
	/** Returns how many faults are now queued for this prefix. */
	queueFaults(pathPrefix: string, faults: Fault[]): number;
	setOptions(partial: Pick<GatewayOptions, 'delayMs' | 'videoPollsToFinish' | 'log' | 'acceptXApiKey'>): void;
	close(): Promise<void>;
}

export function startGateway(options?: GatewayOptions): Promise<Gateway>;
