// close() while the wall clock is stepped (NTP, a VM resumed, an operator): its deadline is on the monotonic clock,
// so a step forward does not cut the drain to nothing, and a step back does not stretch it past `timeoutMs`.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMemoryQueue, createReceiver } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { recordingLogger } from '../support/logger.js';
import { until } from '../support/ordering-scenario.js';

const secret = 'whsec_close_wall_clock_step';
const HOUR_MS = 3_600_000;

const delivery = async () => {
  const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
  return { method: 'POST', headers: signed.headers, body: new TextEncoder().encode(signed.body) };
};

// Only `Date` is faked: timers and `performance.now()` stay real, as they are when the system clock is stepped.
afterEach(() => {
  vi.useRealTimers();
});

describe('close() with the wall clock stepped while it drains', () => {
  it('an hour forward: the running event still gets the rest of timeoutMs and ends processed', async () => {
    const ran: string[] = [];
    let started = false;
    const receiver = createReceiver({ secret, logger: recordingLogger(), queue: createMemoryQueue() }).on(
      'leave.approved',
      async (event, { signal }) => {
        started = true;
        await sleep(200, undefined, { signal });
        ran.push(event.id);
      },
    );
    expect((await receiver.handle(await delivery())).status).toBe(202);
    await until(() => started, 'the handler to start');

    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const closing = receiver.close({ timeoutMs: 5000 });
    // Before the queue is told how long it has left.
    vi.setSystemTime(Date.now() + HOUR_MS);
    await closing;

    expect(ran).toHaveLength(1);
    expect((await receiver.deadLetters()).items).toEqual([]);
  });

  it('an hour back: a handler that ignores its signal is given up at timeoutMs, not an hour later', async () => {
    let started = false;
    let letGo: (() => void) | undefined;
    const held = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    const receiver = createReceiver({ secret, logger: recordingLogger(), queue: createMemoryQueue() }).on(
      'leave.approved',
      async () => {
        started = true;
        await held;
      },
    );
    expect((await receiver.handle(await delivery())).status).toBe(202);
    await until(() => started, 'the handler to start');

    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const closing = receiver.close({ timeoutMs: 300 }).then(() => 'closed' as const);
    vi.setSystemTime(Date.now() - HOUR_MS);
    // Far past the 300 ms (a hang, not a slow close), on a real timer: the faked Date stands still.
    const ended = await Promise.race([closing, sleep(10_000, 'still closing' as const)]);
    vi.useRealTimers();
    letGo!();
    expect(ended).toBe('closed');

    const { items } = await receiver.deadLetters();
    expect(items).toHaveLength(1);
    expect(items[0]!.error).toMatchObject({ code: 'shutting_down' });
  });
});
