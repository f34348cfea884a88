// byDefaultKeys: its rules typed against the event map, and refused at creation when no event could use them.
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  byDefaultKeys,
  ConfigurationError,
  createReceiver,
  type LeaveApprovedData,
  type WorkforceEvent,
} from 'workforce-webhooks';

const secret = 'whsec_types_ordering_keys';
const event = (type: string, data: Record<string, unknown>) =>
  ({
    id: crypto.randomUUID(),
    type,
    apiVersion: '2026-10-15',
    occurredAt: '2026-11-24T10:00:00.000Z',
    organizationId: crypto.randomUUID(),
    data,
  }) as WorkforceEvent;

describe('byDefaultKeys rules, typed against the map', () => {
  it('narrows each rule’s event to its type or prefix', () => {
    byDefaultKeys({
      'leave.approved': (e) => {
        expectTypeOf(e.data).toEqualTypeOf<LeaveApprovedData>();
        return e.data.leaveRequestId;
      },
      'leave.*': (e) => {
        expectTypeOf(e.type).toEqualTypeOf<
          'leave.requested' | 'leave.approved' | 'leave.rejected' | 'leave.cancelled'
        >();
        return undefined;
      },
      'attendance.absence_report.completed': (e) => e.data.reportId,
    });
  });

  it("refuses '*' and a rule whose key is not a string", () => {
    expect(() =>
      // @ts-expect-error '*' is not a rule: a key of every event is a function of one's own, ordering.key
      byDefaultKeys({ '*': (e) => e.id }),
    ).toThrow(ConfigurationError);
    // @ts-expect-error a key is a string (or undefined: not ordered), not a number
    expect(byDefaultKeys({ 'leave.approved': () => 42 })(event('leave.approved', {}))).toBeUndefined();
  });
});

describe('byDefaultKeys rules given from JavaScript', () => {
  const refused = (rules: unknown) => () => byDefaultKeys(rules as never);

  it('refuses a rule that is not a function, naming it, before any event comes', () => {
    expect(refused({ 'employee.*': 'employeeId' })).toThrow(ConfigurationError);
    expect(refused({ 'employee.*': 'employeeId' })).toThrow(/the rule of 'employee\.\*' must be a function/);
  });

  it("refuses '*', a prefix without its '*' and a name that is no event type", () => {
    expect(refused({ '*': (e: WorkforceEvent) => e.id })).toThrow(
      /no '\*' rule.*ordering: \{ key: \(event\)/,
    );
    for (const name of ['employee.', 'employee *', '']) {
      expect(refused({ [name]: () => 'x' }), name).toThrow(ConfigurationError);
    }
  });

  it('refuses rules that are not an object of rules', () => {
    for (const rules of [null, 'employee.*', ['employee.*'], (e: WorkforceEvent) => e.id]) {
      expect(refused(rules), String(rules)).toThrow(ConfigurationError);
    }
  });

  it('says to call it when given as the key itself, rather than leaving every event unordered', () => {
    const key = byDefaultKeys as unknown as (e: WorkforceEvent) => unknown;
    expect(() => key(event('leave.approved', { leaveRequestId: 'l1' }))).toThrow(
      /call it, ordering: \{ key: byDefaultKeys\(\) \}/,
    );
  });

  it('refuses byDefaultKeys itself as the key at createReceiver, with the call to write', () => {
    expect(() => createReceiver({ secret, ordering: { key: byDefaultKeys as never } })).toThrow(
      /call it, ordering: \{ key: byDefaultKeys\(\) \}/,
    );
  });

  it('refuses a wrong rule at createReceiver, not at the first delivery', () => {
    expect(() =>
      createReceiver({
        secret,
        ordering: { key: byDefaultKeys({ 'employee.*': 'employeeId' } as never) },
      }),
    ).toThrow(ConfigurationError);
  });

  it('takes undefined for a rule, which turns the default of leave.* off', () => {
    const key = byDefaultKeys({ 'leave.*': undefined, 'leave.approved': (e) => e.data.leaveRequestId });
    expect(key(event('leave.approved', { leaveRequestId: 'l1' }))).toBe('l1');
    expect(key(event('leave.cancelled', { leaveRequestId: 'l1' }))).toBeUndefined();
  });
});
