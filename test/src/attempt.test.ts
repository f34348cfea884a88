// One attempt: its time limit, its abort, and what it keeps of the handlers that succeeded when it fails.
import { describe, expect, it } from 'vitest';
import { HandlerFailure, HandlerTimeoutError, type QueuedEvent, WebhookError } from 'workforce-webhooks';
import { startAttempt } from '../../src/attempt.js';
import { Watchdog } from '../../src/watchdog.js';

const job: QueuedEvent = {
  event: {
    id: '00000000-0000-4000-8000-000000000001',
    type: 'leave.approved',
    apiVersion: '2026-10-15',
    occurredAt: '2026-11-21T00:00:00.000Z',
    organizationId: '00000000-0000-4000-8000-000000000001',
    data: {},
  },
  deliveryId: 'd1',
};

const never = (): Promise<void> => new Promise(() => {});

describe('startAttempt', () => {
  it('asks the watcher once when cut short, and ends with a copy of what it had seen succeed', async () => {
    const cuts: unknown[] = [];
    const seen = [0];
    const attempt = startAttempt(
      (_, ctx) => {
        ctx.watch?.({
          cut: (reason) => {
            cuts.push(reason);
            return seen;
          },
        });
        return never();
      },
      job,
      { attempt: 1, timeoutMs: 20 },
    );
    await expect(attempt.done).rejects.toBeInstanceOf(HandlerTimeoutError);
    attempt.abort(new WebhookError('shutting_down', 'too late'));
    expect(cuts).toHaveLength(1);
    expect(cuts[0]).toBeInstanceOf(HandlerTimeoutError);
    expect(attempt.completed).toEqual([0]);
    // A handler that succeeds after the cut is not counted: the attempt already ended.
    seen.push(2);
    expect(attempt.completed).toEqual([0]);
  });

  it('gives the end hook the handlers a shutdown cut left done, under the one shared watchdog too', async () => {
    const ends: unknown[] = [];
    const attempt = startAttempt(
      (_, ctx) => {
        ctx.watch?.({ cut: () => [1, 3] });
        return never();
      },
      job,
      {
        attempt: 2,
        timeoutMs: 60_000,
        watchdog: new Watchdog(60_000),
        onEnd: (failure) => ends.push(failure),
      },
    );
    const reason = new WebhookError('shutting_down', 'closing');
    attempt.abort(reason);
    expect(ends).toEqual([{ error: reason, completed: [1, 3] }]);
  });

  it("keeps a thrown HandlerFailure's handlers, and none when nothing is known", async () => {
    const failing = startAttempt(
      async () => {
        throw new HandlerFailure([new Error('second down')], [0]);
      },
      job,
      { attempt: 1, timeoutMs: 1000 },
    );
    await expect(failing.done).rejects.toBeInstanceOf(HandlerFailure);
    expect(failing.completed).toEqual([0]);
    const unwatched = startAttempt(never, job, { attempt: 1, timeoutMs: 10 });
    await expect(unwatched.done).rejects.toBeInstanceOf(HandlerTimeoutError);
    expect(unwatched.completed).toBeUndefined();
  });

  it('never asks the watcher of an attempt that ended on its own', async () => {
    let cuts = 0;
    const attempt = startAttempt(
      async (_, ctx) => {
        ctx.watch?.({
          cut: () => {
            cuts++;
            return [];
          },
        });
      },
      job,
      { attempt: 1, timeoutMs: 1000 },
    );
    await attempt.done;
    attempt.abort(new WebhookError('shutting_down', 'closing'));
    expect(cuts).toBe(0);
    expect(attempt.completed).toBeUndefined();
  });
});
