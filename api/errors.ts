// The read API's errors: a failed answer from the service, and parameters refused before any request.

/**
 * The service answered `isSuccessful: false` (or not with the envelope at all): `code` and `message` are the
 * service's, `status` the HTTP status. Codes of the client's own making: `rate_limited`, `invalid_response`.
 * @example
 * try { await api.attendance.getException(id); } catch (e) { if (e instanceof ApiError && e.status === 404) return; }
 */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;

  constructor(code: string, message: string, status: number, options?: ErrorOptions) {
    super(`workforce-webhooks: the Workforce API answered ${status} ${code}: ${message}`, options);
    this.name = 'ApiError';
    this.code = code;
    this.status = status;
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
