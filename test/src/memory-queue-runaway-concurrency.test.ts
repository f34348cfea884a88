// The memory queue's concurrency counts the handlers that still run after their attempt was cut short.
import { describe, expect, it } from 'vitest';
import { createMemoryQueue, type DeadLetter, type Logger, type QueuedEvent } from 'workforce-webhooks';

const job = (n: number): QueuedEvent => ({
  event: {
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    type: 'leave.approved',
    apiVersion: '2026-10-15',
    occurredAt: '2026-11-21T00:00:00.000Z',
    organizationId: '00000000-0000-4000-8000-000000000001',
    data: {},
  },
  deliveryId: `d${n}`,
});

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const turns = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function recording(): { logger: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const none = (): void => {};
  return {
    logger: { debug: none, info: none, error: none, warn: (_, msg) => void warnings.push(msg ?? '') },
    warnings,
  };
}

describe('a memory queue whose handlers ignore their signal', () => {
  it('starts no other event in the slot of a handler cut on its time limit until that handler settles', {
    timeout: 120_000,
  }, async () => {
    const letters: DeadLetter[] = [];
    const lettered = deferred();
    const stuck = deferred();
    const started: string[] = [];
    let running = 0;
    let peak = 0;
    const { logger, warnings } = recording();
    const queue = createMemoryQueue({ concurrency: 1, attempts: 1, handlerTimeoutMs: 5000 });
    queue.start({
      // Ignores ctx.signal: runs on after its attempt is cut, until the test lets it go.
      process: async (data) => {
        started.push(data.deliveryId!);
        running++;
        peak = Math.max(peak, running);
        try {
          if (data.deliveryId === 'd1') await stuck.promise;
        } finally {
          running--;
        }
      },
      onDeadLetter: async (letter) => {
        letters.push(letter);
        lettered.resolve();
      },
      logger,
    });
    await queue.enqueue(job(1));
    const second = await queue.enqueue(job(2));
    await lettered.promise;
    expect(letters.map((letter) => letter.deliveryId)).toEqual(['d1']);
    // Its attempt ended; its handler did not: the one slot is still taken.
    await turns(500);
    expect(started).toEqual(['d1']);
    stuck.resolve();
    if (second.status === 'queued') await second.settled;
    expect(started).toEqual(['d1', 'd2']);
    expect(peak).toBe(1);
    expect(warnings).toEqual([]);
    await queue.close({ timeoutMs: 5000 });
  });

  it('frees the slot one more time limit after the cut of a handler that never settles, and says why once', {
    timeout: 120_000,
  }, async () => {
    const started: string[] = [];
    const { logger, warnings } = recording();
    const queue = createMemoryQueue({ concurrency: 1, attempts: 1, handlerTimeoutMs: 200 });
    queue.start({
      process: async (data) => {
        started.push(data.deliveryId!);
        if (data.deliveryId !== 'd3') await new Promise(() => {});
      },
      onDeadLetter: async () => {},
      logger,
    });
    await queue.enqueue(job(1));
    await queue.enqueue(job(2));
    const last = await queue.enqueue(job(3));
    // A handler that never settles must not hold the queue for good: each frees its slot in the end.
    if (last.status !== 'queued' || last.settled === undefined) throw new Error('d3 was not queued');
    const ran = last.settled.then(() => 'ran' as const);
    expect(await Promise.race([ran, turns(60_000).then(() => 'stuck' as const)])).toBe('ran');
    expect(started).toEqual(['d1', 'd2', 'd3']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('ctx.signal');
    await queue.close({ timeoutMs: 5000 });
  });
});
