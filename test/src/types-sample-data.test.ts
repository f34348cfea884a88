// sampleEventData is typed as what it holds: the spec's payloads, whatever fields the app gave EventDataMap.
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { LeaveApprovedData, UnknownEventData } from 'workforce-webhooks';
import { sampleEventData } from 'workforce-webhooks/testing';

declare module 'workforce-webhooks' {
  interface EventDataMap {
    // As the README gives a documented type its fields (the same declaration as in types.test.ts).
    'payroll.paid': { readonly payrollId: string; readonly employeeCount: number };
    // A type of the app's own.
    'timesheet.submitted': { readonly timesheetId: string };
  }
}

describe('sampleEventData with fields given to the map', () => {
  it('types a documented type the app gave fields as the loose sample it is, which has none of them', () => {
    const data = sampleEventData('payroll.paid');
    expectTypeOf(data).toEqualTypeOf<UnknownEventData>();
    expect(data).not.toHaveProperty('payrollId');
    expect(data).not.toHaveProperty('employeeCount');
    expect(data.sample).toBe(true);
  });

  it('types a type of the app’s own as the empty object it gets', () => {
    const data = sampleEventData('timesheet.submitted');
    expectTypeOf(data).toEqualTypeOf<UnknownEventData>();
    expect(data).toEqual({});
  });

  it('keeps the spec’s payloads typed', () => {
    expectTypeOf(sampleEventData('leave.approved')).toEqualTypeOf<LeaveApprovedData>();
    expect(sampleEventData('attendance.absence_report.completed').reportId).toEqual(expect.any(String));
  });
});
