// Types of testing.js.
import type { Gateway, GatewayOptions } from './index';

export const TEST_KEY: string;
export interface GatewayClient {
	get(path: string, init?: RequestInit & { headers?: Record<string, string> }): Promise<Response>;
	post(path: string, body: unknown, init?: RequestInit & { headers?: Record<string, string> }): Promise<Response>;
}
export function gatewayClient(baseUrl: string, key?: string | null): GatewayClient;
export function mp4TopLevelBoxes(buffer: Buffer): Array<{ type: string; size: number }>;
/** Starts a gateway for the test file (jest hooks); fields are set once the tests run. */
export function useGateway(options?: GatewayOptions): { gateway: Gateway; api: GatewayClient };
