// Contract scenarios: a valid delivery is handled once, however often and however concurrently it arrives.

import { expect } from 'vitest';
import {
  type HandlerContext,
  type LeaveApprovedData,
  RETRY_AFTER_SECONDS,
  type WorkforceEvent,
} from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { deferred, expectAnswer, post } from './adapter-client.js';
import { CONTRACT_SECRET, type ContractContext } from './adapter-suite.js';

/** A `leave.approved` payload as the spec documents it. */
export const LEAVE_APPROVED: LeaveApprovedData = {
  leaveRequestId: '6f1c2a4e-1b7d-4c1e-9a55-0d9f3a1b2c01',
  employeeId: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  leaveTypeId: '0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e',
  leaveType: 'Annual Leave',
  startDate: '2026-11-02T00:00:00',
  endDate: '2026-11-06T00:00:00',
  status: 'Approved',
};

/**
 * A signed `leave.approved` delivery with the contract's secret.
 * @example
 * const delivery = await leaveApproved({ id: sameEventId });
 */
export function leaveApproved(
  options: { readonly id?: string; readonly timestamp?: number; readonly secret?: string } = {},
): ReturnType<typeof createSignedDelivery<'leave.approved'>> {
  return createSignedDelivery({
    secret: CONTRACT_SECRET,
    type: 'leave.approved',
    data: LEAVE_APPROVED,
    ...options,
  });
}

const ACCEPTED = { received: true };
const DUPLICATE = { received: true, duplicate: true };

/**
 * Registers the valid, duplicate and concurrent scenarios.
 * @example
 * dedupeScenarios(context);
 */
export function dedupeScenarios({ scenario, open }: ContractContext): void {
  scenario('valid delivery', async () => {
    const { receiver, url } = await open();
    const calls: { event: WorkforceEvent<'leave.approved', LeaveApprovedData>; ctx: HandlerContext }[] = [];
    const handled = deferred();
    receiver.on('leave.approved', (event, ctx) => {
      // Typed from EventDataMap: a wrong field would not compile.
      const employee: string = event.data.employeeId;
      expect(employee).toBe(LEAVE_APPROVED.employeeId);
      calls.push({ event, ctx });
      handled.resolve();
    });
    const delivery = await leaveApproved();
    expectAnswer(await post(url, delivery), 202, ACCEPTED, {
      'content-type': 'application/json; charset=utf-8',
    });
    await handled.promise;
    await receiver.close();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.event).toEqual(delivery.event);
    expect(calls[0]!.ctx.deliveryId).toBe(delivery.headers['svc-delivery-id']);
    expect(calls[0]!.ctx.attempt).toBe(1);
  });

  scenario('same delivery again', async () => {
    const { receiver, url } = await open();
    let calls = 0;
    receiver.on('leave.approved', () => {
      calls++;
    });
    const delivery = await leaveApproved();
    expectAnswer(await post(url, delivery), 202, ACCEPTED);
    expectAnswer(await post(url, delivery), 200, DUPLICATE);
    await receiver.close();
    expect(calls).toBe(1);
  });

  scenario('redelivery with a new delivery id', async () => {
    const { receiver, url } = await open();
    const deliveryIds: (string | undefined)[] = [];
    receiver.on('leave.approved', (_event, ctx) => {
      deliveryIds.push(ctx.deliveryId);
    });
    const first = await leaveApproved();
    const again = await leaveApproved({ id: first.event.id });
    expect(again.headers['svc-delivery-id']).not.toBe(first.headers['svc-delivery-id']);
    expectAnswer(await post(url, first), 202, ACCEPTED);
    expectAnswer(await post(url, again), 200, DUPLICATE);
    await receiver.close();
    expect(deliveryIds).toEqual([first.headers['svc-delivery-id']]);
  });

  scenario('10 concurrent copies', async () => {
    const { receiver, url } = await open();
    let calls = 0;
    const gate = deferred();
    receiver.on('leave.approved', async () => {
      calls++;
      await gate.promise;
    });
    const delivery = await leaveApproved();
    const answers = await Promise.all(Array.from({ length: 10 }, () => post(url, delivery)));
    gate.resolve();
    await receiver.close();
    expect(calls).toBe(1);
    expect(answers.filter((a) => a.status === 202)).toHaveLength(1);
    for (const answer of answers) {
      if (answer.status === 202) expectAnswer(answer, 202, ACCEPTED);
      else if (answer.status === 200) expectAnswer(answer, 200, DUPLICATE);
      else
        expectAnswer(answer, 409, { error: 'in_progress' }, { 'retry-after': String(RETRY_AFTER_SECONDS) });
    }
  });
}
