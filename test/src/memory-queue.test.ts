// The in-process queue: bounds, concurrency, retries, timeouts, dead letters, replay and drain.
import { describe, expect, it } from 'vitest';
import {
  createMemoryQueue,
  type DeadLetter,
  HandlerFailure,
  HandlerTimeoutError,
  type JobProcessor,
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

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

function started(process: JobProcessor, options: Parameters<typeof createMemoryQueue>[0] = {}) {
  const letters: DeadLetter[] = [];
  const queue = createMemoryQueue({ backoff: () => 1, ...options });
  queue.start({ process, onDeadLetter: async (letter) => void letters.push(letter), logger: silentLogger });
  return { queue, letters };
}

describe('createMemoryQueue', () => {
  it('runs jobs with at most `concurrency` at once', async () => {
    let running = 0;
    let peak = 0;
    const gate = deferred();
    const { queue } = started(
      async () => {
        running++;
        peak = Math.max(peak, running);
        await gate.promise;
        running--;
      },
      { concurrency: 3 },
    );
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => queue.enqueue(job(i))));
    await new Promise((r) => setTimeout(r, 10));
    expect(running).toBe(3);
    gate.resolve();
    await Promise.all(results.map((r) => (r.status === 'queued' ? r.settled : undefined)));
    expect(peak).toBe(3);
  });

  it('answers full past maxQueued, counting running jobs too', async () => {
    const gate = deferred();
    const { queue } = started(() => gate.promise, { maxQueued: 2, concurrency: 1 });
    expect((await queue.enqueue(job(1))).status).toBe('queued');
    expect((await queue.enqueue(job(2))).status).toBe('queued');
    expect((await queue.enqueue(job(3))).status).toBe('full');
    gate.resolve();
  });

  it('retries with the attempt number, then dead-letters with the last error', async () => {
    const attempts: number[] = [];
    const { queue, letters } = started(
      async (_, { attempt }) => {
        attempts.push(attempt);
        throw new Error(`boom ${attempt}`);
      },
      { attempts: 3 },
    );
    const result = await queue.enqueue(job(1));
    await (result.status === 'queued' ? result.settled : undefined);
    expect(attempts).toEqual([1, 2, 3]);
    expect(letters).toHaveLength(1);
    expect(letters[0]!.attempts).toBe(3);
    expect((letters[0]!.error as Error).message).toBe('boom 3');
    expect((await queue.deadLetters()).items.map((l) => l.event.id)).toEqual([job(1).event.id]);
  });

  it('waits the backoff between attempts', async () => {
    const delays: number[] = [];
    let calls = 0;
    const { queue } = started(
      async () => {
        if (++calls < 3) throw new Error('again');
      },
      {
        backoff: (attempt) => {
          delays.push(attempt);
          return 5;
        },
      },
    );
    const result = await queue.enqueue(job(1));
    await (result.status === 'queued' ? result.settled : undefined);
    expect(delays).toEqual([1, 2]);
  });

  it('keeps the handlers that succeeded across attempts', async () => {
    const seen: (readonly number[] | undefined)[] = [];
    const { queue } = started(async (data, { attempt }) => {
      seen.push(data.completed);
      if (attempt === 1) throw new HandlerFailure([new Error('second failed')], [0]);
    });
    const result = await queue.enqueue(job(1));
    await (result.status === 'queued' ? result.settled : undefined);
    expect(seen).toEqual([undefined, [0]]);
  });

  it('aborts an attempt past handlerTimeoutMs and counts it as a failure', async () => {
    let signal: AbortSignal | undefined;
    const { queue, letters } = started(
      (_, ctx) => {
        signal = ctx.signal;
        return new Promise(() => {});
      },
      { attempts: 1, handlerTimeoutMs: 20 },
    );
    const result = await queue.enqueue(job(1));
    await (result.status === 'queued' ? result.settled : undefined);
    expect(signal?.aborted).toBe(true);
    expect(letters[0]!.error).toBeInstanceOf(HandlerTimeoutError);
  });

  it('replays a dead letter from its first attempt', async () => {
    let fail = true;
    const attempts: number[] = [];
    const { queue } = started(
      async (_, { attempt }) => {
        attempts.push(attempt);
        if (fail) throw new Error('down');
      },
      { attempts: 1 },
    );
    const first = await queue.enqueue(job(7));
    await (first.status === 'queued' ? first.settled : undefined);
    fail = false;
    expect(await queue.replay(job(7).event.id)).toBe(true);
    expect(await queue.replay('unknown')).toBe(false);
    await queue.close();
    expect(attempts).toEqual([1, 1]);
    expect((await queue.deadLetters()).items).toHaveLength(0);
  });

  it('drains on close, then refuses new jobs', async () => {
    const done: number[] = [];
    const { queue } = started(
      async (data) => {
        await new Promise((r) => setTimeout(r, 5));
        done.push(Number(data.deliveryId!.slice(1)));
      },
      { concurrency: 2 },
    );
    for (let i = 0; i < 6; i++) await queue.enqueue(job(i));
    await queue.close({ timeoutMs: 5000 });
    expect(done.sort()).toEqual([0, 1, 2, 3, 4, 5]);
    await expect(queue.enqueue(job(9))).rejects.toBeInstanceOf(WebhookError);
  });

  it('hands what cannot finish before the close timeout to onDeadLetter, nothing dropped silently', async () => {
    let signal: AbortSignal | undefined;
    const { queue, letters } = started(
      (_, ctx) => {
        signal = ctx.signal;
        return new Promise(() => {});
      },
      { concurrency: 1, handlerTimeoutMs: 60_000 },
    );
    await queue.enqueue(job(1));
    await queue.enqueue(job(2));
    await queue.close({ timeoutMs: 30 });
    expect(signal?.aborted).toBe(true);
    expect(letters.map((l) => l.event.id).sort()).toEqual([job(1).event.id, job(2).event.id]);
    expect(letters.every((l) => (l.error as WebhookError).code === 'shutting_down')).toBe(true);
  });

  it('waits on close for the onDeadLetter call of a job that just failed its last attempt', async () => {
    // The memory queue's dead letters die with the process: onDeadLetter is where an app keeps them.
    let recorded = false;
    let failed!: () => void;
    const lastAttempt = new Promise<void>((resolve) => {
      failed = resolve;
    });
    const queue = createMemoryQueue({ attempts: 1 });
    queue.start({
      process: async () => {
        failed();
        throw new Error('always fails');
      },
      onDeadLetter: async () => {
        await new Promise((r) => setTimeout(r, 50));
        recorded = true;
      },
      logger: silentLogger,
    });
    await queue.enqueue(job(1));
    await lastAttempt;
    await new Promise((r) => setTimeout(r, 5)); // its onDeadLetter call is under way
    await queue.close({ timeoutMs: 5000 });
    expect(recorded).toBe(true);
  });

  it.each([
    ['slow', () => new Promise<void>((r) => setTimeout(r, 2000))],
    ['never settling', () => new Promise<void>(() => {})],
  ])(
    'ends close() within its timeout when onDeadLetter is %s for what it abandons, and calls it for each',
    async (_, hook) => {
      const called: string[] = [];
      const queue = createMemoryQueue({ concurrency: 1 });
      queue.start({
        // One job running (it stops at its signal), one waiting behind it: close() abandons both.
        process: (_, ctx) =>
          new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))),
        onDeadLetter: (letter) => {
          called.push(letter.event.id);
          return hook();
        },
        logger: silentLogger,
      });
      await queue.enqueue(job(1));
      await queue.enqueue(job(2));
      await new Promise((r) => setTimeout(r, 20));
      const started = performance.now();
      await queue.close({ timeoutMs: 100 });
      const took = performance.now() - started;
      expect(took).toBeGreaterThanOrEqual(95);
      expect(took).toBeLessThan(400);
      expect(called.sort()).toEqual([job(1).event.id, job(2).event.id]);
    },
  );

  it('retries after 1 s when the backoff itself throws, and logs it', async () => {
    const attempts: number[] = [];
    const logged: string[] = [];
    const queue = createMemoryQueue({
      attempts: 2,
      backoff: () => {
        throw new Error('bad backoff');
      },
    });
    const letters: DeadLetter[] = [];
    queue.start({
      process: async (_, { attempt }) => {
        attempts.push(attempt);
        throw new Error(`boom ${attempt}`);
      },
      onDeadLetter: async (letter) => void letters.push(letter),
      logger: { ...silentLogger, error: (_fields, message) => void logged.push(message ?? '') },
    });
    const result = await queue.enqueue(job(1));
    expect(result.status).toBe('queued');
    await (result.status === 'queued' ? result.settled : undefined);
    expect(attempts).toEqual([1, 2]);
    expect(letters.map((l) => (l.error as Error).message)).toEqual(['boom 2']);
    expect(logged.some((m) => m.includes('backoff failed'))).toBe(true);
  });

  it('serves one receiver', () => {
    const { queue } = started(async () => {});
    expect(() =>
      queue.start({ process: async () => {}, onDeadLetter: async () => {}, logger: silentLogger }),
    ).toThrow(/one receiver/);
  });

  it.each([{ concurrency: 0 }, { maxQueued: -1 }, { attempts: 1.5 }])('refuses %j', (options) => {
    expect(() => createMemoryQueue(options)).toThrow(/positive integer/);
  });
});
