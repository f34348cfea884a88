// close() while a record's watermark write is still refused by the store and tried again: the process may exit once
// close resolves, and a write never landed lets an older event of the record run over the newer one later (spec rule
// 4). close waits for the write within its timeoutMs, and says so at error level when it could not.
import { describe, expect, it } from 'vitest';
import { createMemoryQueue, createReceiver } from 'workforce-webhooks';
import { markOf } from '../../src/ordering-mark.js';
import { recordingLogger } from '../support/logger.js';
import { signedLeave, until } from '../support/ordering-scenario.js';
import { refusingOrderingStore } from '../support/refusing-ordering-store.js';

const secret = 'whsec_ordering_close_pending';

const refusingWatermarks = () => refusingOrderingStore();

// A receiver whose one event's handlers end just as the store starts refusing watermark writes.
async function closingWithRefusedWrite() {
  const { store, state, watermark } = refusingWatermarks();
  const logger = recordingLogger();
  const receiver = createReceiver({
    secret,
    store,
    logger,
    leaseMs: 600,
    queue: createMemoryQueue(),
    ordering: {},
  });
  receiver.on('leave.approved', () => {
    state.refusing = true;
  });
  const key = crypto.randomUUID();
  const delivery = await signedLeave(secret, 'leave.approved', 1, key);
  expect((await receiver.handle(delivery)).status).toBe(202);
  await until(() => state.refused >= 1, 'a refused watermark write');
  return { receiver, state, logger, key, mark: markOf(delivery.event), watermark };
}

const gaveUpOnClose = (logger: ReturnType<typeof recordingLogger>) =>
  logger.lines.filter(
    (line) => line.level === 'error' && line.msg?.includes('closed while ordering watermark'),
  );

describe('close() while a watermark write is refused and tried again', () => {
  it('waits for the write to land once the store takes it again, and says nothing more', async () => {
    const { receiver, state, logger, key, mark, watermark } = await closingWithRefusedWrite();
    let closed = false;
    const closing = receiver.close({ timeoutMs: 10_000 }).then(() => {
      closed = true;
    });
    await until(() => state.refused >= 2, 'the write tried again during close');
    expect(closed).toBe(false);
    state.refusing = false;
    await closing;
    expect(await watermark(key)).toBe(mark);
    expect(gaveUpOnClose(logger)).toEqual([]);
  });

  it('ends at its timeoutMs when the store still refuses it, logged at error level', async () => {
    const { receiver, logger, key, watermark } = await closingWithRefusedWrite();
    await receiver.close({ timeoutMs: 300 });
    expect(await watermark(key)).toBeUndefined();
    expect(gaveUpOnClose(logger)).toHaveLength(1);
  });
});
