// The six Attendance endpoints (permission `Attendance: View`).
import { optionalCalendarDate, toCalendarDate } from './dates.js';
import { iteratePages, toPage } from './paging.js';
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

const record = (r: AttendanceRecord): AttendanceRecord => ({
  ...r,
  attendanceDate: toCalendarDate(r.attendanceDate),
});
const exception = (e: AttendanceException): AttendanceException => ({
  ...e,
  startDate: toCalendarDate(e.startDate),
  endDate: toCalendarDate(e.endDate),
});

function array<T>(data: unknown, map: (item: T) => T): readonly T[] {
  if (!Array.isArray(data))
    throw new TypeError('workforce-webhooks: the Workforce API sent a list that is not an array');
  return data.map(map);
}

/**
 * Builds `api.attendance` over a transport.
 * @example
 * const attendance = createAttendanceApi(createTransport({ apiKey, baseUrl }));
 */
export function createAttendanceApi(get: Transport): AttendanceApi {
  const listRecords: AttendanceApi['listRecords'] = async (params, options) =>
    toPage(await get('/v1/attendance/list', buildQuery(FIELDS.attendance, params), options), record);
  const listExceptions: AttendanceApi['listExceptions'] = async (params, options) =>
    toPage(await get('/v1/attendance/exceptions', buildQuery(FIELDS.exceptions, params), options), exception);
  return {
    listRecords,
    iterateRecords: (params = {}, options) => iteratePages((p) => listRecords(p, options), params),
    async getReport(id, options) {
      const report = (await get(`/v1/attendance/report/${uuid('id', id)}`, '', options)) as AbsenceReport;
      return { ...report, reportDate: toCalendarDate(report.reportDate) };
    },
    listExceptions,
    iterateExceptions: (params = {}, options) => iteratePages((p) => listExceptions(p, options), params),
    async getException(id, options) {
      return exception(
        (await get(`/v1/attendance/exceptions/${uuid('id', id)}`, '', options)) as AttendanceException,
      );
    },
    async listHolidays(params, options) {
      const data = await get('/v1/attendance/holidays', buildQuery(FIELDS.holidays, params), options);
      return array<CompanyHoliday>(data, (h) => ({
        ...h,
        date: toCalendarDate(h.date),
        occursOn: optionalCalendarDate(h.occursOn) ?? toCalendarDate(h.date),
      }));
    },
    async listPublicHolidays(params, options) {
      const data = await get('/v1/attendance/holidays/public', buildQuery(FIELDS.holidays, params), options);
      return array<PublicHoliday>(data, (h) => ({
        ...h,
        startDate: toCalendarDate(h.startDate),
        endDate: toCalendarDate(h.endDate),
      }));
    },
  };
}
