/** The GatewayError a call fails with: the test fails when the call succeeds or fails otherwise. */
import { GatewayError } from '../../nodes/shared/failures/errors';

export async function failureOf(call: Promise<unknown>): Promise<GatewayError> {
	const error = await call.then(
		() => undefined,
		(reason: unknown) => reason,
	);
	if (!(error instanceof GatewayError)) throw new Error(`expected a GatewayError, got ${String(error)}`);
	return error;
}
