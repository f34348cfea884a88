// The status table of DESIGN.md, in one place: every answer the receiver gives is built here.
import type { WebhookErrorCode } from './errors.js';

/** What the receiver answers; adapters write it back as is. */
export interface WebhookResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** JSON text. */
  readonly body: string;
  /**
   * Work this delivery started that may outlive the answer (memory queue, or an inline run past its
   * deadline). Serverless adapters hand it to the platform's keep-alive (`after()`, `waitUntil`). Never rejects.
   */
  readonly background?: Promise<void>;
}

/** An answer now, or once a store, queue or Web Crypto has answered. */
export type Answer = WebhookResponse | Promise<WebhookResponse>;

/** Seconds a sender is told to wait after a 409 or a 503. */
export const RETRY_AFTER_SECONDS = 5;

// Only what the sender reads. No `cache-control`: no cache answers a POST from a stored response (RFC 9111
// section 4), and one more header costs Hono a Headers object per answer.
const JSON_HEADERS = Object.freeze({ 'content-type': 'application/json; charset=utf-8' });
const RETRY_HEADERS = Object.freeze({ ...JSON_HEADERS, 'retry-after': String(RETRY_AFTER_SECONDS) });

// What an answer's body may say: `received` with its flags, or one stable code, so every `error` the receiver writes is
// a `WebhookErrorCode` a client can switch on.
type AnswerBody =
  | { readonly received: true; readonly [flag: string]: true }
  | { readonly error: WebhookErrorCode };

function answer(
  status: number,
  body: AnswerBody,
  headers: Readonly<Record<string, string>> = JSON_HEADERS,
): WebhookResponse {
  return Object.freeze({ status, headers, body: JSON.stringify(body) });
}

/** The 503 reasons: the sender should come back later. */
export type UnavailableReason = Extract<
  WebhookErrorCode,
  'queue_full' | 'store_unavailable' | 'queue_unavailable' | 'shutting_down'
>;

/** The 400 reasons: a bad, missing or stale signature, or a verified body that is not an event. */
export type BadRequestReason = Extract<
  WebhookErrorCode,
  | 'missing_signature'
  | 'malformed_signature'
  | 'timestamp_out_of_tolerance'
  | 'signature_mismatch'
  | 'invalid_payload'
>;

const badRequest = Object.fromEntries(
  (
    [
      'missing_signature',
      'malformed_signature',
      'timestamp_out_of_tolerance',
      'signature_mismatch',
      'invalid_payload',
    ] as const
  ).map((code) => [code, answer(400, { error: code })]),
) as Record<BadRequestReason, WebhookResponse>;

const unavailable = Object.fromEntries(
  (['queue_full', 'store_unavailable', 'queue_unavailable', 'shutting_down'] as const).map((code) => [
    code,
    answer(503, { error: code }, RETRY_HEADERS),
  ]),
) as Record<UnavailableReason, WebhookResponse>;

/**
 * Every answer of the status table (DESIGN.md "Answers"). Never 3xx (spec rule 5: a redirect is a failed
 * delivery), never a handler's message, stack or secret.
 * @example
 * return answers.accepted;
 */
export const answers: {
  readonly accepted: WebhookResponse;
  readonly processed: WebhookResponse;
  readonly duplicate: WebhookResponse;
  readonly inProgress: WebhookResponse;
  readonly ignored: WebhookResponse;
  readonly stale: WebhookResponse;
  readonly badRequest: Readonly<Record<BadRequestReason, WebhookResponse>>;
  readonly payloadTooLarge: WebhookResponse;
  readonly bodyTimeout: WebhookResponse;
  readonly methodNotAllowed: WebhookResponse;
  readonly unavailable: Readonly<Record<UnavailableReason, WebhookResponse>>;
  readonly handlerFailed: WebhookResponse;
  readonly rawBodyUnavailable: WebhookResponse;
  readonly notConfigured: WebhookResponse;
  readonly internalError: WebhookResponse;
} = Object.freeze({
  accepted: answer(202, { received: true }),
  processed: answer(200, { received: true }),
  duplicate: answer(200, { received: true, duplicate: true }),
  inProgress: answer(409, { error: 'in_progress' }, RETRY_HEADERS),
  ignored: answer(200, { received: true, ignored: true }),
  // Ordering on: a newer event of the same record was already handled (spec rule 4).
  stale: answer(200, { received: true, stale: true }),
  badRequest,
  payloadTooLarge: answer(413, { error: 'payload_too_large' }),
  // The rest of a late body is not waited for: the connection is closed after the answer.
  bodyTimeout: answer(408, { error: 'body_timeout' }, { ...JSON_HEADERS, connection: 'close' }),
  methodNotAllowed: answer(405, { error: 'method_not_allowed' }, { ...JSON_HEADERS, allow: 'POST' }),
  unavailable,
  handlerFailed: answer(500, { error: 'handler_failed' }),
  rawBodyUnavailable: answer(500, { error: 'raw_body_unavailable' }),
  // No secret yet (a build without it, an unset variable): the sender retries a 500 until it is set.
  notConfigured: answer(500, { error: 'not_configured' }),
  // Not in the table: a bug of ours. The sender retries a 500, so nothing is lost while it is fixed.
  internalError: answer(500, { error: 'internal_error' }),
});

/**
 * The same answer with the background work attached (the shared frozen answer is never mutated).
 * @example
 * return withBackground(answers.accepted, done);
 */
export function withBackground(
  response: WebhookResponse,
  background: Promise<void> | undefined,
): WebhookResponse {
  return background === undefined ? response : { ...response, background };
}

/**
 * The answer as a Web `Response`, for `receiver.fetch` and the adapters that answer with one.
 * @example
 * return toWebResponse(answers.internalError);
 */
export function toWebResponse({ status, headers, body }: WebhookResponse): Response {
  return new Response(body, { status, headers });
}

/**
 * The queued 202 with its background work made on first read of `background`: the done mark (when the store
 * answers with a promise), then the queue's `settled`. Adapters that never read it (a long-running server)
 * never pay for the promises.
 * @example
 * return acceptedWithWork(claims.complete(id, token), enqueued);
 */
export function acceptedWithWork(
  marked: Promise<void> | undefined,
  queued: { readonly settled?: Promise<void> },
): WebhookResponse {
  return new AcceptedWithWork(marked, queued);
}

class AcceptedWithWork implements WebhookResponse {
  readonly status: number = answers.accepted.status;
  readonly headers: Readonly<Record<string, string>> = answers.accepted.headers;
  readonly body: string = answers.accepted.body;
  #marked: Promise<void> | undefined;
  #queued: { readonly settled?: Promise<void> } | undefined;
  #background: Promise<void> | undefined;

  constructor(marked: Promise<void> | undefined, queued: { readonly settled?: Promise<void> }) {
    this.#marked = marked;
    this.#queued = queued;
  }

  get background(): Promise<void> | undefined {
    const queued = this.#queued;
    if (queued !== undefined) {
      const marked = this.#marked;
      const settled = queued.settled;
      // `marked` never rejects, so chaining waits for both without Promise.all's array and extra promise.
      this.#background =
        marked === undefined ? settled : settled === undefined ? marked : marked.then(() => settled);
      this.#queued = undefined;
      this.#marked = undefined;
    }
    return this.#background;
  }
}
