// The queue contract (DESIGN "Processing modes"): every queue runs these same cases through its start hooks.
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AttemptContext,
  type Backoff,
  CURRENT_API_VERSION,
  type DeadLetter,
  type EventQueue,
  HandlerFailure,
  HandlerTimeoutError,
  type QueuedEvent,
  silentLogger,
} from 'workforce-webhooks';

/** What the suite may ask of a queue; the rest is the queue's default. */
export interface QueueContractOptions {
  readonly concurrency?: number;
  readonly attempts?: number;
  readonly backoff?: Backoff;
  readonly handlerTimeoutMs?: number;
}

type Attempt = { readonly job: QueuedEvent; readonly ctx: AttemptContext };

/**
 * A job as the receiver enqueues it: a plain, valid event.
 * @example
 * await queue.enqueue(queuedEvent());
 */
export function queuedEvent(extra: Partial<QueuedEvent> = {}): QueuedEvent {
  const event = {
    id: crypto.randomUUID(),
    type: 'leave.approved',
    apiVersion: CURRENT_API_VERSION,
    occurredAt: '2026-10-15T09:00:00.000Z',
    organizationId: '00000000-0000-4000-8000-000000000001',
    data: { leaveRequestId: crypto.randomUUID(), startDate: '2026-11-02T00:00:00' },
  };
  return { event, deliveryId: crypto.randomUUID(), ...extra } as QueuedEvent;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * Runs the queue contract against the queues `create` makes (each started with the suite's own hooks).
 * @example
 * runQueueContract('memory', (options) => createMemoryQueue(options));
 */
export function runQueueContract(name: string, create: (options: QueueContractOptions) => EventQueue): void {
  const open: EventQueue[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((queue) => queue.close({ timeoutMs: 2000 })));
  });

  // A started queue whose processor is `process`, recording every attempt and dead letter.
  const started = (
    options: QueueContractOptions,
    process: (attempt: Attempt) => Promise<void> | void,
  ): { queue: EventQueue; attempts: Attempt[]; dead: DeadLetter[]; deadOnce: Promise<void> } => {
    const queue = create({ backoff: () => 1, ...options });
    open.push(queue);
    const attempts: Attempt[] = [];
    const dead: DeadLetter[] = [];
    const firstDead = deferred();
    queue.start({
      logger: silentLogger,
      process: async (job, ctx) => {
        attempts.push({ job, ctx });
        await process({ job, ctx });
      },
      onDeadLetter: async (letter) => {
        dead.push(letter);
        firstDead.resolve();
      },
    });
    return { queue, attempts, dead, deadOnce: firstDead.promise };
  };

  describe(`queue contract: ${name}`, () => {
    it('runs a queued event once, at attempt 1, with the event as enqueued', async () => {
      const done = deferred();
      const { queue, attempts } = started({}, () => done.resolve());
      const job = queuedEvent();
      expect(await queue.enqueue(job)).toMatchObject({ status: 'queued' });
      await done.promise;
      expect(attempts).toHaveLength(1);
      expect(attempts[0]!.job.event).toEqual(job.event);
      expect(attempts[0]!.job.deliveryId).toBe(job.deliveryId);
      expect(attempts[0]!.ctx.attempt).toBe(1);
      expect(attempts[0]!.ctx.signal.aborted).toBe(false);
    });

    it('retries a failing event with rising attempt numbers until it succeeds', async () => {
      const done = deferred();
      const { queue, attempts, dead } = started({ attempts: 5 }, ({ ctx }) => {
        if (ctx.attempt < 3) throw new HandlerFailure([new Error('flaky')], []);
        done.resolve();
      });
      await queue.enqueue(queuedEvent());
      await done.promise;
      expect(attempts.map((a) => a.ctx.attempt)).toEqual([1, 2, 3]);
      expect(dead).toEqual([]);
    });

    it('hands the next attempt the handlers that already succeeded', async () => {
      const done = deferred();
      const { queue, attempts } = started({ attempts: 3 }, ({ ctx }) => {
        if (ctx.attempt === 1) throw new HandlerFailure([new Error('second handler down')], [0, 2]);
        done.resolve();
      });
      await queue.enqueue(queuedEvent());
      await done.promise;
      expect(attempts[0]!.job.completed ?? []).toEqual([]);
      expect(attempts[1]!.job.completed).toEqual([0, 2]);
    });

    it('dead-letters an event after its last attempt, lists it, and replays it from attempt 1', async () => {
      let failing = true;
      const replayed = deferred();
      const { queue, attempts, dead, deadOnce } = started({ attempts: 3 }, ({ ctx }) => {
        if (failing) throw new HandlerFailure([new Error(`down at ${ctx.attempt}`)], [1]);
        replayed.resolve();
      });
      const job = queuedEvent();
      await queue.enqueue(job);
      await deadOnce;
      expect(attempts.map((a) => a.ctx.attempt)).toEqual([1, 2, 3]);
      expect(dead).toHaveLength(1);
      expect(dead[0]).toMatchObject({ event: job.event, deliveryId: job.deliveryId, attempts: 3 });
      expect(dead[0]!.error).toBeInstanceOf(Error);
      const listed = await queue.deadLetters();
      expect(listed.map((l) => [l.event.id, l.attempts])).toEqual([[job.event.id, 3]]);
      expect(typeof listed[0]!.failedAt).toBe('number');

      failing = false;
      expect(await queue.replay(job.event.id)).toBe(true);
      await replayed.promise;
      const last = attempts.at(-1)!;
      expect(last.ctx.attempt).toBe(1);
      expect(last.job.completed ?? []).toEqual([]);
      expect(await queue.deadLetters()).toEqual([]);
      expect(await queue.replay(job.event.id)).toBe(false);
      expect(await queue.replay(crypto.randomUUID())).toBe(false);
      expect(dead).toHaveLength(1);
    });

    it('goes on from the attempts an inline run already made', async () => {
      const { queue, attempts, dead, deadOnce } = started({ attempts: 3 }, () => {
        throw new HandlerFailure([new Error('down')], []);
      });
      await queue.enqueue(queuedEvent({ attemptsMade: 2, completed: [1] }));
      await deadOnce;
      expect(attempts.map((a) => a.ctx.attempt)).toEqual([3]);
      expect(attempts[0]!.job.completed).toEqual([1]);
      expect(dead[0]!.attempts).toBe(3);
    });

    it('runs no more events at once than its concurrency', async () => {
      const gate = deferred();
      let running = 0;
      let most = 0;
      let finished = 0;
      const all = deferred();
      const { queue } = started({ concurrency: 2 }, async () => {
        running++;
        most = Math.max(most, running);
        await gate.promise;
        running--;
        if (++finished === 6) all.resolve();
      });
      for (let i = 0; i < 6; i++) await queue.enqueue(queuedEvent());
      await expect.poll(() => running).toBe(2);
      gate.resolve();
      await all.promise;
      expect(most).toBe(2);
    });

    it('aborts an attempt past handlerTimeoutMs and retries it', async () => {
      const done = deferred();
      const reasons: unknown[] = [];
      const { queue, attempts } = started({ attempts: 2, handlerTimeoutMs: 100 }, async ({ ctx }) => {
        if (ctx.attempt === 2) return done.resolve();
        // A handler that never ends by itself; the timeout's abort is what stops it.
        await new Promise((_, reject) => {
          ctx.signal.addEventListener('abort', () => {
            reasons.push(ctx.signal.reason);
            reject(ctx.signal.reason);
          });
        });
      });
      await queue.enqueue(queuedEvent());
      await done.promise;
      expect(attempts.map((a) => a.ctx.attempt)).toEqual([1, 2]);
      expect(reasons[0]).toBeInstanceOf(HandlerTimeoutError);
    });

    it('drains running events on close, then refuses new ones', async () => {
      const gate = deferred();
      const running = deferred();
      let finished = false;
      const { queue } = started({}, async () => {
        running.resolve();
        await gate.promise;
        finished = true;
      });
      await queue.enqueue(queuedEvent());
      await running.promise;
      const closing = queue.close({ timeoutMs: 10_000 });
      setTimeout(gate.resolve, 50);
      await closing;
      expect(finished).toBe(true);
      await expect(queue.enqueue(queuedEvent())).rejects.toThrow();
    });

    it('aborts what still runs when close times out', async () => {
      const running = deferred();
      let signal: AbortSignal | undefined;
      const { queue } = started({ attempts: 1 }, async ({ ctx }) => {
        signal = ctx.signal;
        running.resolve();
        await new Promise((_, reject) =>
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
        );
      });
      await queue.enqueue(queuedEvent());
      await running.promise;
      await queue.close({ timeoutMs: 100 });
      expect(signal?.aborted).toBe(true);
    });

    it('serves one receiver: a second start, or an enqueue before start, is refused', async () => {
      const { queue } = started({}, () => {});
      expect(() =>
        queue.start({ logger: silentLogger, process: async () => {}, onDeadLetter: async () => {} }),
      ).toThrow(/one receiver/);
      const unstarted = create({});
      open.push(unstarted);
      await expect(unstarted.enqueue(queuedEvent())).rejects.toThrow(/not started/);
    });
  });
}
