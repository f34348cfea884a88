// The queue contract (DESIGN "Processing modes"): every queue runs these same cases through its start hooks.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AttemptContext,
  type Backoff,
  CURRENT_API_VERSION,
  type DeadLetter,
  discardDeadLetters,
  type EventQueue,
  HandlerFailure,
  HandlerTimeoutError,
  type QueuedEvent,
  replayDeadLetters,
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
export function queuedEvent(extra: Partial<QueuedEvent> = {}, type = 'leave.approved'): QueuedEvent {
  const event = {
    id: crypto.randomUUID(),
    type,
    apiVersion: CURRENT_API_VERSION,
    occurredAt: '2026-10-15T09:00:00.000Z',
    organizationId: '00000000-0000-4000-8000-000000000001',
    data: { leaveRequestId: crypto.randomUUID(), startDate: '2026-11-02T00:00:00' },
  };
  return { event, deliveryId: crypto.randomUUID(), ...extra } as QueuedEvent;
}

// 'answered', the code of the error it rejected with, or 'hung' when it did neither within `ms`.
async function outcomeWithin(run: () => Promise<unknown> | undefined, ms: number): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    Promise.resolve(run()).then(
      () => 'answered',
      (error: unknown) => String((error as { code?: unknown }).code ?? error),
    ),
    new Promise<string>((resolve) => {
      timer = setTimeout(resolve, ms, 'hung');
    }),
  ]);
  clearTimeout(timer);
  return outcome;
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

    it('hands the next attempt the handlers that had succeeded when a time limit cut the attempt short', async () => {
      const done = deferred();
      const cuts: unknown[] = [];
      const { queue, attempts } = started({ attempts: 3, handlerTimeoutMs: 100 }, async ({ ctx }) => {
        if (ctx.attempt > 1) return done.resolve();
        // The dispatcher's part: handlers 0 and 2 succeeded, handler 1 still runs when the time is up.
        const succeeded = [0];
        ctx.watch?.({
          cut: (reason) => {
            cuts.push(reason);
            return succeeded;
          },
        });
        succeeded.push(2);
        await new Promise(() => {});
      });
      await queue.enqueue(queuedEvent());
      await done.promise;
      expect(cuts).toHaveLength(1);
      expect(cuts[0]).toBeInstanceOf(HandlerTimeoutError);
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
      const listed = (await queue.deadLetters()).items;
      expect(listed.map((l) => [l.event.id, l.attempts])).toEqual([[job.event.id, 3]]);
      expect(typeof listed[0]!.failedAt).toBe('number');

      failing = false;
      expect(await queue.replay(job.event.id)).toBe(true);
      await replayed.promise;
      const last = attempts.at(-1)!;
      expect(last.ctx.attempt).toBe(1);
      expect(last.job.completed ?? []).toEqual([]);
      expect((await queue.deadLetters()).items).toEqual([]);
      expect(await queue.replay(job.event.id)).toBe(false);
      expect(await queue.replay(crypto.randomUUID())).toBe(false);
      expect(dead).toHaveLength(1);
    });

    it('runs a dead letter once for concurrent replays of it: one answers true, the others false', async () => {
      let failing = true;
      const sentinel = queuedEvent();
      const sentinelRan = deferred();
      const { queue, attempts, deadOnce } = started({ attempts: 1, concurrency: 1 }, ({ job }) => {
        if (job.event.id === sentinel.event.id) return sentinelRan.resolve();
        if (failing) throw new HandlerFailure([new Error('down')], []);
      });
      const job = queuedEvent();
      await queue.enqueue(job);
      await deadOnce;
      failing = false;
      const answers = await Promise.all(Array.from({ length: 5 }, () => queue.replay(job.event.id)));
      expect(answers.filter(Boolean)).toHaveLength(1);
      // One at a time, in order: once the event queued after the replays has run, every replay run has too.
      await queue.enqueue(sentinel);
      await sentinelRan.promise;
      expect(attempts.filter((a) => a.job.event.id === job.event.id)).toHaveLength(2);
      expect((await queue.deadLetters()).items).toEqual([]);
    });

    it('drops a dead letter once for concurrent discards of it: one answers true, the others false', async () => {
      const { queue, dead } = started({ attempts: 1, concurrency: 4 }, () => {
        throw new HandlerFailure([new Error('down')], []);
      });
      const jobs = Array.from({ length: 10 }, () => queuedEvent());
      for (const job of jobs) await queue.enqueue(job);
      await expect.poll(() => dead.length).toBe(jobs.length);
      for (const job of jobs) {
        const answers = await Promise.all(Array.from({ length: 3 }, () => queue.discard(job.event.id)));
        expect(answers.filter(Boolean)).toHaveLength(1);
      }
      expect((await queue.deadLetters()).items).toEqual([]);
    });

    it('replays only the failure it was asked for: a letter that failed again since it was read is left', async () => {
      const { queue, dead } = started({ attempts: 1 }, async () => {
        await sleep(5); // the second failure lands at a later millisecond than the first
        throw new HandlerFailure([new Error('down')], []);
      });
      const job = queuedEvent();
      await queue.enqueue(job);
      await expect.poll(() => dead.length).toBe(1);
      const [first] = (await queue.deadLetters()).items;
      expect(await queue.replay(job.event.id, { failedAt: first!.failedAt })).toBe(true);
      await expect.poll(() => dead.length).toBe(2);
      const [again] = (await queue.deadLetters()).items;
      expect(again!.failedAt).toBeGreaterThan(first!.failedAt);
      // A bulk replay that listed the first failure, running after another replay and the new failure: no rerun.
      expect(await queue.replay(job.event.id, { failedAt: first!.failedAt })).toBe(false);
      expect((await queue.deadLetters()).items).toHaveLength(1);
      expect(await queue.replay(job.event.id, { failedAt: again!.failedAt })).toBe(true);
    });

    it('discards only the failure it was asked for: a letter that failed again since it was read is left', async () => {
      const { queue, dead } = started({ attempts: 1 }, async () => {
        await sleep(5); // the second failure lands at a later millisecond than the first
        throw new HandlerFailure([new Error('down')], []);
      });
      const job = queuedEvent();
      await queue.enqueue(job);
      await expect.poll(() => dead.length).toBe(1);
      await expect.poll(async () => (await queue.deadLetters()).items.length).toBe(1);
      const [first] = (await queue.deadLetters()).items;
      expect(await queue.replay(job.event.id)).toBe(true);
      await expect.poll(() => dead.length).toBe(2);
      await expect
        .poll(async () => (await queue.deadLetters()).items[0]?.failedAt ?? 0)
        .toBeGreaterThan(first!.failedAt);
      const [again] = (await queue.deadLetters()).items;
      // A bulk discard that listed the first failure, running after a replay and the new failure: the new one stays.
      expect(await queue.discard(job.event.id, { failedAt: first!.failedAt })).toBe(false);
      expect((await queue.deadLetters()).items.map((l) => l.event.id)).toEqual([job.event.id]);
      expect(await queue.discard(job.event.id, { failedAt: again!.failedAt })).toBe(true);
      expect((await queue.deadLetters()).items).toEqual([]);
      expect(await queue.discard(job.event.id, { failedAt: again!.failedAt })).toBe(false);
    });

    it("pages ties (many letters failing in one millisecond) without a repeat or a skip while letters read so far, the cursor's own among them, are discarded or replayed", async () => {
      const count = 60;
      const gate = deferred();
      let arrived = 0;
      const { queue, dead } = started({ attempts: 1, concurrency: count }, async () => {
        // Every first attempt fails at the same moment, so that many failures share a millisecond.
        if (++arrived === count) gate.resolve();
        await gate.promise;
        throw new HandlerFailure([new Error('down')], []);
      });
      const jobs = Array.from({ length: count }, (_, i) =>
        queuedEvent({}, i % 3 === 0 ? 'employee.updated' : 'leave.approved'),
      );
      await Promise.all(jobs.map((job) => queue.enqueue(job)));
      await expect.poll(() => dead.length, { timeout: 15_000 }).toBe(count);
      const discarded = new Set<string>();
      let replays = 0;
      const all = async (type?: string): Promise<string[]> =>
        (await queue.deadLetters({ limit: 1000, ...(type === undefined ? {} : { type }) })).items.map(
          (l) => l.event.id,
        );

      for (const type of [undefined, 'leave.*']) {
        // Every letter is listed (a replayed one has failed again) before the walk starts.
        await expect.poll(async () => (await all()).length).toBe(count - discarded.size);
        const listed = await all(type);
        const gone = new Set<string>(); // discarded or replayed during this walk
        const seen: string[] = [];
        let cursor: string | undefined;
        let round = 0;
        do {
          const page = await queue.deadLetters({ limit: 4, cursor, ...(type === undefined ? {} : { type }) });
          seen.push(...page.items.map((l) => l.event.id));
          cursor = page.cursor;
          // Between two reads: the cursor's own letter is discarded or replayed (it fails again, newer than the
          // cursor), and one read earlier is discarded.
          const last = page.items.at(-1)?.event.id;
          if (last !== undefined && !gone.has(last)) {
            gone.add(last);
            if (round % 2 === 1 && (await queue.replay(last))) replays++;
            else if (await queue.discard(last)) discarded.add(last);
          }
          const earlier = seen[Math.floor(seen.length / 2)];
          if (earlier !== undefined && !gone.has(earlier) && (await queue.discard(earlier))) {
            gone.add(earlier);
            discarded.add(earlier);
          }
          round++;
        } while (cursor !== undefined);
        const kept = listed.filter((id) => !gone.has(id));
        expect(seen.filter((id, i) => seen.indexOf(id) !== i && !gone.has(id))).toEqual([]);
        expect(kept.filter((id) => !seen.includes(id))).toEqual([]);
        expect(round).toBeGreaterThan(4);
        await expect.poll(() => dead.length).toBe(count + replays);
      }
    });

    it('pages dead letters newest first; a cursor neither repeats nor skips one as others arrive', async () => {
      const { queue, dead } = started({ attempts: 1, concurrency: 4 }, () => {
        throw new HandlerFailure([new Error('down')], []);
      });
      const jobs = Array.from({ length: 7 }, () => queuedEvent());
      for (const job of jobs) await queue.enqueue(job);
      await expect.poll(() => dead.length).toBe(7);
      // BullMQ records the failure just after onDeadLetter: wait until every one is listed.
      await expect.poll(async () => (await queue.deadLetters()).items.length).toBe(7);

      await expect(queue.deadLetters({ limit: 0 })).rejects.toThrow(/limit/);
      expect((await queue.deadLetters({ limit: 5000 })).items).toHaveLength(7);
      const first = await queue.deadLetters({ limit: 3 });
      expect(first.items).toHaveLength(3);
      expect(typeof first.cursor).toBe('string');

      // A newer dead letter arrives between two reads: it is on a new first page, not on the next one.
      const late = queuedEvent();
      await queue.enqueue(late);
      await expect.poll(() => dead.length).toBe(8);
      await expect
        .poll(async () => (await queue.deadLetters({ limit: 1 })).items[0]?.event.id)
        .toBe(late.event.id);
      const second = await queue.deadLetters({ limit: 3, cursor: first.cursor });
      const third = await queue.deadLetters({ limit: 3, cursor: second.cursor });
      expect([second.items.length, third.items.length]).toEqual([3, 1]);
      expect(third.cursor).toBeUndefined();
      const read = [...first.items, ...second.items, ...third.items];
      expect(read.map((l) => l.event.id).sort()).toEqual(jobs.map((j) => j.event.id).sort());
      const times = read.map((l) => l.failedAt);
      expect(times).toEqual([...times].sort((a, b) => b - a));
      await expect(queue.deadLetters({ cursor: 'not a cursor' })).rejects.toThrow(/cursor/);
    });

    it('filters dead letters by type pattern and by failure time, still paged', async () => {
      const { queue, dead } = started({ attempts: 1, concurrency: 1 }, () => {
        throw new HandlerFailure([new Error('down')], []);
      });
      const typed = (type: string): QueuedEvent => {
        const job = queuedEvent();
        return { ...job, event: { ...job.event, type } };
      };
      const early = [typed('leave.approved'), typed('payroll.paid')];
      for (const job of early) await queue.enqueue(job);
      await expect.poll(() => dead.length).toBe(2);
      await expect.poll(async () => (await queue.deadLetters()).items.length).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const middle = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 20));
      const late = [
        typed('leave.approved'),
        typed('leave.rejected'),
        typed('payroll.paid'),
        typed('leave.approved'),
      ];
      for (const job of late) await queue.enqueue(job);
      await expect.poll(async () => (await queue.deadLetters()).items.length).toBe(6);

      const ids = async (query: Parameters<EventQueue['deadLetters']>[0]) => {
        const read: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await queue.deadLetters({ ...query, limit: 1, cursor });
          read.push(...page.items.map((l) => l.event.id));
          cursor = page.cursor;
        } while (cursor !== undefined);
        return read.sort();
      };
      const idsOf = (jobs: QueuedEvent[]) => jobs.map((j) => j.event.id).sort();
      const all = [...early, ...late];
      expect(await ids({ type: 'leave.*' })).toEqual(
        idsOf(all.filter((j) => j.event.type.startsWith('leave.'))),
      );
      expect(await ids({ type: 'payroll.paid' })).toEqual(
        idsOf(all.filter((j) => j.event.type === 'payroll.paid')),
      );
      expect(await ids({ since: middle })).toEqual(idsOf(late));
      expect(await ids({ until: new Date(middle) })).toEqual(idsOf(early));
      expect(await ids({ type: 'leave.approved', since: new Date(middle) })).toEqual(
        idsOf(late.filter((j) => j.event.type === 'leave.approved')),
      );
      expect((await queue.deadLetters({ type: 'nothing.*' })).items).toEqual([]);
      await expect(queue.deadLetters({ since: Number.NaN })).rejects.toThrow(/since/);
    });

    it('takes filter times as a Date, epoch milliseconds or an ISO 8601 string alike', async () => {
      const { queue, dead } = started({ attempts: 1, concurrency: 1 }, () => {
        throw new HandlerFailure([new TypeError('down')], []);
      });
      for (const type of ['leave.approved', 'employee.updated', 'leave.cancelled', 'shift.created']) {
        await queue.enqueue(queuedEvent({}, type));
        // Failures a few milliseconds apart, so the times split them.
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await expect.poll(() => dead.length).toBe(4);
      await expect.poll(async () => (await queue.deadLetters()).items.length).toBe(4);
      const all = (await queue.deadLetters()).items;
      const ids = async (query: Parameters<EventQueue['deadLetters']>[0]): Promise<string[]> =>
        (await queue.deadLetters(query)).items.map((l) => l.event.id);
      const middle = all[1]!.failedAt;
      const newer = all.filter((l) => l.failedAt >= middle).map((l) => l.event.id);
      const older = all.filter((l) => l.failedAt < middle).map((l) => l.event.id);
      for (const at of [middle, new Date(middle), new Date(middle).toISOString()]) {
        expect(await ids({ since: at })).toEqual(newer);
        expect(await ids({ until: at })).toEqual(older);
      }
      await expect(queue.deadLetters({ since: 'yesterday' })).rejects.toThrow(/since/);
      await expect(queue.deadLetters({ until: String(middle) })).rejects.toThrow(/until/);
    });

    it('replays and discards the matches of a filter, each once, with two calls at the same time', async () => {
      let failing = true;
      const sentinel = queuedEvent();
      const sentinelRan = deferred();
      const { queue, attempts, dead } = started({ attempts: 1, concurrency: 1 }, ({ job }) => {
        if (job.event.id === sentinel.event.id) return sentinelRan.resolve();
        if (failing) throw new HandlerFailure([new Error('down')], []);
      });
      const jobs = Array.from({ length: 12 }, (_, i) =>
        queuedEvent({}, i % 2 === 0 ? 'leave.approved' : 'employee.updated'),
      );
      for (const job of jobs) await queue.enqueue(job);
      await expect.poll(() => dead.length).toBe(12);
      await expect.poll(async () => (await queue.deadLetters()).items.length).toBe(12);
      failing = false;

      const progress: number[] = [];
      const results = await Promise.all([
        replayDeadLetters(
          queue,
          { type: 'leave.*' },
          { concurrency: 3, onProgress: (p) => progress.push(p.done) },
        ),
        replayDeadLetters(queue, { type: 'leave.*' }, { concurrency: 2 }),
      ]);
      expect(results[0]!.replayed + results[1]!.replayed).toBe(6);
      expect(results[0]!.failed + results[1]!.failed).toBe(0);
      expect(progress.at(-1)).toBeGreaterThan(0);
      // One at a time, in order: once the event queued after the replays has run, every replay has too.
      await queue.enqueue(sentinel);
      await sentinelRan.promise;
      for (const job of jobs) {
        const runs = attempts.filter((a) => a.job.event.id === job.event.id).length;
        expect(runs).toBe(job.event.type === 'leave.approved' ? 2 : 1);
      }
      expect((await queue.deadLetters({ type: 'leave.*' })).items).toEqual([]);

      const discarded = await Promise.all([
        discardDeadLetters(queue, { type: 'employee.*' }),
        discardDeadLetters(queue, { type: 'employee.*' }, { concurrency: 1 }),
      ]);
      expect(discarded[0]! + discarded[1]!).toBe(6);
      expect((await queue.deadLetters()).items).toEqual([]);
      expect(await queue.discard(jobs[1]!.event.id)).toBe(false);
      expect(await queue.replay(jobs[1]!.event.id)).toBe(false);
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

    it('runs an inline hand-over after the backoff of the attempt it made, not at once', async () => {
      const asked: number[] = [];
      const done = deferred();
      const backoff = (attempt: number): number => {
        asked.push(attempt);
        return 500;
      };
      const { queue, attempts } = started({ attempts: 3, backoff }, () => done.resolve());
      const enqueuedAt = performance.now();
      await queue.enqueue(queuedEvent({ attemptsMade: 1 }), new HandlerFailure([new Error('down')], []));
      await done.promise;
      // A timer may fire a millisecond early.
      expect(performance.now() - enqueuedAt).toBeGreaterThanOrEqual(495);
      expect(asked).toEqual([1]);
      expect(attempts.map((a) => a.ctx.attempt)).toEqual([2]);
    });

    it('makes an inline hand-over with no attempt left a dead letter at once, with its attempts, never run', async () => {
      const { queue, attempts, dead, deadOnce } = started({ attempts: 2 }, () => {
        throw new HandlerFailure([new Error('down again')], []);
      });
      const job = queuedEvent({ attemptsMade: 2, completed: [0] });
      await queue.enqueue(job, new HandlerFailure([new TypeError('down')], [0]));
      await deadOnce;
      expect(attempts).toEqual([]);
      expect(dead[0]).toMatchObject({ event: job.event, attempts: 2 });
      expect(dead[0]!.error).toBeInstanceOf(Error);
      await expect
        .poll(async () =>
          (await queue.deadLetters()).items.map((letter) => [letter.event.id, letter.attempts]),
        )
        .toEqual([[job.event.id, 2]]);
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

    it('resolves a second close() with the first, when the drain ends', async () => {
      const gate = deferred();
      const running = deferred();
      const { queue } = started({}, async () => {
        running.resolve();
        await gate.promise;
      });
      await queue.enqueue(queuedEvent());
      await running.promise;
      let firstEnded = false;
      const first = queue.close({ timeoutMs: 600_000 }).then(() => {
        firstEnded = true;
      });
      const second = queue.close({ timeoutMs: 600_000 });
      gate.resolve();
      await second;
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(firstEnded).toBe(true);
      await first;
    });

    it('waits with no limit for close({ timeoutMs: Infinity }), and refuses a timeout no timer can keep, staying open', async () => {
      const gate = deferred();
      const running = deferred();
      let signal: AbortSignal | undefined;
      const { queue } = started({}, async ({ ctx }) => {
        signal = ctx.signal;
        running.resolve();
        await gate.promise;
      });
      for (const timeoutMs of [Number.NaN, -1, 2 ** 31, '1000' as unknown as number])
        await expect(queue.close({ timeoutMs })).rejects.toThrow(/timeoutMs must be/);
      await queue.enqueue(queuedEvent());
      await running.promise;
      let closed = false;
      const closing = queue.close({ timeoutMs: Number.POSITIVE_INFINITY }).then(() => {
        closed = true;
      });
      // A timer given Infinity would fire at once and abort the running attempt.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(closed).toBe(false);
      expect(signal?.aborted).toBe(false);
      gate.resolve();
      await closing;
      expect(signal?.aborted).toBe(false);
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

    it('answers its dead-letter calls after close or refuses them with shutting_down, at once, never hanging', async () => {
      const { queue, deadOnce } = started({ attempts: 1 }, () => {
        throw new HandlerFailure([new TypeError('down')], []);
      });
      const job = queuedEvent();
      await queue.enqueue(job);
      await deadOnce;
      await expect.poll(async () => (await queue.deadLetters()).items.length, { timeout: 5000 }).toBe(1);
      await queue.close({ timeoutMs: 2000 });
      // BullMQ's closed Postgres backend never answered these: each is given 2 s (a closed queue needs none).
      const calls = {
        deadLetters: () => queue.deadLetters(),
        counts: () => queue.counts?.(),
        replay: () => queue.replay(job.event.id),
        discard: () => queue.discard(job.event.id),
        replayDeadLetters: () => replayDeadLetters(queue),
        discardDeadLetters: () => discardDeadLetters(queue),
      };
      const outcomes = await Promise.all(
        Object.entries(calls).map(async ([call, run]) => [call, await outcomeWithin(run, 2000)] as const),
      );
      const expected = Object.fromEntries(
        Object.keys(calls).map((call) => [call, expect.stringMatching(/^(answered|shutting_down)$/)]),
      );
      expect(Object.fromEntries(outcomes)).toEqual(expected);
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
