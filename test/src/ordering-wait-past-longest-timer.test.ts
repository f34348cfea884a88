// An event waiting for a key held longer than a timer can wait (ordering.maxWaitMs of weeks) waits, not spins.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore, OrderingWait } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { createOrdering } from '../../src/ordering.js';
import { MAX_TIMER_MS } from '../../src/timer-limit.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_ordering_long_wait';
const THIRTY_DAYS = 30 * 24 * 3600 * 1000;

const warnings: string[] = [];
const onWarning = (warning: Error): void => void warnings.push(warning.name);

afterEach(() => {
  process.off('warning', onWarning);
  warnings.length = 0;
});

describe('an ordering wait longer than the longest timer', () => {
  it('keeps the event waiting until the key is given up, instead of looking again at once without end', async () => {
    process.on('warning', onWarning);
    const store = createMemoryStore();
    const ordering = createOrdering({
      store: store.ordering,
      shared: false,
      leaseMs: 30_000,
      doneTtlMs: 60_000,
      maxWaitMs: THIRTY_DAYS,
      logger: recordingLogger(),
      onStale: undefined,
    });
    const key = crypto.randomUUID();
    // An older event of the record failed: it holds the key for its retries, up to maxWaitMs.
    await store.ordering!.enter(key, 'the failing event', 30_000, 'its run');
    await store.ordering!.hold(key, 'the failing event', THIRTY_DAYS, 'its run');
    const { event } = await createSignedDelivery({
      secret,
      type: 'leave.approved',
      data: { leaveRequestId: key } as never,
    });
    let ran = false;
    const wait = await ordering
      .wrap(async () => {
        ran = true;
      }, 'local')({ event, deliveryId: undefined }, { attempt: 1, signal: new AbortController().signal })
      .catch((error: unknown) => error);
    expect(wait).toBeInstanceOf(OrderingWait);
    // The setup: the store asks it to look again past the longest delay a timer keeps.
    expect((wait as OrderingWait).retryInMs).toBeGreaterThan(MAX_TIMER_MS);

    let ready = false;
    void (wait as OrderingWait).ready.then(() => {
      ready = true;
    });
    // A timer past 2^31 - 1 ms fires after 1 ms (Node warns of it): the queue would take the event again at once,
    // find the key busy, and go round again every millisecond for the whole wait.
    await sleep(50);
    expect(warnings).not.toContain('TimeoutOverflowWarning');
    expect(ready).toBe(false);

    // The key given up (the failing event dead-lettered): the wait ends at once.
    await ordering.deadLettered({
      event: { ...event, id: 'the failing event' },
      deliveryId: undefined,
      attempts: 3,
      error: new Error('always'),
      failedAt: Date.now(),
    });
    await (wait as OrderingWait).ready;
    expect(ready).toBe(true);
    expect(ran).toBe(false);
  });
});
