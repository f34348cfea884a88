// The receiver core through `handle`: the status table, both modes, dedupe, failures and shutdown.
import { describe, expect, it } from 'vitest';
import {
  ConfigurationError,
  createMemoryQueue,
  createMemoryStore,
  createReceiver,
  type DedupeStore,
  type EventQueue,
  type HandlerContext,
  type ReceiverOptions,
  type WorkforceEvent,
} from 'workforce-webhooks';
import { createApiClient } from 'workforce-webhooks/api';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_receiver_test';
const encoder = new TextEncoder();

async function delivery(type = 'leave.approved', overrides: { id?: string } = {}) {
  const signed = await createSignedDelivery({ secret, type, ...overrides });
  return { method: 'POST', headers: signed.headers, body: encoder.encode(signed.body), event: signed.event };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const fastQueue = (): EventQueue => createMemoryQueue({ backoff: () => 1, attempts: 3 });
// A memory queue that refuses its first enqueue (the backend down), then takes every job.
function refusingOnce(): { readonly queue: EventQueue; readonly refusals: number } {
  const inner = fastQueue();
  let refusals = 1;
  const queue: EventQueue = {
    start: (hooks) => inner.start(hooks),
    enqueue: (job) => (refusals-- > 0 ? Promise.reject(new Error('backend down')) : inner.enqueue(job)),
    deadLetters: (query) => inner.deadLetters(query),
    replay: (id) => inner.replay(id),
    discard: (id) => inner.discard(id),
    close: (options) => inner.close(options),
  };
  return {
    queue,
    get refusals() {
      return refusals;
    },
  };
}
const make = (options: Partial<ReceiverOptions> = {}) =>
  createReceiver({ secret, queue: fastQueue(), ...options });

describe('queue mode', () => {
  it('answers 202 before the handler runs, then runs it once with its context', async () => {
    const receiver = make();
    const calls: [WorkforceEvent, HandlerContext][] = [];
    receiver.on('leave.approved', (event, ctx) => void calls.push([event, ctx]));
    const input = await delivery();
    const response = await receiver.handle(input);
    expect(response.status).toBe(202);
    expect(JSON.parse(response.body)).toEqual({ received: true });
    await response.background;
    expect(calls).toHaveLength(1);
    const [event, ctx] = calls[0]!;
    expect(event).toEqual(input.event);
    expect(ctx.deliveryId).toBe(input.headers['svc-delivery-id']);
    expect(ctx.attempt).toBe(1);
    expect(ctx.signal.aborted).toBe(false);
    expect((await receiver.handle(input)).body).toBe('{"received":true,"duplicate":true}');
  });

  it('does not claim or queue a type no handler wants', async () => {
    const store = createMemoryStore();
    const receiver = make({ store });
    receiver.on('leave.*', () => {});
    const input = await delivery('payroll.paid');
    expect(JSON.parse((await receiver.handle(input)).body)).toEqual({ received: true, ignored: true });
    expect((await store.claim(input.event.id, 1000)).status).toBe('claimed');
  });

  it('works through a backlog of events whose handlers return at once, iteratively', async () => {
    // One slow event holds the only slot while 5 000 more wait; when it ends, the rest run back to back without
    // a promise each. They must neither recurse one stack frame per event nor be skipped.
    const receiver = make({ queue: createMemoryQueue({ concurrency: 1, maxQueued: 10_000 }) });
    const gate = deferred();
    const seen = new Set<string>();
    let slow: string | undefined;
    receiver.on('leave.approved', (event) => {
      if (event.id !== slow) return void seen.add(event.id);
      return gate.promise;
    });
    const first = await delivery();
    slow = first.event.id;
    expect((await receiver.handle(first)).status).toBe(202);
    const rest = await Promise.all(Array.from({ length: 5000 }, () => delivery()));
    const answers = await Promise.all(rest.map((input) => receiver.handle(input)));
    expect(answers.every((a) => a.status === 202)).toBe(true);
    expect(seen.size).toBe(0);
    gate.resolve();
    await Promise.all(answers.map((a) => a.background));
    expect(seen.size).toBe(5000);
    expect((await receiver.deadLetters()).items).toEqual([]);
  });

  it('answers before any handler code runs, even a handler that computes before its first await', async () => {
    const receiver = make();
    const order: string[] = [];
    receiver.on('leave.approved', () => {
      order.push('handler started');
      // A synchronous stretch of work: it must not sit between the delivery and its 202.
      const until = Date.now() + 50;
      while (Date.now() < until);
    });
    const input = await delivery();
    const first = await receiver.handle(input);
    order.push(`answered ${first.status}`);
    await first.background;
    await first.background;
    expect(order).toEqual(['answered 202', 'handler started']);
    expect(JSON.parse((await receiver.handle(input)).body)).toEqual({ received: true, duplicate: true });
    expect(order).toHaveLength(2);
  });

  it("takes any thenable from a store of the user's, and a synchronous throw as an outage", async () => {
    const inner = createMemoryStore();
    const thenable = <T>(value: Promise<T>): Promise<T> =>
      ({
        // biome-ignore lint/suspicious/noThenProperty: a thenable that is not a Promise is the point of this test.
        then: (ok: (v: T) => unknown, fail: (e: unknown) => unknown) => value.then(ok, fail),
      }) as Promise<T>;
    const foreign: DedupeStore = {
      claim: (id, ms) => thenable(inner.claim(id, ms)),
      renew: (id, token, ms) => thenable(inner.renew(id, token, ms)),
      complete: (id, token, ms) => thenable(inner.complete(id, token, ms)),
      release: (id, token) => thenable(inner.release(id, token)),
    };
    const receiver = make({ store: foreign });
    let runs = 0;
    receiver.on('leave.approved', () => void runs++);
    const input = await delivery();
    const first = await receiver.handle(input);
    expect(first.status).toBe(202);
    await first.background;
    expect(JSON.parse((await receiver.handle(input)).body)).toEqual({ received: true, duplicate: true });
    expect(runs).toBe(1);

    const throwing = make({
      store: {
        ...foreign,
        claim: () => {
          throw new Error('client not connected');
        },
      },
    });
    throwing.on('leave.approved', () => void runs++);
    expect(JSON.parse((await throwing.handle(await delivery())).body)).toEqual({
      error: 'store_unavailable',
    });
    expect(runs).toBe(1);
  });

  it('releases the claim when the queue refuses, so the sender retry is processed', async () => {
    const store = createMemoryStore();
    let refuse = true;
    const inner = fastQueue();
    const flaky: EventQueue = {
      start: (hooks) => inner.start(hooks),
      enqueue: (job) => (refuse ? Promise.reject(new Error('backend down')) : inner.enqueue(job)),
      deadLetters: (query) => inner.deadLetters(query),
      replay: (id) => inner.replay(id),
      discard: (id) => inner.discard(id),
      close: (options) => inner.close(options),
    };
    const receiver = make({ store, queue: flaky });
    receiver.on('leave.approved', () => {});
    const input = await delivery();
    expect(JSON.parse((await receiver.handle(input)).body)).toEqual({ error: 'queue_unavailable' });
    refuse = false;
    expect((await receiver.handle(input)).status).toBe(202);
  });

  it('reports handler failures to onError, never in the answer, and dead-letters after the last attempt', async () => {
    const errors: unknown[] = [];
    const letters: string[] = [];
    const receiver = make({ onDeadLetter: (letter) => void letters.push(letter.event.id) });
    receiver.on('leave.approved', () => {
      throw new Error('secret database password in this message');
    });
    receiver.onError((error) => void errors.push(error));
    const input = await delivery();
    const response = await receiver.handle(input);
    expect(response.body).not.toContain('password');
    await response.background;
    expect(errors).toHaveLength(3);
    expect(letters).toEqual([input.event.id]);
    expect((await receiver.deadLetters()).items[0]!.attempts).toBe(3);
  });

  it('replays and discards dead letters in bulk by filter, with progress, each once', async () => {
    let failing = true;
    const runs: string[] = [];
    const receiver = make({ logger: false, queue: createMemoryQueue({ backoff: () => 1, attempts: 1 }) });
    receiver.onAny((event) => {
      runs.push(event.id);
      if (failing) throw new Error('down');
    });
    const leave = [await delivery(), await delivery('leave.rejected')];
    const other = [await delivery('employee.updated'), await delivery('employee.updated')];
    for (const input of [...leave, ...other]) await (await receiver.handle(input)).background;
    expect((await receiver.deadLetters()).items).toHaveLength(4);
    failing = false;
    runs.length = 0;

    const progress: number[] = [];
    const both = await Promise.all([
      receiver.replayDeadLetters({ type: 'leave.*' }, { onProgress: (p) => progress.push(p.done) }),
      receiver.replayDeadLetters({ type: 'leave.*' }, { concurrency: 1 }),
    ]);
    expect(both[0].replayed + both[1].replayed).toBe(2);
    expect(both[0].failed + both[1].failed).toBe(0);
    // One progress report per letter the call handled, replayed or taken meanwhile by the other call.
    expect(progress).toEqual(Array.from({ length: progress.length }, (_, i) => i + 1));
    expect(progress.length).toBeGreaterThanOrEqual(Math.max(1, both[0].replayed));
    const leaveIds = leave.map((input) => input.event.id).sort();
    await expect.poll(() => [...runs].sort()).toEqual(leaveIds);

    expect(await receiver.discardDeadLetters({ type: 'employee.*' })).toBe(2);
    expect((await receiver.deadLetters()).items).toEqual([]);
    expect(runs).toHaveLength(2);
  });

  it('answers 503 store_unavailable / queue_unavailable when a call outlasts its deadline; an in-process one has none', async () => {
    const never = new Promise<never>(() => {});
    const memory = createMemoryStore();
    const stalled: DedupeStore = { ...memory, inProcess: false, claim: () => never };
    const silent = make({ logger: false, store: stalled, storeTimeoutMs: 50 }).on('leave.approved', () => {});
    const refused = await silent.handle(await delivery());
    expect([refused.status, JSON.parse(refused.body), refused.headers['retry-after']]).toEqual([
      503,
      { error: 'store_unavailable' },
      expect.stringMatching(/^\d+$/),
    ]);

    const queue = fastQueue();
    // Not in process: every call but a stalled enqueue goes to the memory queue.
    const stuck: EventQueue = {
      start: (hooks) => queue.start(hooks),
      enqueue: () => never,
      deadLetters: (query) => queue.deadLetters(query),
      replay: (id) => queue.replay(id),
      discard: (id) => queue.discard(id),
      close: (options) => queue.close(options),
    };
    const full = make({ logger: false, queue: stuck, queueTimeoutMs: 50 }).on('leave.approved', () => {});
    expect(JSON.parse((await full.handle(await delivery())).body)).toEqual({ error: 'queue_unavailable' });

    // A store that says it cannot stall is called as it is: slow here on purpose, and still no deadline.
    const slow: DedupeStore = {
      ...memory,
      inProcess: true,
      claim: async (id, leaseMs) => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        return memory.claim(id, leaseMs);
      },
    };
    const patient = make({ logger: false, store: slow, storeTimeoutMs: 50 }).on('leave.approved', () => {});
    expect((await patient.handle(await delivery())).status).toBe(202);
  });

  it('answers 503 shutting_down once closing, after draining what it accepted', async () => {
    const receiver = make();
    const gate = deferred();
    let finished = false;
    receiver.on('leave.approved', async () => {
      await gate.promise;
      finished = true;
    });
    expect((await receiver.handle(await delivery())).status).toBe(202);
    const closed = receiver.close({ timeoutMs: 5000 });
    expect(JSON.parse((await receiver.handle(await delivery())).body)).toEqual({ error: 'shutting_down' });
    gate.resolve();
    await closed;
    expect(finished).toBe(true);
  });

  it('resolves every close() call when the one drain ends, the first not after its own timeout', async () => {
    for (const mode of ['queue', 'inline'] as const) {
      const receiver = make({ mode });
      const gate = deferred();
      receiver.on('leave.approved', () => gate.promise);
      const answer = receiver.handle(await delivery());
      await new Promise((resolve) => setTimeout(resolve, 20));
      const first = receiver.close({ timeoutMs: 600_000 });
      const second = receiver.close({ timeoutMs: 600_000 });
      let firstEnded = false;
      void first.then(() => {
        firstEnded = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
      gate.resolve();
      await second;
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(firstEnded).toBe(true);
      expect([200, 202]).toContain((await answer).status);
    }
  });
});

describe('inline mode', () => {
  it('keeps the claim of an inline event while its hand-over is refused and asked again', async () => {
    const inner = createMemoryQueue({ backoff: () => 1, attempts: 3 });
    let refuse = true;
    const queue: EventQueue = {
      start: (hooks) => inner.start(hooks),
      // The first hand-over meets a queue that cannot take it; the next try (a second later) gets through.
      enqueue: async (job) => {
        if (job.attemptsMade !== undefined && refuse) {
          refuse = false;
          throw new Error('queue unreachable');
        }
        return inner.enqueue(job);
      },
      deadLetters: (query) => inner.deadLetters(query),
      replay: (id) => inner.replay(id),
      discard: (id) => inner.discard(id),
      close: (options) => inner.close(options),
    };
    const logger = recordingLogger();
    const receiver = make({ mode: 'inline', queue, ackDeadlineMs: 50, logger });
    const runs: number[] = [];
    receiver.on('leave.approved', async (_event, ctx) => {
      runs.push(ctx.attempt);
      if (ctx.attempt > 1) return;
      await new Promise((resolve) => setTimeout(resolve, 100)); // past the 50 ms deadline: answered 202 first
      throw new Error('down');
    });
    const input = await delivery();
    expect((await receiver.handle(input)).status).toBe(202);
    await expect.poll(() => refuse).toBe(false);
    // Refused once, to be asked again: the claim is still this run's, so a copy is in progress, not run anew.
    expect((await receiver.handle(input)).status).toBe(409);
    await expect.poll(() => runs, { timeout: 5000 }).toEqual([1, 2]);
    await receiver.close();
    expect(logger.lines.filter((line) => /claim was gone/.test(line.msg ?? ''))).toEqual([]);
  });

  it('keeps an event answered 202 whose later failure meets a full queue: all its attempts, then deadLetters(), replayable', async () => {
    const queue = createMemoryQueue({ maxQueued: 1, attempts: 3, backoff: () => 1 });
    const receiver = make({ mode: 'inline', queue, ackDeadlineMs: 50 });
    const gate = deferred();
    const blocker = await delivery();
    const failing = await delivery();
    let failUntilReplay = true;
    const attempts: number[] = [];
    receiver.on('leave.approved', async (event, ctx) => {
      if (event.id === blocker.event.id) return gate.promise;
      attempts.push(ctx.attempt);
      await new Promise((resolve) => setTimeout(resolve, 100)); // past the 50 ms deadline: answered 202 first
      if (failUntilReplay) throw new Error('down');
    });
    // The queue is full: one job, running until the gate opens.
    expect((await queue.enqueue({ event: blocker.event, deliveryId: undefined })).status).toBe('queued');
    expect((await queue.enqueue({ event: (await delivery()).event, deliveryId: undefined })).status).toBe(
      'full',
    );

    const answer = await receiver.handle(failing);
    expect(answer.status).toBe(202);
    await answer.background;
    await expect
      .poll(async () => (await receiver.deadLetters()).items.map((l) => [l.event.id, l.attempts]))
      .toEqual([[failing.event.id, 3]]);
    expect(attempts).toEqual([1, 2, 3]);

    failUntilReplay = false;
    gate.resolve();
    await expect.poll(() => receiver.replay(failing.event.id)).toBe(true);
    await expect.poll(() => attempts.length).toBe(4);
    expect(attempts.at(-1)).toBe(1);
    await receiver.close();
    expect((await receiver.deadLetters()).items).toEqual([]);
  });

  it('holds the claim while a refusing queue is asked again after a late failure, so a copy is answered 409', async () => {
    // A lease of 300 ms, and the hand-over's first wait of 1 s: without renewals the claim would lapse meanwhile.
    const refusing = refusingOnce();
    const receiver = make({
      mode: 'inline',
      queue: refusing.queue,
      ackDeadlineMs: 50,
      leaseMs: 300,
      logger: false,
    });
    const attempts: number[] = [];
    receiver.on('leave.approved', async (_event, ctx) => {
      attempts.push(ctx.attempt);
      if (ctx.attempt === 1) {
        await new Promise((resolve) => setTimeout(resolve, 100)); // past the 50 ms deadline: answered 202 first
        throw new Error('down');
      }
    });
    const input = await delivery();
    const answer = await receiver.handle(input);
    expect(answer.status).toBe(202);
    await expect.poll(() => refusing.refusals).toBe(0); // the first hand-over was refused: the runner waits 1 s
    await new Promise((resolve) => setTimeout(resolve, 600)); // two leases later
    expect((await receiver.handle(input)).status).toBe(409);
    await answer.background;
    await expect.poll(() => attempts).toEqual([1, 2]);
    await receiver.close();
    expect(attempts).toEqual([1, 2]);
  });

  it('hands a late failure over at close instead of after its wait, while the queue still takes it', async () => {
    const refusing = refusingOnce();
    const letters: string[] = [];
    const receiver = make({
      mode: 'inline',
      queue: refusing.queue,
      ackDeadlineMs: 50,
      logger: false,
      onDeadLetter: (letter) => void letters.push(letter.event.id),
    });
    const attempts: number[] = [];
    receiver.on('leave.approved', async (_event, ctx) => {
      attempts.push(ctx.attempt);
      if (ctx.attempt === 1) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        throw new Error('down');
      }
    });
    const answer = await receiver.handle(await delivery());
    expect(answer.status).toBe(202);
    await expect.poll(() => refusing.refusals).toBe(0); // refused once: the runner would ask again in 1 s
    await receiver.close();
    // Handed over during close, and run by the queue's drain: not left to a try after the queue closed.
    expect(attempts).toEqual([1, 2]);
    expect(letters).toEqual([]);
  });

  it('stops handing an event over when a renewal between tries finds its claim taken', async () => {
    let clock = Date.now();
    const store = createMemoryStore({ now: () => clock });
    const refusing = refusingOnce();
    const logger = recordingLogger();
    const letters: string[] = [];
    const receiver = make({
      mode: 'inline',
      store,
      queue: refusing.queue,
      ackDeadlineMs: 50,
      leaseMs: 300,
      logger,
      onDeadLetter: (letter) => void letters.push(letter.event.id),
    });
    const attempts: number[] = [];
    receiver.on('leave.approved', async (_event, ctx) => {
      attempts.push(ctx.attempt);
      await new Promise((resolve) => setTimeout(resolve, 100));
      throw new Error('down');
    });
    const input = await delivery();
    const answer = await receiver.handle(input);
    expect(answer.status).toBe(202);
    await expect.poll(() => refusing.refusals).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    clock += 1000; // the lease lapses (a stalled process), and another delivery of the event takes the claim
    expect((await store.claim(input.event.id, 60_000)).status).toBe('claimed');
    await answer.background;
    await receiver.close();
    // The other delivery owns the event: it is neither handed over (run again) nor dead-lettered here.
    expect(attempts).toEqual([1]);
    expect(letters).toEqual([]);
    expect(logger.lines.filter((line) => line.level === 'error').map((line) => line.msg)).toContainEqual(
      expect.stringMatching(/lease was lost/),
    );
  });

  it('answers 200 after the handlers succeed, and 200 duplicate after', async () => {
    const receiver = make({ mode: 'inline' });
    let ran = 0;
    receiver.on('leave.approved', () => void ran++);
    const input = await delivery();
    expect((await receiver.handle(input)).status).toBe(200);
    expect(ran).toBe(1);
    expect(JSON.parse((await receiver.handle(input)).body)).toEqual({ received: true, duplicate: true });
  });

  it('answers 500 handler_failed and releases the claim so the retry runs again', async () => {
    const receiver = make({ mode: 'inline' });
    let calls = 0;
    receiver.on('leave.approved', () => {
      if (++calls === 1) throw new Error('first time fails');
    });
    const input = await delivery();
    const failed = await receiver.handle(input);
    expect([failed.status, JSON.parse(failed.body)]).toEqual([500, { error: 'handler_failed' }]);
    expect((await receiver.handle(input)).status).toBe(200);
    expect(calls).toBe(2);
  });

  it('answers 202 at the deadline, 409 to a duplicate meanwhile, and hands a late failure to the queue', async () => {
    const receiver = make({ mode: 'inline', ackDeadlineMs: 30 });
    const gate = deferred();
    const attempts: number[] = [];
    receiver.on('leave.approved', async (_, ctx) => {
      attempts.push(ctx.attempt);
      if (ctx.attempt === 1) {
        await gate.promise;
        throw new Error('failed after the answer');
      }
    });
    const input = await delivery();
    const response = await receiver.handle(input);
    expect(response.status).toBe(202);
    const duplicate = await receiver.handle(input);
    expect([duplicate.status, duplicate.headers['retry-after'], JSON.parse(duplicate.body)]).toEqual([
      409,
      '5',
      { error: 'in_progress' },
    ]);
    gate.resolve();
    await response.background;
    await receiver.close();
    expect(attempts).toEqual([1, 2]);
  });

  it('only reruns the handlers that failed', async () => {
    const receiver = make({ mode: 'inline', ackDeadlineMs: 10 });
    const runs = { a: 0, b: 0 };
    receiver.on('leave.approved', async () => {
      runs.a++;
      await new Promise((r) => setTimeout(r, 30));
    });
    receiver.on('leave.approved', async () => {
      runs.b++;
      await new Promise((r) => setTimeout(r, 30));
      if (runs.b === 1) throw new Error('b fails once');
    });
    const response = await receiver.handle(await delivery());
    expect(response.status).toBe(202);
    await response.background;
    await receiver.close();
    expect(runs).toEqual({ a: 1, b: 2 });
  });
});

describe('answers and logs', () => {
  it('refuses methods other than POST with 405 and Allow: POST', async () => {
    const response = await make().handle({ method: 'GET', headers: {} });
    expect([response.status, response.headers.allow]).toEqual([405, 'POST']);
  });

  it('refuses an oversized body with 413 before verifying it', async () => {
    const response = await make({ maxBodyBytes: 10 }).handle(await delivery());
    expect([response.status, JSON.parse(response.body)]).toEqual([413, { error: 'payload_too_large' }]);
  });

  it('answers 500 raw_body_unavailable and logs the fix once', async () => {
    const logger = recordingLogger();
    const receiver = make({ logger });
    const problem = { kind: 'raw_body_unavailable', fix: 'use express.raw()' } as const;
    for (let i = 0; i < 3; i++) {
      const response = await receiver.handle({ method: 'POST', headers: {}, bodyProblem: problem });
      expect([response.status, JSON.parse(response.body)]).toEqual([500, { error: 'raw_body_unavailable' }]);
    }
    const errors = logger.lines.filter((line) => line.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.msg).toContain('use express.raw()');
  });

  it('accepts an unknown apiVersion and warns once', async () => {
    const logger = recordingLogger();
    const receiver = make({ logger });
    receiver.on('leave.approved', () => {});
    for (let i = 0; i < 2; i++) {
      const signed = await createSignedDelivery({ secret, type: 'leave.approved', apiVersion: '2030-01-01' });
      expect(
        (await receiver.handle({ headers: signed.headers, body: encoder.encode(signed.body) })).status,
      ).toBe(202);
    }
    expect(logger.lines.filter((line) => line.obj.apiVersion === '2030-01-01')).toHaveLength(1);
  });

  it('never logs the body or the secret', async () => {
    const logger = recordingLogger();
    const receiver = make({ logger });
    receiver.on('leave.approved', () => {
      throw new Error('x');
    });
    const input = await delivery();
    await (await receiver.handle(input)).background;
    await receiver.handle({ ...input, headers: { ...input.headers, 'svc-signature': 't=1,v1=00' } });
    const text = JSON.stringify(logger.lines.map((line) => [line.obj, line.msg]));
    expect(text).not.toContain(secret);
    expect(text).not.toContain(new TextDecoder().decode(input.body));
  });

  it('refuses impossible options at construction', () => {
    expect(() => createReceiver({ secret: ['whsec_a', ''] })).toThrow(/secret/);
    expect(() => createReceiver({ secret, mode: 'later' as never })).toThrow(/mode/);
    expect(() => createReceiver({ secret, maxBodyBytes: 0 })).toThrow(/maxBodyBytes/);
  });
});

describe('ctx.api', () => {
  it('is the client given to createReceiver, and a clear error without one', async () => {
    const api = createApiClient({ apiKey: 'key', baseUrl: 'https://workforce.example.test' });
    const seen: unknown[] = [];
    const withApi = make({ mode: 'inline', api });
    withApi.on('leave.approved', (_, ctx) => void seen.push(ctx.api));
    expect((await withApi.handle(await delivery())).status).toBe(200);
    expect(seen).toEqual([api]);

    const errors: unknown[] = [];
    const without = make({ mode: 'inline' });
    without.on('leave.approved', (_, ctx) => ctx.api.leave);
    without.onError((error) => void errors.push(error));
    expect((await without.handle(await delivery())).status).toBe(500);
    expect(errors[0]).toBeInstanceOf(ConfigurationError);
    expect(String(errors[0])).toMatch(/createApiClient/);
  });
});

describe('fetch', () => {
  it('reads a Request, answers a Response and hands background work to waitUntil', async () => {
    const receiver = make();
    receiver.on('leave.approved', () => {});
    const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
    const kept: Promise<unknown>[] = [];
    const response = await receiver.fetch(signed.toRequest('https://example.test/hook'), {
      waitUntil: (p) => void kept.push(p),
    });
    expect([response.status, await response.json()]).toEqual([202, { received: true }]);
    expect(kept).toHaveLength(1);
    await kept[0];
  });

  it('stops reading a streamed body past maxBodyBytes', async () => {
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(1024));
      },
    });
    const request = new Request('https://example.test/hook', {
      method: 'POST',
      body: stream,
      duplex: 'half',
    } as RequestInit);
    const response = await make({ maxBodyBytes: 4096 }).fetch(request);
    expect(response.status).toBe(413);
    expect(pulled).toBeLessThan(10);
  });
});
