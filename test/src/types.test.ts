// Type-level proof that handlers get typed events from the one EventDataMap (checked by tsc and vitest).
import { describe, expectTypeOf, it } from 'vitest';
import {
  createReceiver,
  type LeaveApprovedData,
  type UnknownEventData,
  type WorkforceEvent,
} from 'workforce-webhooks';

declare module 'workforce-webhooks' {
  interface EventDataMap {
    'payroll.paid': { readonly payrollId: string; readonly employeeCount: number };
  }
}

const receiver = createReceiver({ secret: 'whsec_types' });

describe('handler types', () => {
  it('types a known event by its map entry', () => {
    receiver.on('leave.approved', (event, ctx) => {
      expectTypeOf(event.type).toEqualTypeOf<'leave.approved'>();
      expectTypeOf(event.data).toEqualTypeOf<LeaveApprovedData>();
      expectTypeOf(event.data.startDate).toEqualTypeOf<string>();
      expectTypeOf(ctx.attempt).toEqualTypeOf<number>();
      expectTypeOf(ctx.signal).toEqualTypeOf<AbortSignal>();
      // @ts-expect-error not a field of leave.approved
      void event.data.salary;
    });
  });

  it('gives an array the union of its types', () => {
    receiver.on(['leave.approved', 'attendance.absence_report.completed'], (event) => {
      expectTypeOf(event.type).toEqualTypeOf<'leave.approved' | 'attendance.absence_report.completed'>();
      if (event.type === 'attendance.absence_report.completed')
        expectTypeOf(event.data.reportId).toEqualTypeOf<string>();
      else expectTypeOf(event.data.leaveRequestId).toEqualTypeOf<string>();
    });
  });

  it('gives a prefix wildcard the union of the types under it', () => {
    receiver.on('leave.*', (event) => {
      expectTypeOf(event.type).toEqualTypeOf<
        'leave.requested' | 'leave.approved' | 'leave.rejected' | 'leave.cancelled'
      >();
    });
    receiver.on('attendance.exception.*', (event) => {
      expectTypeOf(event.type).toEqualTypeOf<'attendance.exception.approved'>();
    });
  });

  it('takes declaration merging into the map', () => {
    receiver.on('payroll.paid', (event) => {
      expectTypeOf(event.data.payrollId).toEqualTypeOf<string>();
      expectTypeOf(event.data.employeeCount).toEqualTypeOf<number>();
    });
  });

  it('degrades an unknown type to Record<string, unknown>, never never', () => {
    receiver.on('benefits.enrolled', (event) => {
      expectTypeOf(event.type).toEqualTypeOf<'benefits.enrolled'>();
      expectTypeOf(event.data).toEqualTypeOf<UnknownEventData>();
    });
    receiver.on('benefits.*', (event) => {
      expectTypeOf(event.data).toEqualTypeOf<UnknownEventData>();
    });
    receiver.onAny((event) => {
      expectTypeOf(event.id).toEqualTypeOf<string>();
    });
  });

  it('accepts a map of the user’s own as a generic', () => {
    interface Mine {
      'custom.thing': { readonly n: number };
    }
    createReceiver<Mine>({ secret: 'whsec_types' }).on('custom.thing', (event) => {
      expectTypeOf(event).toEqualTypeOf<WorkforceEvent<'custom.thing', { readonly n: number }>>();
    });
  });
});
