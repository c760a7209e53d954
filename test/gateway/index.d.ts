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
	/**
	 * `'default'` (today's answers) or `'newapi'`: answer as new-api does where the interface
	 * document is silent (its error bodies, task states and record, web page for unserved paths,
	 * balance and status routes). See README.md, "The new-api mode".
	 */
	flavor?: GatewayFlavor;
	/** new-api mode: quota units each key is granted (default 25,000,000 = 50 USD at the default rate). */
	keyQuota?: number;
	/** new-api mode: quota units per unit of money, as /api/status reports it (default 500,000). */
	quotaPerUnit?: number;
	/** new-api mode: how the site shows quota (default `'USD'`); `'TOKENS'` means raw units. */
	quotaDisplayType?: QuotaDisplayType;
	/** new-api mode: CNY per USD for the `'CNY'` display (default 7.3). */
	usdExchangeRate?: number;
	/** new-api mode: serve `GET /api/usage/token/` (default true); false answers as one-api does (404), leaving only the dashboard pair. */
	usageTokenRoute?: boolean;
	/**
	 * new-api mode: new-api's CRITICAL_RATE_LIMIT on `GET /api/usage/token/`: at most this many
	 * requests per 20 minutes, then a bare 429 (new-api's default is 20; 0, the default here, is off).
	 */
	criticalRateLimit?: number;
}

export type GatewayFlavor = 'default' | 'newapi';
export type QuotaDisplayType = 'USD' | 'CNY' | 'TOKENS' | 'CUSTOM';

/** The options `setOptions` (and `POST /__control/options`) can change on a running gateway. */
export type GatewaySettableOptions = Omit<GatewayOptions, 'port' | 'filePort' | 'host'>;

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
	/** An image edit: the form as the gateway read it (its text fields, and each file by its part, name, type, size and SHA-256). */
	form?: EditForm;
}

export interface EditForm {
	fields: Record<string, string | number>;
	files: Array<{ name: string; fileName: string; contentType: string; size: number; sha256: string }>;
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
	setOptions(partial: GatewaySettableOptions): void;
	close(): Promise<void>;
}

export function startGateway(options?: GatewayOptions): Promise<Gateway>;
