// close() on the memory queue gives up at once a retry whose backoff ends past its wait, rather than waiting for it.
import { describe, expect, it } from 'vitest';
import {
  createMemoryQueue,
  type DeadLetter,
  type QueuedEvent,
  silentLogger,
  WebhookError,
} from 'workforce-webhooks';

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

const sleep = (ms: number) =>
  new Promise<'still waiting'>((resolve) => setTimeout(resolve, ms, 'still waiting'));

describe('close() of a memory queue with retries in backoff', () => {
  it('ends as soon as nothing left can finish in time: a backoff past its wait is a waiting dead letter at once', {
    timeout: 120_000,
  }, async () => {
    const letters: DeadLetter[] = [];
    const retried: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let first!: () => void;
    const failedOnce = new Promise<void>((resolve) => {
      first = resolve;
    });
    // A backoff of ten minutes: past the whole close window.
    const queue = createMemoryQueue({ attempts: 3, backoff: () => 600_000 });
    queue.start({
      process: async (data) => {
        if (data.deliveryId === 'd1') {
          first();
          throw new Error('down');
        }
        await gate;
        throw new Error('down too');
      },
      onDeadLetter: async (letter) => void letters.push(letter),
      onRetry: (data) => void retried.push(data.deliveryId!),
      logger: silentLogger,
    });
    await queue.enqueue(job(1));
    await failedOnce;
    await queue.enqueue(job(2));
    // d1 waits out its backoff; d2 runs and fails after close() began, with a backoff past it too.
    while ((await queue.counts!()).depth < 2 || retried.length === 0)
      await new Promise((r) => setTimeout(r, 5));
    const closing = queue.close({ timeoutMs: 100_000 });
    release();
    // Its window is 99 s: a close that waits for the backoffs would still be waiting after 30 s.
    expect(await Promise.race([closing.then(() => 'closed' as const), sleep(30_000)])).toBe('closed');
    expect(letters.map((letter) => letter.deliveryId).sort()).toEqual(['d1', 'd2']);
    for (const letter of letters) {
      expect(letter.attempts).toBe(1);
      expect(letter.waiting).toBe(true);
      expect(letter.error).toBeInstanceOf(WebhookError);
      expect((letter.error as WebhookError).code).toBe('shutting_down');
    }
    // Each failed attempt is reported once, as the retry that was to follow it: the waiting letter adds none.
    expect(retried.sort()).toEqual(['d1', 'd2']);
    expect((await queue.counts!()).depth).toBe(0);
  });

  it('still runs a retry whose backoff ends within the wait, and ends once it succeeded', {
    timeout: 120_000,
  }, async () => {
    const letters: DeadLetter[] = [];
    const attempts: number[] = [];
    const queue = createMemoryQueue({ attempts: 3, backoff: () => 200 });
    queue.start({
      process: async (_, { attempt }) => {
        attempts.push(attempt);
        if (attempt === 1) throw new Error('down once');
      },
      onDeadLetter: async (letter) => void letters.push(letter),
      logger: silentLogger,
    });
    await queue.enqueue(job(3));
    while (attempts.length === 0) await new Promise((r) => setTimeout(r, 5));
    await queue.close({ timeoutMs: 60_000 });
    expect(attempts).toEqual([1, 2]);
    expect(letters).toEqual([]);
  });
});
