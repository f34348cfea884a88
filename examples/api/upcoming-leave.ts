// Reading the API on its own: every approved leave starting in a date range, across all pages, with errors handled.
// #region api
import { type ApiClient, ApiError } from 'workforce-webhooks/api';

/** Approved leave starting between two calendar dates (`YYYY-MM-DD`), one line per request. */
export async function upcomingLeave(api: ApiClient, startDate: string, endDate: string): Promise<string[]> {
  const lines: string[] = [];
  // Pages are fetched as the loop needs them; the client keeps under 300 requests a minute and waits out 429s.
  for await (const leave of api.leave.iterateRequests({
    leaveStatus: 'Approved',
    startDate,
    endDate,
    pageSize: 50,
  })) {
    // Calendar dates stay strings: '2026-12-24', never shifted through the local time zone.
    lines.push(
      `${leave.startDate}..${leave.endDate} ${leave.employeeName} (${leave.leaveTypeName}, ${leave.days} ${leave.days === 1 ? 'day' : 'days'})`,
    );
  }
  return lines;
}

/** A leave balance, or undefined when the employee or type is outside the key's organisation. */
export async function balanceOf(
  api: ApiClient,
  employeeId: string,
  leaveTypeId: string,
): Promise<number | undefined> {
  try {
    return (await api.leave.getBalance({ employeeId, leaveTypeId })).daysRemaining;
  } catch (error) {
    // `isSuccessful: false` in the envelope arrives as an ApiError with the service's code and the HTTP status.
    if (error instanceof ApiError) return undefined;
    throw error;
  }
}
// #endregion api
