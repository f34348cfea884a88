// An attempt that times itself with a limit past the longest timer (2^31 - 1 ms) is not cut short at once.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { QueuedEvent } from 'workforce-webhooks';
import { startAttempt } from '../../src/attempt.js';

const job: QueuedEvent = {
  event: {
    id: '00000000-0000-4000-8000-000000000002',
    type: 'leave.approved',
    apiVersion: '2026-10-15',
    occurredAt: '2026-11-21T00:00:00.000Z',
    organizationId: '00000000-0000-4000-8000-000000000001',
    data: {},
  },
  deliveryId: 'd2',
};

const warnings: string[] = [];
const onWarning = (warning: Error): void => void warnings.push(warning.name);

afterEach(() => {
  process.off('warning', onWarning);
  warnings.length = 0;
});

describe('startAttempt with a limit past the longest timer', () => {
  // A queue given "no limit" as a huge number (BullMQ's handlerTimeoutMs, a kept job's own timer): Node fires a
  // timer past 2^31 - 1 ms after 1 ms, which would cut every attempt short as timed out.
  it.each([2 ** 31, Number.MAX_SAFE_INTEGER])(
    'lets a handler of 50 ms end in success under %d ms',
    async (timeoutMs) => {
      process.on('warning', onWarning);
      let signal: AbortSignal | undefined;
      const attempt = startAttempt(
        async (_, ctx) => {
          signal = ctx.signal;
          await sleep(50);
        },
        job,
        { attempt: 1, timeoutMs },
      );
      await expect(attempt.done).resolves.toBeUndefined();
      expect(signal?.aborted).toBe(false);
      expect(warnings).not.toContain('TimeoutOverflowWarning');
    },
  );

  it('still lets go of handlers cut short, one limit later, with such a limit', async () => {
    const settled: boolean[] = [];
    let release!: () => void;
    const attempt = startAttempt(
      () =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
      job,
      { attempt: 1, timeoutMs: 2 ** 31, onSettled: (late) => void settled.push(late) },
    );
    attempt.abort(new Error('closing'));
    await expect(attempt.done).rejects.toThrow('closing');
    // Past its cut, the handler still holds its slot until it settles: not let go at once as "late".
    await sleep(50);
    expect(settled).toEqual([]);
    release();
    await sleep(0);
    expect(settled).toEqual([false]);
  });
});
