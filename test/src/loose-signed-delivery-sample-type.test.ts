// createSignedDelivery without data types event.data as the sample it sends, not as the app's EventDataMap fields.
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { LeaveApprovedData, UnknownEventData } from 'workforce-webhooks';
import {
  createSignedDelivery,
  type SampleData,
  type SignedDeliveryOptions,
} from 'workforce-webhooks/testing';

declare module 'workforce-webhooks' {
  interface EventDataMap {
    // As the README gives a documented type its fields (the same declaration as in types.test.ts).
    'payroll.paid': { readonly payrollId: string; readonly employeeCount: number };
    // A type of the app's own.
    'shift.swapped': { readonly shiftId: string };
  }
}

const secret = 'whsec_loose_sample_type';

describe('createSignedDelivery and the type of event.data', () => {
  it('types a documented type the app gave fields, sent without data, as the sample it holds', async () => {
    const delivery = await createSignedDelivery({ secret, type: 'payroll.paid' });
    expectTypeOf(delivery.event.data).toEqualTypeOf<SampleData<'payroll.paid'>>();
    expectTypeOf(delivery.event.data).toEqualTypeOf<UnknownEventData>();
    // @ts-expect-error the sample has no payrollId: the app's fields are not what it sends.
    const payrollId: string = delivery.event.data.payrollId;
    expect(payrollId).toBeUndefined();
    expect(delivery.event.data.sample).toBe(true);
  });

  it('types a type of the app’s own, sent without data, as the empty sample', async () => {
    const delivery = await createSignedDelivery({ secret, type: 'shift.swapped' });
    expectTypeOf(delivery.event.data).toEqualTypeOf<UnknownEventData>();
    // @ts-expect-error no shiftId in the sample.
    const shiftId: string = delivery.event.data.shiftId;
    expect(shiftId).toBeUndefined();
    expect(delivery.event.data).toEqual({});
  });

  it('keeps the spec’s sample payloads typed', async () => {
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    expectTypeOf(delivery.event.data).toEqualTypeOf<LeaveApprovedData>();
    expect(delivery.event.data.startDate).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00$/);
  });

  it('types data the test gives as the app’s fields, and checks it against them', async () => {
    const delivery = await createSignedDelivery({
      secret,
      type: 'payroll.paid',
      data: { payrollId: 'run-1', employeeCount: 3 },
    });
    expectTypeOf(delivery.event.data).toEqualTypeOf<{
      readonly payrollId: string;
      readonly employeeCount: number;
    }>();
    expect(delivery.event.data.payrollId).toBe('run-1');
    const wrong = { payrollId: 'run-2', employeeCount: '3' };
    // @ts-expect-error employeeCount is the app's number.
    await createSignedDelivery({ secret, type: 'payroll.paid', data: wrong });
  });

  it('types options built elsewhere, data there or not, as either', async () => {
    const options: SignedDeliveryOptions<'shift.swapped'> = { secret, type: 'shift.swapped' };
    const delivery = await createSignedDelivery(options);
    expectTypeOf(delivery.event.data).toEqualTypeOf<{ readonly shiftId: string } | UnknownEventData>();
    expect(delivery.event.data).toEqual({});
  });
});
