// The six Attendance endpoints (permission `Attendance: View`).
import { iteratePages, pageOf } from './paging.js';
import type { AttendanceListParams, ExceptionListParams, HolidayParams } from './params.js';
import { buildQuery, FIELDS, uuid } from './query.js';
import type {
  AbsenceReport,
  AttendanceException,
  AttendanceRecord,
  CompanyHoliday,
  Page,
  PublicHoliday,
} from './records.js';
import { date, list, object, withDates } from './shape.js';
import type { CallOptions, Transport } from './transport.js';

/** `api.attendance`: records, absence reports, exceptions and holidays. */
export interface AttendanceApi {
  /** One page of attendance records, most recent day first (default 10 a page). */
  listRecords(params?: AttendanceListParams, options?: CallOptions): Promise<Page<AttendanceRecord>>;
  iterateRecords(
    params?: AttendanceListParams,
    options?: CallOptions,
  ): AsyncGenerator<AttendanceRecord, void, undefined>;
  /** The absence report whose id came as `reportId` in `attendance.absence_report.completed`. */
  getReport(id: string, options?: CallOptions): Promise<AbsenceReport>;
  /** One page of attendance exceptions (default 20, at most 100 a page). */
  listExceptions(params?: ExceptionListParams, options?: CallOptions): Promise<Page<AttendanceException>>;
  iterateExceptions(
    params?: ExceptionListParams,
    options?: CallOptions,
  ): AsyncGenerator<AttendanceException, void, undefined>;
  getException(id: string, options?: CallOptions): Promise<AttendanceException>;
  /** The organisation's own holidays and closures of a year, in date order. */
  listHolidays(params?: HolidayParams, options?: CallOptions): Promise<readonly CompanyHoliday[]>;
  /** Public holidays of the organisation's countries (or one company's) for a year. */
  listPublicHolidays(params?: HolidayParams, options?: CallOptions): Promise<readonly PublicHoliday[]>;
}

const record = (value: unknown, field: string): AttendanceRecord =>
  withDates(value, field, ['attendanceDate']);
const exception = (value: unknown, field: string): AttendanceException =>
  withDates(value, field, ['startDate', 'endDate']);
const holiday = (value: unknown, field: string): CompanyHoliday => {
  const row = object(value, field);
  const added = date(row, 'date', field);
  // `occursOn` is the day in the requested year; when absent, a one-off's date is that day, but a recurring one's
  // `date` is its first year, so without `occursOn` it is refused, not read as falling then.
  return {
    ...row,
    date: added,
    occursOn: row.occursOn == null && row.isRecurring !== true ? added : date(row, 'occursOn', field),
  } as CompanyHoliday;
};
const publicHoliday = (value: unknown, field: string): PublicHoliday =>
  withDates(value, field, ['startDate', 'endDate']);

/**
 * Builds `api.attendance` over a transport.
 * @example
 * const attendance = createAttendanceApi(createTransport({ apiKey, baseUrl }));
 */
export function createAttendanceApi(get: Transport): AttendanceApi {
  const listRecords: AttendanceApi['listRecords'] = async (params, options) =>
    get(
      '/v1/attendance/list',
      buildQuery(FIELDS.attendance, params),
      options,
      pageOf(record, params?.pageNumber),
    );
  const listExceptions: AttendanceApi['listExceptions'] = async (params, options) =>
    get(
      '/v1/attendance/exceptions',
      buildQuery(FIELDS.exceptions, params),
      options,
      pageOf(exception, params?.pageNumber),
    );
  return {
    listRecords,
    iterateRecords: (params = {}, options) =>
      iteratePages((p) => listRecords(p, options), params, 'GET /v1/attendance/list'),
    async getReport(id, options) {
      return get(`/v1/attendance/report/${uuid('id', id)}`, '', options, (value, field) =>
        withDates<AbsenceReport>(value, field, ['reportDate']),
      );
    },
    listExceptions,
    iterateExceptions: (params = {}, options) =>
      iteratePages((p) => listExceptions(p, options), params, 'GET /v1/attendance/exceptions'),
    async getException(id, options) {
      return get(`/v1/attendance/exceptions/${uuid('id', id)}`, '', options, exception);
    },
    async listHolidays(params, options) {
      return get('/v1/attendance/holidays', buildQuery(FIELDS.holidays, params), options, (value, field) =>
        list(value, field, holiday),
      );
    },
    async listPublicHolidays(params, options) {
      const query = buildQuery(FIELDS.holidays, params);
      return get('/v1/attendance/holidays/public', query, options, (value, field) =>
        list(value, field, publicHoliday),
      );
    },
  };
}
