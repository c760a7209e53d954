/**
 * What a failed attempt of one call is, classified once (errors.ts composes each hint there, given
 * the attempt's facts): an error status, a failure with no answer (the deadline, the network), a
 * Stop or the end of the run, and a file link that has expired.
 */
import { GatewayError, cancelledError, deadlineError, expiredLinkError, httpError, isAbortError, isExpiredLinkStatus, networkError } from '../failures/errors';
import type { GatewayErrorInit, PaidFacts, SentRequest } from '../failures/errors';
import { hostOf, isSameOrigin } from '../credential/url';
import { withoutSplitToken } from '../failures/errorBody';
import { readBody } from './answer';
import { headerValue } from './attempt';
import type { AttemptSignal, RawResponse } from './attempt';
import { largestField } from './jsonBody';
import { MultipartForm } from './multipart';
import { parseRetryAfter, secondsText } from './retry';
import type { GatewayCall } from './transport';

/** What of a call its failures need. */
type FailingCall = Pick<GatewayCall, 'method' | 'body' | 'itemIndex' | 'what' | 'errorFields' | 'ifActed'>;

const ERROR_BODY_LIMIT = 64 * 1024;

/** An answer that went silent after it had begun: the gateway was at work on it, so it may bill it. */
const ANSWER_BEGUN = 'The gateway had begun the answer, so it may bill it even so; it was not sent again. What had arrived was discarded. A model that rightly thinks this long between words needs a longer limit.';

/** The fields an error of a call carries: its item and the fields it keeps (e.g. a task id). */
export function callExtra(call: Pick<FailingCall, 'itemIndex' | 'errorFields'>, more: Partial<GatewayErrorInit> = {}): Partial<GatewayErrorInit> {
	return { itemIndex: call.itemIndex, fields: { ...(call.errorFields ?? {}) }, ...more };
}

export interface FailureScope {
	/** Where the call went, and the gateway's own origin. */
	url: string;
	baseUrl: string;
	/** Paid or state-changing: never sent again once it may have acted. */
	paid: boolean;
	/** A file link (a download): a 403, 404 or 410 says it has expired; `nextStep` says how to get a fresh one. */
	fileLink?: { nextStep?: string };
	/** The run's scope closed (another item failed the run) rather than a Stop. */
	runEnded: () => boolean;
}

/** The failures of one call, each classified once. */
export class CallFailures {
	readonly what: string;
	private readonly paidFacts: PaidFacts;

	constructor(
		private readonly call: FailingCall,
		private readonly scope: FailureScope,
	) {
		this.what = call.what ?? 'The gateway request';
		this.paidFacts = { sentBody: call.body !== undefined && (call.method ?? 'POST') !== 'GET', paid: scope.paid, ifActed: call.ifActed };
	}

	extra(more: Partial<GatewayErrorInit> = {}): Partial<GatewayErrorInit> {
		return callExtra(this.call, more);
	}

	/** What the classifier is told of the request and this attempt. */
	private sent(attempt: AttemptSignal): SentRequest {
		return { ...this.paidFacts, attempt };
	}

	/** An error status: its body read (briefly) and classified. */
	async status(response: RawResponse, attempt: AttemptSignal): Promise<GatewayError> {
		const status = response.statusCode;
		// What came of the body is quoted, also when it broke off or went silent: the status has said it.
		const text = (await readBody(response.body, { quote: true, limit: ERROR_BODY_LIMIT, alive: () => attempt.alive() })).toString('utf8');
		const cut = !response.body.readableEnded;
		// Stopped while the body arrived: the status has already said whether the gateway acted.
		if (attempt.cancelled) return this.cancelled(this.call.body !== undefined && attempt.mayHaveActed(true, status));
		const { url, baseUrl, fileLink } = this.scope;
		if ((fileLink !== undefined || !isSameOrigin(url, baseUrl)) && isExpiredLinkStatus(status)) {
			return expiredLinkError(this.what, hostOf(url), status, cut ? withoutSplitToken(text) : text, fileLink?.nextStep, this.extra());
		}
		const retryAfterMs = parseRetryAfter(response.headers?.['retry-after'], Date.now());
		const contentType = headerValue(response.headers, 'content-type');
		const largest = this.call.body instanceof MultipartForm ? this.call.body.largestPart : largestField(this.call.body);
		return httpError(this.what, status, text, contentType, this.extra({ status, retryAfterMs }), largest, this.sent(attempt), cut);
	}

	/**
	 * A failure while sending or reading: a Stop, the idle limit, the deadline, or the network.
	 * `readerAdvice`: what the reader of an answer that broke off says to do (a download: how to try
	 * again); a Stop needs none. `arrived`: what the reader had of the answer ("after 1,234
	 * characters of the answer (3 events)"), for an answer that went silent.
	 */
	noAnswer(error: unknown, attempt: AttemptSignal, what = this.what, readerAdvice?: string, arrived?: string): GatewayError {
		if (error instanceof GatewayError) return error;
		if (attempt.cancelled) return this.cancelled(attempt.mayHaveActed(this.call.body !== undefined));
		if (attempt.idled && attempt.idle) {
			const headline = `${what} failed: the gateway sent nothing for ${secondsText(attempt.idle.ms)} s ${arrived ?? 'after the request was sent'}, the limit set by ${attempt.idle.name}`;
			return deadlineError(headline, this.sent(attempt), this.extra(), arrived === undefined ? undefined : ANSWER_BEGUN);
		}
		if (attempt.timedOut || isAbortError(error)) {
			const headline = attempt.cutBy
				? `${what} failed: no complete answer within the ${secondsText(attempt.deadlineMs)} s left of ${attempt.cutBy}`
				: `${what} failed: no complete answer within ${secondsText(attempt.reportedMs)} s`;
			return deadlineError(headline, this.sent(attempt), this.extra(), readerAdvice);
		}
		return networkError(what, error, hostOf(this.scope.url), this.extra(), this.sent(attempt), readerAdvice);
	}

	/**
	 * A Stop, or the end of the run. `mayHaveActed`: a request was in flight (or an earlier attempt
	 * may have acted); one stopped while it waited for a retry after a 429 was refused, nothing more.
	 */
	cancelled(mayHaveActed: boolean): GatewayError {
		const headline = this.scope.runEnded() ? `${this.what} was stopped: the run had ended` : `${this.what} was cancelled`;
		return cancelledError(headline, mayHaveActed, this.paidFacts, this.extra());
	}
}
