// createApiClient: the typed read API of the Workforce Service, Leave and Attendance.
import { type AttendanceApi, createAttendanceApi } from './attendance.js';
import { createLeaveApi, type LeaveApi } from './leave.js';
import { createTransport, type TransportOptions } from './transport.js';

/** Options of `createApiClient`: the key, the spec's `{base_url}`, and optionally `fetch`, limits and clock. */
export type ApiClientOptions = TransportOptions;

/** The read-API client: `api.leave` and `api.attendance`. */
export interface ApiClient {
  readonly leave: LeaveApi;
  readonly attendance: AttendanceApi;
}

/**
 * Creates a client for the read API; with every other client of the key it keeps to 300 requests a minute, waits
 * out `Retry-After`, and gives each request 30 s (`timeoutMs`).
 * @example
 * const api = createApiClient({ apiKey: process.env.WORKFORCE_API_KEY!, baseUrl: 'https://api.example.com' });
 * const request = await api.leave.getRequest(event.data.leaveRequestId);
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const get = createTransport(options);
  return Object.freeze({ leave: createLeaveApi(get), attendance: createAttendanceApi(get) });
}
