// createSignedDelivery without data sends a realistic sample of every event type the spec names.
import { describe, expect, expectTypeOf, it } from 'vitest';
import { createReceiver, type LeaveApprovedData } from 'workforce-webhooks';
import { createSignedDelivery, SAMPLE_IDS, sampleEventData } from 'workforce-webhooks/testing';

// Spec "Events": the event types that the material names.
const NAMED = [
  'webhook.test',
  'leave.requested',
  'leave.approved',
  'leave.rejected',
  'leave.cancelled',
  'attendance.exception.approved',
  'attendance.absence_report.completed',
  'employee.created',
  'employee.terminated',
  'payroll.paid',
  'payroll.transfer_failed',
  'loan.disbursed',
  'candidate.stage_changed',
  'offer.accepted',
  'approval.completed',
] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const CALENDAR = /^\d{4}-\d{2}-\d{2}T00:00:00$/;

describe('spec "Data of leave.approved": the seven fields, dates as calendar dates with time 00:00:00', () => {
  it('has exactly the seven fields, Monday to Friday two weeks on', () => {
    const data = sampleEventData('leave.approved', { now: () => Date.parse('2026-11-23T15:00:00Z') });
    expectTypeOf(data).toEqualTypeOf<LeaveApprovedData>();
    expect(data).toEqual({
      leaveRequestId: SAMPLE_IDS.leaveRequestId,
      employeeId: SAMPLE_IDS.employeeId,
      leaveTypeId: SAMPLE_IDS.leaveTypeId,
      leaveType: 'Annual Leave',
      startDate: '2026-12-07T00:00:00',
      endDate: '2026-12-11T00:00:00',
      status: 'Approved',
    });
  });
});

describe('spec: attendance.absence_report.completed "includes reportId (uuid)"', () => {
  it('carries a uuid reportId and nothing the spec does not show', () => {
    expect(sampleEventData('attendance.absence_report.completed')).toEqual({
      reportId: expect.stringMatching(UUID),
    });
  });
});

describe('the other named types: the ids their area implies, marked as samples', () => {
  it.each(NAMED.filter((t) => t !== 'leave.approved' && t !== 'attendance.absence_report.completed'))(
    '%s',
    (type) => {
      const data = sampleEventData(type) as Record<string, unknown>;
      expect(data.sample).toBe(true);
      const ids = Object.entries(data).filter(([key]) => key.endsWith('Id'));
      if (type !== 'webhook.test') expect(ids.length).toBeGreaterThan(0);
      for (const [, value] of ids) expect(value).toMatch(UUID);
      if (type.startsWith('leave.')) {
        expect(data).toMatchObject({
          leaveRequestId: expect.stringMatching(UUID),
          startDate: expect.stringMatching(CALENDAR),
        });
      }
    },
  );

  it('gives an unnamed type no data', () => {
    expect(sampleEventData('x.unknown')).toEqual({});
  });
});

describe('createSignedDelivery without data', () => {
  it('sends the sample, and a typed handler gets its fields', async () => {
    const secret = 'whsec_samples';
    const seen: string[] = [];
    const receiver = createReceiver({ secret, mode: 'inline' }).on('leave.approved', (event) => {
      seen.push(event.data.startDate.slice(0, 10));
    });
    for (const type of NAMED) {
      const delivery = await createSignedDelivery({ secret, type });
      expect(delivery.event.data).toEqual(sampleEventData(type));
      const answer = await receiver.fetch(delivery.toRequest('http://localhost/webhooks'));
      expect(answer.status, type).toBe(200);
    }
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const given = await createSignedDelivery({
      secret,
      type: 'x.custom',
      data: { payrollRunId: 'mine' },
    });
    expect(given.event.data).toEqual({ payrollRunId: 'mine' });
  });
});
