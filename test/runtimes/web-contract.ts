// The Web contract scenarios, over real HTTP (or workerd's dispatch) to the harness running on a real runtime.
import { describe, expect, it } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { eventually, expectAnswer } from '../contract/adapter-client.js';
import { LEAVE_APPROVED } from '../contract/adapter-dedupe.js';
import type { Handled } from './harness.js';

/** The secret harness.ts verifies with (test only). */
export const HARNESS_SECRET = 'whsec_runtime_harness_R4nD0m9';

/** Sends a request to the harness on its runtime and reads the answer. */
export type Dispatch = (path: string, init?: RequestInit) => Promise<Response>;

type Delivery = Awaited<ReturnType<typeof createSignedDelivery>>;

/**
 * Registers the Web contract for one runtime: `dispatch` reaches the harness started in `beforeAll` by the caller.
 * @example
 * describeWebContract('bun', () => dispatch);
 */
export function describeWebContract(
  name: string,
  dispatcher: () => Dispatch,
  options: { waitUntil: boolean },
): void {
  const answer = async (path: string, init: RequestInit) => {
    const response = await dispatcher()(path, { redirect: 'manual', ...init });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text };
  };
  const deliver = (delivery: Delivery) =>
    answer('/webhooks/workforce', { method: 'POST', headers: delivery.headers, body: delivery.body });
  const handled = async (): Promise<Handled> => JSON.parse((await answer('/handled', {})).text) as Handled;
  const leave = () =>
    createSignedDelivery({ secret: HARNESS_SECRET, type: 'leave.approved', data: LEAVE_APPROVED });

  describe(`the Web contract on ${name}`, { timeout: 120_000 }, () => {
    it('answers a valid delivery 202, and its queued work still finishes after the answer', async () => {
      const delivery = await leave();
      expectAnswer(await deliver(delivery), 202, { received: true });
      await eventually(async () => expect((await handled()).finished).toContain(delivery.event.id), {
        tries: 200,
        intervalMs: 50,
      });
      // Where the platform has one, the work was handed to waitUntil (Workers: nothing else keeps it alive).
      if (options.waitUntil) expect((await handled()).waitUntilCalls).toBeGreaterThan(0);
    });

    it('answers the same delivery again 200 duplicate', async () => {
      const delivery = await leave();
      expectAnswer(await deliver(delivery), 202, { received: true });
      expectAnswer(await deliver(delivery), 200, { received: true, duplicate: true });
    });

    it('refuses a forged signature 400', async () => {
      const forged = await createSignedDelivery({
        secret: 'whsec_attacker',
        type: 'leave.approved',
        data: LEAVE_APPROVED,
      });
      expectAnswer(await deliver(forged), 400, { error: 'signature_mismatch' });
    });

    it('refuses a stale signature 400', async () => {
      const stale = await createSignedDelivery({
        secret: HARNESS_SECRET,
        type: 'leave.approved',
        data: LEAVE_APPROVED,
        timestamp: Math.floor(Date.now() / 1000) - 600,
      });
      expectAnswer(await deliver(stale), 400, { error: 'timestamp_out_of_tolerance' });
    });

    it('refuses a body over 1 MiB 413', async () => {
      const delivery = await leave();
      const body = `${delivery.body}${' '.repeat(2 * 1024 * 1024)}`;
      expectAnswer(await deliver({ ...delivery, body }), 413, { error: 'payload_too_large' });
    });

    it('retries a handler that fails, until it succeeds', async () => {
      const delivery = await createSignedDelivery({ secret: HARNESS_SECRET, type: 'employee.created' });
      expectAnswer(await deliver(delivery), 202, { received: true });
      await eventually(
        async () => {
          const state = await handled();
          expect(state.attempts[delivery.event.id]).toBe(2);
          expect(state.finished).toContain(delivery.event.id);
        },
        { tries: 200, intervalMs: 50 },
      );
    });

    it('answers GET and HEAD 405 with Allow: POST', async () => {
      for (const method of ['GET', 'HEAD']) {
        const response = await answer('/webhooks/workforce', { method });
        expect([method, response.status, response.headers.get('allow')]).toEqual([method, 405, 'POST']);
        expect(response.text).toBe(method === 'HEAD' ? '' : '{"error":"method_not_allowed"}');
      }
    });
  });
}
