// The package's errors: one base class with a stable `code`, small subclasses for each family.

/** Every stable error code the package produces: those of its errors, and every `error` of its HTTP answers. */
export type WebhookErrorCode =
  | VerificationErrorCode
  | AnswerOnlyCode
  | 'invalid_payload'
  | 'queue_full'
  | 'store_unavailable'
  | 'queue_unavailable'
  | 'shutting_down'
  | 'handler_failed'
  | 'handler_timeout'
  | 'lease_lost'
  | 'raw_body_unavailable'
  | 'not_configured'
  | 'payload_too_large'
  | 'body_timeout'
  | 'invalid_options';

/**
 * Codes only an HTTP answer carries, never a thrown error: a copy still in flight (409), a method other than POST (405),
 * and a failure of the package's own (500).
 */
type AnswerOnlyCode = 'in_progress' | 'method_not_allowed' | 'internal_error';

/** Why a delivery's signature was refused (spec "Signature"). */
export type VerificationErrorCode =
  | 'missing_signature'
  | 'malformed_signature'
  | 'timestamp_out_of_tolerance'
  | 'signature_mismatch';

/**
 * Base class of every error this package throws; `code` is stable, the message is for people.
 * @example
 * if (error instanceof WebhookError && error.code === 'signature_mismatch') { ... }
 */
export class WebhookError extends Error {
  readonly code: WebhookErrorCode;

  constructor(code: WebhookErrorCode, message: string, options?: ErrorOptions) {
    super(`workforce-webhooks: ${message}`, options);
    this.name = 'WebhookError';
    this.code = code;
  }
}

/**
 * Thrown by `verifySignature` when a delivery cannot be trusted.
 * @example
 * try { await verifySignature({ payload, header, secret }); } catch (e) { if (e instanceof WebhookVerificationError) e.code; }
 */
export class WebhookVerificationError extends WebhookError {
  declare readonly code: VerificationErrorCode;

  constructor(code: VerificationErrorCode, message: string) {
    super(code, message);
    this.name = 'WebhookVerificationError';
  }
}

/**
 * Thrown when a verified body is not a Workforce Service event envelope.
 * @example
 * parseEvent(bytes) // throws InvalidPayloadError on `{"id":1}`
 */
export class InvalidPayloadError extends WebhookError {
  constructor(message: string, options?: ErrorOptions) {
    super('invalid_payload', message, options);
    this.name = 'InvalidPayloadError';
  }
}

/**
 * A handler attempt that ran past `handlerTimeoutMs`; its `ctx.signal` was aborted with this reason.
 * @example
 * if (ctx.signal.reason instanceof HandlerTimeoutError) return;
 */
export class HandlerTimeoutError extends WebhookError {
  constructor(timeoutMs: number) {
    super('handler_timeout', `handler attempt ran past ${timeoutMs} ms and was abandoned`);
    this.name = 'HandlerTimeoutError';
  }
}

/**
 * Options that cannot work, reported at construction rather than on the first delivery.
 * @example
 * createReceiver({ secret: '' }) // throws ConfigurationError
 */
export class ConfigurationError extends WebhookError {
  constructor(message: string) {
    super('invalid_options', message);
    this.name = 'ConfigurationError';
  }
}
