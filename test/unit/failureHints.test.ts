/**
 * Each fact of a failure is written once, where it is classified (errors.ts): whether the gateway
 * may have acted (the attempt's one rule, AttemptSignal.mayHaveActed; a refusal did nothing), and
 * the one hint, composed from the attempt's facts and never edited afterwards.
 */
import { cancelledError, deadlineError, expiredLinkError, failureOf, httpError, networkError } from '../../nodes/shared/failures/errors';
import type { SentRequest, Upload } from '../../nodes/shared/failures/errors';
import { AttemptSignal } from '../../nodes/shared/wire/attempt';

const MAY_HAVE = 'The request may have gone through even so.';
const NOT_SENT_AGAIN = 'The request may have gone through even so: it was not sent again, so as not to pay twice.';
const PROXY = 'A proxy in front of the gateway answered instead of the gateway; this usually passes. Try again in a few minutes.';

/** A request with a body and its attempt (the real rule), its streamed body where `upload` says. */
function sent(upload: Upload = 'sent', options: { paid?: boolean; sentBody?: boolean } = {}): SentRequest {
	const attempt = new AttemptSignal(60_000);
	attempt.upload = upload;
	return { sentBody: options.sentBody ?? true, paid: options.paid ?? false, attempt };
}

describe('an error status: its hint composed where it is classified', () => {
	it('a 502 on a request with a body may have gone through, then says what the kind says', () => {
		const error = httpError('The chat request', 502, '', 'text/html', {}, undefined, sent());
		expect(error.mayHaveActed).toBe(true);
		expect(error.hint).toBe(`${MAY_HAVE} ${PROXY}`);
	});

	it('a paid request that may have acted says it was not sent again, once', () => {
		const error = httpError('Generating the image', 504, '', 'text/html', {}, undefined, sent('sent', { paid: true }));
		expect(error.hint).toBe(`${NOT_SENT_AGAIN} ${PROXY}`);
		expect(error.hint?.split('may have gone through')).toHaveLength(2);
	});

	it('a GET that failed with a 502 may have acted, but has no work to say it about', () => {
		const error = httpError('Listing the models', 502, '', 'text/html', {}, undefined, sent('sent', { sentBody: false }));
		expect(error.hint).toBe(PROXY);
	});

	it('a 5xx that came before the body was sent whole: the gateway did not act, and the hint says why', () => {
		const error = httpError('Submitting the video task', 502, '', 'text/html', {}, undefined, sent('answeredEarly', { paid: true }));
		expect(error.mayHaveActed).toBe(false);
		expect(error.hint).toBe('The gateway answered before it had the whole request, so it did not act on it.');
	});

	it('a refusal did nothing, whatever its status: a 503 "no channel" keeps its own advice', () => {
		const body = '{"error":{"code":"model_not_found","message":"no available channel for model x"}}';
		const error = httpError('Submitting the video task', 503, body, 'application/json', {}, undefined, sent('sent', { paid: true }));
		expect(error.kind).toBe('unknown_model');
		expect(error.mayHaveActed).toBe(false);
		expect(error.hint).toBe('Pick a model from the list, or check the model id for typos.');
	});

	it('a refusal that came early says what the refusal says, not how the upload ended', () => {
		const error = httpError('The chat request', 500, '{"error":{"message":"invalid token"}}', 'application/json', {}, undefined, sent('answeredEarly'));
		expect(error.kind).toBe('auth');
		expect(error.hint).toBe('Check the API Key of the Model Gateway credential.');
	});

	it('without the attempt`s facts (an error body in a 200), nothing is said about acting', () => {
		const error = httpError('X', 500, '{"error":{"message":"boom"}}', 'application/json');
		expect(error.mayHaveActed).toBe(false);
		expect(error.hint).toMatch(/^The gateway says the request failed on its side/);
	});
});

describe('no answer: the network or the deadline, with what the upload says', () => {
	it('a body this side cut before its end was not acted on, whatever the connection said', () => {
		const error = networkError('Submitting the video task', { code: 'ECONNRESET' }, 'gw.example', {}, sent('cutHere', { paid: true }));
		expect(error.mayHaveActed).toBe(false);
		expect(error.hint).toBe('The gateway did not get the whole request (it was cut before its end), so it did not act on it.');
	});

	it('a connection the gateway closed mid-body may have followed an answer: not sent again, and why', () => {
		const error = networkError('Submitting the video task', { code: 'EPIPE' }, 'gw.example', {}, sent('cutThere', { paid: true }));
		expect(error.mayHaveActed).toBe(true);
		expect(error.hint).toMatch(new RegExp(`^${NOT_SENT_AGAIN.replace(/[.:]/g, '\\$&')} The gateway closed the connection before it had read the whole request`));
	});

	it('a refused connection never reached the gateway: its advice, and nothing about acting', () => {
		const error = networkError('The chat request', { code: 'ECONNREFUSED' }, 'gw.example:8080', {}, sent());
		expect(error.mayHaveActed).toBe(false);
		expect(error.hint).toBe('Nothing answers at gw.example:8080. Check the address and that the server is running.');
	});

	it('a dropped answer to a GET did nothing to say', () => {
		const error = networkError('Listing the models', { code: 'ECONNRESET' }, 'gw.example', {}, sent('sent', { sentBody: false }));
		expect(error.mayHaveActed).toBe(false);
		expect(error.hint).toBeUndefined();
	});

	it('an answer that came and broke off: its reader says what to do, and whether the gateway acted is no question', () => {
		const stream = 'The partial answer was discarded. Try again; if it keeps happening, turn off Stream.';
		expect(networkError('The chat request', { code: 'ECONNRESET' }, 'gw.example', {}, sent(), stream).hint).toBe(stream);
		expect(deadlineError('The chat request failed: no complete answer within 30 s', sent(), {}, stream).hint).toBe(stream);
		expect(cancelledError('The chat request was cancelled', true, { sentBody: true, paid: false }).hint).toBeUndefined();
		expect(cancelledError('Generating the image was cancelled', true, { sentBody: true, paid: true }).hint).toBe(NOT_SENT_AGAIN);
	});

	it('the deadline: a body sent whole may have gone through; one cut here was not acted on', () => {
		expect(deadlineError('X failed: no complete answer within 30 s', sent()).hint).toBe(MAY_HAVE);
		const cut = deadlineError('X failed: no complete answer within 30 s', sent('cutHere'));
		expect([cut.kind, cut.mayHaveActed, cut.hint]).toEqual(['timeout', false, 'The gateway did not get the whole request (it was cut before its end), so it did not act on it.']);
	});
});

describe('a file link that has expired, and a failure this side decided', () => {
	it('says the link expired, quotes the storage service, and adds how to get a fresh link', () => {
		const body = '<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>';
		const error = expiredLinkError('Downloading the video of task t1', 'cdn.example', 403, body, 'Run the Download operation with task ID t1 to try again.', { fields: { task_id: 't1' } });
		expect(error.fullMessage).toBe('Downloading the video of task t1 failed: the link has expired or is gone (cdn.example answered HTTP 403): "Request has expired"');
		expect(error.hint).toBe('Links to generated files are temporary: download them soon after they are generated. Run the Download operation with task ID t1 to try again.');
		expect([error.kind, error.fields.task_id]).toEqual(['not_found', 't1']);
	});

	it('a rate limit this side decided carries the same advice as one the gateway sent', () => {
		expect(failureOf('rate_limit', { headline: 'X failed: no turn' }).hint).toBe(httpError('X', 429, '', '').hint);
	});
});
