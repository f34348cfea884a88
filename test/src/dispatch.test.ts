// The dispatcher through `handle`: an attempt cut short (time limit, shutdown) keeps the handlers that succeeded,
// and a time limit is reported like any handler failure.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  createMemoryQueue,
  createReceiver,
  HandlerTimeoutError,
  type MemoryQueueOptions,
  type ReceiverOptions,
  silentLogger,
  type WebhookError,
} from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_dispatch_test';
const encoder = new TextEncoder();

async function delivery() {
  const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
  return { method: 'POST', headers: signed.headers, body: encoder.encode(signed.body) };
}

const make = (options: Partial<ReceiverOptions> = {}, queue: MemoryQueueOptions = {}) =>
  createReceiver({
    secret,
    logger: silentLogger,
    queue: createMemoryQueue({ backoff: () => 1, attempts: 3, ...queue }),
    ...options,
  });

// Waits until `ms` have passed or the signal aborts, whichever is first; never rejects.
const pause = (ms: number, signal?: AbortSignal): Promise<void> =>
  sleep(ms, undefined, { signal }).catch(() => {});

describe('handlers that succeeded are not run again when a sibling is cut short', () => {
  // README: "When one of several handlers fails, only that one runs again on the retry."
  it('memory queue: a sibling past handlerTimeoutMs runs again, the handler that succeeded does not', async () => {
    const receiver = make({}, { handlerTimeoutMs: 40 });
    const runs = { a: 0, b: 0 };
    receiver.on('leave.approved', () => {
      runs.a++;
    });
    receiver.on('leave.approved', async (_event, ctx) => {
      runs.b++;
      // Slow on its first attempt, ignoring its signal.
      if (ctx.attempt === 1) await sleep(200);
    });
    const answer = await receiver.handle(await delivery());
    expect(answer.status).toBe(202);
    await receiver.close();
    expect(runs).toEqual({ a: 1, b: 2 });
  });

  it('with ordering on: the same, through the ordered context', async () => {
    const receiver = make({ ordering: {} }, { handlerTimeoutMs: 40 });
    const runs = { a: 0, b: 0 };
    receiver.on('leave.approved', () => {
      runs.a++;
    });
    receiver.on('leave.approved', async (_event, ctx) => {
      runs.b++;
      if (ctx.attempt > 1) return;
      // Stops at its signal and fails: the next attempt (after this one settled, as ordering waits) runs it again.
      await pause(5000, ctx.signal);
      throw ctx.signal.reason;
    });
    await receiver.handle(await delivery());
    await receiver.close();
    expect(runs).toEqual({ a: 1, b: 2 });
  });

  it('inline: a run past handlerTimeoutMs after its 202 is handed over without the handlers that succeeded', async () => {
    const receiver = make({ mode: 'inline', ackDeadlineMs: 10, handlerTimeoutMs: 50 });
    const runs = { a: 0, b: 0 };
    receiver.on('leave.approved', () => {
      runs.a++;
    });
    receiver.on('leave.approved', async (_event, ctx) => {
      runs.b++;
      if (ctx.attempt === 1) await sleep(300);
    });
    const answer = await receiver.handle(await delivery());
    expect(answer.status).toBe(202);
    await answer.background;
    await receiver.close();
    expect(runs).toEqual({ a: 1, b: 2 });
  });
});

describe('a handler past its time limit', () => {
  it('is reported to onError and logged as a failed attempt, like any other handler failure', async () => {
    const logger = recordingLogger();
    const errors: unknown[] = [];
    const receiver = make({ logger }, { attempts: 2, handlerTimeoutMs: 20 });
    // A handler that never settles (a hung HTTP call that ignores ctx.signal).
    receiver.on('leave.approved', () => new Promise<void>(() => {}));
    receiver.onError((error) => void errors.push(error));
    await receiver.handle(await delivery());
    await receiver.close();
    expect((await receiver.deadLetters()).items).toHaveLength(1);
    // onError: "called with every handler failure (each attempt)"; the log: "a handler failed an attempt", warn.
    expect(errors).toHaveLength(2);
    expect(errors.every((error) => error instanceof HandlerTimeoutError)).toBe(true);
    const failed = logger.lines.filter((line) => line.msg === 'workforce-webhooks: handler failed');
    expect(failed.map((line) => [line.level, line.obj.attempt])).toEqual([
      ['warn', 1],
      ['warn', 2],
    ]);
  });

  it('is reported once per attempt however many handlers still run, after those that failed on their own', async () => {
    const errors: unknown[] = [];
    const receiver = make({}, { attempts: 1, handlerTimeoutMs: 20 });
    receiver.on('leave.approved', () => {
      throw new TypeError('bad data');
    });
    receiver.on('leave.approved', () => new Promise<void>(() => {}));
    receiver.on('leave.approved', () => new Promise<void>(() => {}));
    receiver.onError((error) => void errors.push(error));
    await receiver.handle(await delivery());
    await receiver.close();
    expect(errors.map((error) => (error as Error).constructor.name)).toEqual([
      'TypeError',
      'HandlerTimeoutError',
    ]);
  });

  it('reports the handler failure once, however long the onError hook takes (it runs beside the attempt)', async () => {
    const errors: unknown[] = [];
    const receiver = make({}, { attempts: 1, handlerTimeoutMs: 20 });
    receiver.on('leave.approved', () => {
      throw new TypeError('bad data');
    });
    receiver.onError(async (error) => {
      errors.push(error);
      await sleep(100);
    });
    await receiver.handle(await delivery());
    await receiver.close();
    expect(errors.map((error) => (error as Error).constructor.name)).toEqual(['TypeError']);
  });

  it('a shutdown is no handler failure: close() cutting a run short reports nothing to onError', async () => {
    const errors: unknown[] = [];
    const letters: unknown[] = [];
    const receiver = make({ onDeadLetter: (letter) => void letters.push(letter.error) });
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    receiver.on('leave.approved', () => {
      started();
      return new Promise<void>(() => {});
    });
    receiver.onError((error) => void errors.push(error));
    await receiver.handle(await delivery());
    await running;
    await receiver.close({ timeoutMs: 50 });
    expect(errors).toEqual([]);
    expect(letters).toHaveLength(1);
    expect((letters[0] as WebhookError).code).toBe('shutting_down');
  });
});
