// Type-level proof that handlers get typed events from the one EventDataMap (checked by tsc and vitest).
import { describe, expectTypeOf, it } from 'vitest';
import {
  createReceiver,
  type LeaveApprovedData,
  type UnknownEventData,
  unknownType,
  type WorkforceEvent,
} from 'workforce-webhooks';

declare module 'workforce-webhooks' {
  interface EventDataMap {
    'payroll.paid': { readonly payrollId: string; readonly employeeCount: number };
    // A type the spec does not name yet, added by the user.
    'training.completed': { readonly courseId: string };
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

  it('takes a type added by declaration merging, and its prefix pattern', () => {
    receiver.on('training.completed', (event) => {
      expectTypeOf(event.type).toEqualTypeOf<'training.completed'>();
      expectTypeOf(event.data.courseId).toEqualTypeOf<string>();
    });
    receiver.on('training.*', (event) => {
      expectTypeOf(event.type).toEqualTypeOf<'training.completed'>();
    });
    // @ts-expect-error a typo of the added type
    receiver.on('training.complete', () => {});
  });

  it('refuses a type the map does not name, and a prefix of none of its types', () => {
    // @ts-expect-error a typo of leave.approved
    receiver.on('leave.aproved', () => {});
    // @ts-expect-error a typo inside an array
    receiver.on(['leave.approved', 'leave.rejectd'], () => {});
    // @ts-expect-error no type of the map starts with `benefits.`
    receiver.on('benefits.*', () => {});
    // @ts-expect-error a prefix needs its `.*`
    receiver.on('leave', () => {});
    // @ts-expect-error a plain string is not checked, so it is not accepted
    receiver.on('leave.approved' as string, () => {});
    expectTypeOf(receiver.on).parameter(0).not.toEqualTypeOf<string>();
  });

  it('takes a type the spec has not named only through unknownType, typed loosely, never never', () => {
    receiver.on(unknownType('benefits.enrolled'), (event) => {
      expectTypeOf(event.type).toEqualTypeOf<'benefits.enrolled'>();
      expectTypeOf(event.data).toEqualTypeOf<UnknownEventData>();
    });
    receiver.on(unknownType('benefits.*'), (event) => {
      expectTypeOf(event.type).toEqualTypeOf<string>();
      expectTypeOf(event.data).toEqualTypeOf<UnknownEventData>();
    });
    receiver.on([unknownType('benefits.enrolled'), 'leave.approved'], (event) => {
      expectTypeOf(event.type).toEqualTypeOf<'benefits.enrolled' | 'leave.approved'>();
      if (event.type === 'leave.approved') expectTypeOf(event.data).toEqualTypeOf<LeaveApprovedData>();
    });
    // unknownType of a type the map names still gives its typed payload.
    receiver.on(unknownType('leave.approved'), (event) => {
      expectTypeOf(event.data).toEqualTypeOf<LeaveApprovedData>();
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
    // @ts-expect-error the map given replaces EventDataMap: leave.approved is not one of its types
    createReceiver<Mine>({ secret: 'whsec_types' }).on('leave.approved', () => {});
  });
});
