// Types of testing.js.
export const TEST_KEY: string;
export interface GatewayClient {
	get(path: string, init?: RequestInit & { headers?: Record<string, string> }): Promise<Response>;
	post(path: string, body: unknown, init?: RequestInit & { headers?: Record<string, string> }): Promise<Response>;
}
export function gatewayClient(baseUrl: string, key?: string | null): GatewayClient;
export function mp4TopLevelBoxes(buffer: Buffer): Array<{ type: string; size: number }>;
