// Types of testing.js.
import type { Gateway, GatewayOptions } from './index';

export const TEST_KEY: string;
export interface GatewayClient {
	get(path: string, init?: RequestInit & { headers?: Record<string, string> }): Promise<Response>;
	post(path: string, body: unknown, init?: RequestInit & { headers?: Record<string, string> }): Promise<Response>;
}
export function gatewayClient(baseUrl: string, key?: string | null): GatewayClient;
export function mp4TopLevelBoxes(buffer: Buffer): Array<{ type: string; size: number }>;
/** Submits a video task (expects a 200) and returns its task id. */
export function submitVideoTask(api: GatewayClient, body: object): Promise<string>;
/** One status poll of a video task: expects a 200 `{code:'success', message:''}` answer and returns its record. */
export function pollVideoTask<T = Record<string, unknown>>(api: GatewayClient, taskId: string): Promise<T>;
/** `count` status polls of a video task, each as "<status> <progress>". */
export function videoTaskStates(api: GatewayClient, taskId: string, count: number): Promise<string[]>;
/** Starts a gateway for the test file (jest hooks); fields are set once the tests run. */
export function useGateway(options?: GatewayOptions): { gateway: Gateway; api: GatewayClient };
