// close() when the queue's own close rejects (an app's queue whose flush fails after the drain): the rejection is
// the caller's, and ordering is settled all the same, so nothing of it touches the store once close() ended.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  byDefaultKeys,
  createMemoryQueue,
  createMemoryStore,
  createReceiver,
  type EventQueue,
} from 'workforce-webhooks';
import { recordingLogger } from '../support/logger.js';
import { signedLeave, until } from '../support/ordering-scenario.js';
import { refusingOrderingStore } from '../support/refusing-ordering-store.js';

const secret = 'whsec_close_queue_rejects';

// The memory queue, drained as ever, whose close then rejects with `error`.
const failingOnClose = (error: Error): EventQueue => {
  const queue = createMemoryQueue();
  const drain = queue.close.bind(queue);
  return Object.assign(queue, {
    close: async (options?: { readonly timeoutMs?: number }) => {
      await drain(options);
      throw error;
    },
  });
};

describe('close() when the queue close rejects, ordering on', () => {
  it('rejects with it, and stops trying a refused watermark write: nothing more is sent or logged', {
    timeout: 30_000,
  }, async () => {
    const { store, state } = refusingOrderingStore();
    const logger = recordingLogger();
    const failure = new Error('the queue could not flush');
    const receiver = createReceiver({
      secret,
      store,
      logger,
      leaseMs: 300,
      queue: failingOnClose(failure),
      ordering: { maxWaitMs: 1000 },
    }).on('leave.approved', () => {
      state.refusing = true;
    });
    const delivery = await signedLeave(secret, 'leave.approved', 1, crypto.randomUUID());
    expect((await receiver.handle(delivery)).status).toBe(202);
    await until(() => state.refused >= 1, 'a refused watermark write');

    await expect(receiver.close({ timeoutMs: 300 })).rejects.toBe(failure);
    const refusedAtClose = state.refused;
    const afterClose = logger.lines.length;
    // Past maxWaitMs, with many retry periods in it.
    await sleep(2000);

    expect(state.refused).toBe(refusedAtClose);
    expect(logger.lines.slice(afterClose).map((line) => line.msg)).toEqual([]);
    // Said once, by the close, as when the queue closes cleanly.
    expect(
      logger.lines.filter((line) => line.msg?.includes('closed while ordering watermark writes')),
    ).toHaveLength(1);
  });

  it("stops renewing the lease of a handler that outlives it: the record's next event runs on the next receiver", {
    timeout: 30_000,
  }, async () => {
    const store = createMemoryStore();
    const key = crypto.randomUUID();
    const leaseMs = 300;
    let started = false;
    let letGo: (() => void) | undefined;
    const held = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    const first = createReceiver({
      secret,
      store,
      logger: recordingLogger(),
      leaseMs,
      queue: failingOnClose(new Error('the queue could not flush')),
      ordering: { key: byDefaultKeys(), maxWaitMs: 60_000 },
    }).on('leave.requested', async () => {
      started = true;
      // Never looks at its signal: it runs on past the close.
      await held;
    });
    expect((await first.handle(await signedLeave(secret, 'leave.requested', 1, key))).status).toBe(202);
    await until(() => started, 'the handler to start');
    await expect(first.close({ timeoutMs: 300 })).rejects.toThrow('the queue could not flush');

    // A restart in the process: the next receiver on the same store, the first's handler still running.
    const ran: string[] = [];
    const second = createReceiver({
      secret,
      store,
      logger: recordingLogger(),
      leaseMs,
      queue: createMemoryQueue(),
      ordering: { key: byDefaultKeys(), maxWaitMs: 60_000 },
    }).on('leave.approved', (event) => {
      ran.push(event.id);
    });
    try {
      const approved = await signedLeave(secret, 'leave.approved', 2, key);
      expect((await second.handle(approved)).status).toBe(202);
      // Its lease lapses a lease after the close; renewed on, it would hold the key for maxWaitMs.
      await until(() => ran.length === 1, 'the newer event to run on the next receiver', 10_000);
      expect(ran).toEqual([approved.event.id]);
    } finally {
      letGo!();
      await second.close({ timeoutMs: 5000 });
    }
  });
});
