// Contract scenarios of inline mode: the answer waits for the handlers, up to the ack deadline.

import { expect } from 'vitest';
import { RETRY_AFTER_SECONDS } from 'workforce-webhooks';
import { deferred, eventually, expectAnswer, LEAK_MARKER, post } from './adapter-client.js';
import { leaveApproved } from './adapter-dedupe.js';
import type { ContractContext } from './adapter-suite.js';

const DUPLICATE = { received: true, duplicate: true };

/**
 * Registers the inline-mode scenarios.
 * @example
 * inlineScenarios(context);
 */
export function inlineScenarios({ scenario, open }: ContractContext): void {
  scenario('inline success', async () => {
    const { receiver, url } = await open({ mode: 'inline' });
    let handled = 0;
    receiver.on('leave.approved', async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      handled++;
    });
    const delivery = await leaveApproved();
    expectAnswer(await post(url, delivery), 200, { received: true });
    // 200 means processed: the handler finished before the answer.
    expect(handled).toBe(1);
    expectAnswer(await post(url, delivery), 200, DUPLICATE);
    expect(handled).toBe(1);
  });

  scenario('inline handler throws', async () => {
    const { receiver, url } = await open({ mode: 'inline' });
    let failing = true;
    let handled = 0;
    receiver.on('leave.approved', () => {
      if (failing) throw new Error(`ledger is locked: ${LEAK_MARKER}`);
      handled++;
    });
    const delivery = await leaveApproved();
    expectAnswer(await post(url, delivery), 500, { error: 'handler_failed' });
    // The claim was given back: the sender's retry is the durable queue of inline mode.
    failing = false;
    expectAnswer(await post(url, delivery), 200, { received: true });
    expect(handled).toBe(1);
  });

  scenario('inline past the ack deadline', async () => {
    const { receiver, url } = await open({ mode: 'inline', ackDeadlineMs: 200 });
    const gate = deferred();
    let finished = false;
    receiver.on('leave.approved', async () => {
      await gate.promise;
      finished = true;
    });
    const delivery = await leaveApproved();
    expectAnswer(await post(url, delivery), 202, { received: true });
    expect(finished).toBe(false);
    gate.resolve();
    // Once the background run is done the event is marked seen.
    await eventually(async () => expectAnswer(await post(url, delivery), 200, DUPLICATE));
    expect(finished).toBe(true);
  });

  scenario('inline duplicate while running', async () => {
    const { receiver, url } = await open({ mode: 'inline', ackDeadlineMs: 5000 });
    const started = deferred();
    const gate = deferred();
    let handled = 0;
    receiver.on('leave.approved', async () => {
      started.resolve();
      await gate.promise;
      handled++;
    });
    const delivery = await leaveApproved();
    const first = post(url, delivery);
    await started.promise;
    const copy = await post(url, delivery);
    expectAnswer(copy, 409, { error: 'in_progress' }, { 'retry-after': String(RETRY_AFTER_SECONDS) });
    gate.resolve();
    expectAnswer(await first, 200, { received: true });
    expect(handled).toBe(1);
  });
}
