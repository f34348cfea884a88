// Inline mode past its 202, memory queue: a failed run handed over is kept alive, waits the backoff, counts its attempt.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  createMemoryQueue,
  createReceiver,
  type DeadLetter,
  type FetchPlatform,
  type MemoryQueueOptions,
  type Receiver,
  WebhookError,
} from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { recordingLogger } from '../support/logger.js';
import { signedLeave, until } from '../support/ordering-scenario.js';

const secret = 'whsec_inline_handover_test';
const encoder = new TextEncoder();

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

// An inline receiver (ack deadline 50 ms) on a memory queue, closed after the test.
function inlineReceiver(queue: MemoryQueueOptions, onDeadLetter?: (letter: DeadLetter) => void): Receiver {
  const receiver = createReceiver({
    secret,
    mode: 'inline',
    ackDeadlineMs: 50,
    queue: createMemoryQueue(queue),
    logger: recordingLogger(),
    ...(onDeadLetter === undefined ? {} : { onDeadLetter }),
  });
  onTestFinished(() => receiver.close({ timeoutMs: 3000 }));
  return receiver;
}

// Its first attempt holds until the sender has its 202 (`answered`), then fails.
function failingAfterAnswer(receiver: Receiver, later: () => Promise<void> = async () => {}) {
  const answered = deferred();
  const state = { attempts: [] as number[], failedAt: 0, startedAt: [] as number[], processed: false };
  receiver.on('leave.approved', async (_event, ctx) => {
    state.attempts.push(ctx.attempt);
    state.startedAt.push(performance.now());
    if (ctx.attempt === 1) {
      await answered.promise;
      state.failedAt = performance.now();
      throw new TypeError('the calendar is down');
    }
    await later();
    state.processed = true;
  });
  return { state, answered: answered.resolve };
}

async function post(receiver: Receiver) {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
  const input = { method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) };
  return { event: delivery.event, answer: await receiver.handle(input) };
}

describe('inline run handed over after its 202: the keep-alive', () => {
  it('receiver.fetch: the promise handed to waitUntil settles only once the queue has run the event', async () => {
    const receiver = inlineReceiver({ attempts: 3, backoff: () => 1 });
    const { state, answered } = failingAfterAnswer(receiver, () => sleep(200));
    const kept: Promise<unknown>[] = [];
    const platform: FetchPlatform = { waitUntil: (promise) => void kept.push(promise) };
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const response = await receiver.fetch(
      delivery.toRequest('http://localhost/webhooks/workforce'),
      platform,
    );
    expect(response.status).toBe(202);
    answered();
    expect(kept).toHaveLength(1);
    // The platform keeps the isolate up until these settle, and no longer.
    await Promise.all(kept);
    expect(state).toMatchObject({ attempts: [1, 2], processed: true });
  });
});

describe('inline run handed over after its 202: the attempts and the backoff', () => {
  it("starts the queue's attempt 2 after the backoff for attempt 1, not at once", async () => {
    const asked: number[] = [];
    const receiver = inlineReceiver({
      attempts: 3,
      backoff: (attempt) => {
        asked.push(attempt);
        return 400;
      },
    });
    const { state, answered } = failingAfterAnswer(receiver);
    const { answer } = await post(receiver);
    expect(answer.status).toBe(202);
    answered();
    await until(() => state.processed, 'attempt 2');
    expect(asked).toEqual([1]);
    // A timer may fire a millisecond early.
    expect(state.startedAt[1]! - state.failedAt).toBeGreaterThanOrEqual(395);
  });

  it('with attempts: 1, makes the event a dead letter at once (attempts 1, the inline failure), replayable', async () => {
    const letters: DeadLetter[] = [];
    const receiver = inlineReceiver({ attempts: 1, backoff: () => 1 }, (letter) => void letters.push(letter));
    const { state, answered } = failingAfterAnswer(receiver);
    const { event, answer } = await post(receiver);
    expect(answer.status).toBe(202);
    answered();
    await until(() => letters.length === 1, 'the dead letter');
    expect(state.attempts).toEqual([1]);
    expect(letters[0]).toMatchObject({ attempts: 1 });
    expect(String((letters[0]!.error as AggregateError).errors[0])).toContain('the calendar is down');
    const page = await receiver.deadLetters();
    expect(page.items.map((letter) => [letter.event.id, letter.attempts])).toEqual([[event.id, 1]]);
    // A replay runs it from attempt 1, through the one attempt the app gives an event, and it fails again.
    expect(await receiver.replay(event.id)).toBe(true);
    await until(() => letters.length === 2, 'the replay');
    expect(state.attempts).toEqual([1, 1]);
    expect(letters[1]).toMatchObject({ attempts: 1 });
  });

  it("with ordering on, a newer event of the record runs only after the older one's handed-over retry", async () => {
    const receiver = createReceiver({
      secret,
      mode: 'inline',
      ackDeadlineMs: 50,
      queue: createMemoryQueue({ attempts: 3, backoff: () => 100 }),
      ordering: { maxWaitMs: 10_000 },
      logger: recordingLogger(),
    });
    onTestFinished(() => receiver.close({ timeoutMs: 3000 }));
    const key = crypto.randomUUID();
    const log: string[] = [];
    const answered = deferred();
    receiver.on('leave.*', async (event, ctx) => {
      const who = `${event.type}#${ctx.attempt}`;
      log.push(`start ${who}`);
      if (event.type === 'leave.requested' && ctx.attempt === 1) {
        await answered.promise;
        log.push(`fail ${who}`);
        throw new Error('the calendar is down');
      }
      await sleep(50);
      log.push(`end ${who}`);
    });
    const older = await receiver.handle(await signedLeave(secret, 'leave.requested', 1, key));
    expect(older.status).toBe(202);
    answered.resolve();
    await until(() => log.includes('fail leave.requested#1'), 'the older event failing');
    const newer = await receiver.handle(await signedLeave(secret, 'leave.approved', 2, key));
    expect([200, 202]).toContain(newer.status);
    await until(() => log.includes('end leave.approved#1'), 'the newer event', 15_000);
    expect(log).toEqual([
      'start leave.requested#1',
      'fail leave.requested#1',
      'start leave.requested#2',
      'end leave.requested#2',
      'start leave.approved#1',
      'end leave.approved#1',
    ]);
  });
});

describe('close() cuts an inline run past its 202', () => {
  it('keeps the event as a dead letter, never starting it beside the handler it cut', async () => {
    const letters: DeadLetter[] = [];
    const receiver = createReceiver({
      secret,
      mode: 'inline',
      ackDeadlineMs: 50,
      queue: createMemoryQueue({ attempts: 3, backoff: () => 1 }),
      logger: recordingLogger(),
      onDeadLetter: (letter) => void letters.push(letter),
    });
    const release = deferred();
    onTestFinished(release.resolve);
    let started = 0;
    let inFlight = 0;
    let mostInFlight = 0;
    // A handler that does not look at its signal: still running when close() gives up on it.
    receiver.on('leave.approved', async () => {
      started++;
      mostInFlight = Math.max(mostInFlight, ++inFlight);
      await release.promise;
      inFlight--;
    });
    const { event, answer } = await post(receiver);
    expect(answer.status).toBe(202);
    await receiver.close({ timeoutMs: 300 });
    await answer.background;
    expect({ started, mostInFlight }).toEqual({ started: 1, mostInFlight: 1 });
    expect(letters).toHaveLength(1);
    // A dead letter of the attempt close() cut short (as the queue makes of its own), not one that waited.
    expect(letters[0]).toMatchObject({ event: { id: event.id }, attempts: 1 });
    expect(letters[0]!.waiting).toBeUndefined();
    expect(letters[0]!.error).toBeInstanceOf(WebhookError);
    expect((letters[0]!.error as WebhookError).code).toBe('shutting_down');
    expect((await receiver.deadLetters()).items.map((letter) => letter.event.id)).toEqual([event.id]);
  });
});
