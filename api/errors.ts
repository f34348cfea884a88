// The read API's errors: a failed answer from the service, and parameters refused before any request.

/** What an `ApiError` carries besides code, message and status. */
export interface ApiErrorOptions extends ErrorOptions {
  /** The call, e.g. `GET /v1/attendance/holidays`. */
  readonly endpoint?: string;
  /** For `invalid_response`: where in the answer, e.g. `data[3].occursOn`. */
  readonly field?: string;
}

/**
 * A call that did not give a usable answer. `code` and `message` are the service's when it answered
 * `isSuccessful: false`; the client's own codes are `rate_limited` (still limited after the retries),
 * `timeout` (no answer within `timeoutMs`), `network_error` (no answer at all; the original error is `cause`),
 * `redirected` (a 3xx, which the client never follows), `http_<status>` (a failure status without the service's
 * failure envelope) and `invalid_response` (an answer of an unexpected shape; `field` says where). `status` is the
 * HTTP status, 0 when no answer came.
 * @example
 * try { await api.attendance.getException(id); } catch (e) { if (e instanceof ApiError && e.status === 404) return; }
 */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly endpoint: string | undefined;
  readonly field: string | undefined;

  constructor(code: string, message: string, status: number, options: ApiErrorOptions = {}) {
    const call = options.endpoint === undefined ? '' : ` to ${options.endpoint}`;
    super(
      status === 0
        ? `workforce-webhooks: ${code}: no answer${call}: ${message}`
        : `workforce-webhooks: the Workforce API answered ${status} ${code}${call}: ${message}`,
      options,
    );
    this.name = 'ApiError';
    this.code = code;
    this.status = status;
    this.endpoint = options.endpoint;
    this.field = options.field;
  }
}

/**
 * A parameter the spec does not allow (a malformed uuid or date, only one of `StartDate`/`EndDate`, a page
 * size over the limit); thrown before any request is sent.
 * @example
 * api.attendance.listExceptions({ pageSize: 500 }) // rejects with InvalidParameterError
 */
export class InvalidParameterError extends TypeError {
  /** The parameter's name as the spec writes it (`PageSize`, `StartDate`...). */
  readonly parameter: string;

  constructor(parameter: string, message: string) {
    super(`workforce-webhooks: invalid parameter ${parameter}: ${message}`);
    this.name = 'InvalidParameterError';
    this.parameter = parameter;
  }
}
