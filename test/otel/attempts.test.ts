// workforce_webhooks.attempts counts one outcome per attempt made: as many as the process spans and the
// handler.duration observations, whatever close() buries, whatever waits for its ordering key, and however an
// inline run ends (handed over, cut by close(), its lease lost).
import { afterEach, expect, it } from 'vitest';
import {
  createMemoryQueue,
  createMemoryStore,
  createReceiver,
  type DeadLetter,
  type DedupeStore,
  type ReceiverOptions,
} from 'workforce-webhooks';
import { METRICS } from 'workforce-webhooks/otel';
import { createSignedDelivery, sampleEventData } from 'workforce-webhooks/testing';
import { createTestSdk, observations, type TestSdk, until } from './sdk.js';

const secret = 'whsec_otel_attempts_test';
const encoder = new TextEncoder();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let sdk: TestSdk;
afterEach(async () => {
  await sdk?.shutdown();
});

function make(options: Partial<ReceiverOptions>, handler: (event: { id: string }) => unknown) {
  sdk = createTestSdk();
  return createReceiver({ secret, logger: false, telemetry: sdk.telemetry, ...options }).on(
    'leave.approved',
    handler as never,
  );
}

async function send(receiver: ReturnType<typeof make>, data?: object, occurredAt?: string) {
  const signed = await createSignedDelivery({ secret, type: 'leave.approved', data, occurredAt } as never);
  return receiver.handle({ method: 'POST', headers: signed.headers, body: encoder.encode(signed.body) });
}

// What the attempts counter must agree with.
const tally = async () => ({
  spans: sdk.spans().filter((span) => span.name.startsWith('process')).length,
  durations: observations(await sdk.points(METRICS.handlerDuration)),
  attempts: await sdk.count(METRICS.attempts),
});

it('an event between retries when close() buries it: its one attempt is counted once, as the retry', async () => {
  const letters: DeadLetter[] = [];
  const receiver = make(
    {
      queue: createMemoryQueue({ attempts: 3, backoff: () => 60_000 }),
      onDeadLetter: (letter) => void letters.push(letter),
    },
    () => {
      throw new Error('fails');
    },
  );
  await send(receiver);
  await until(async () => (await sdk.count(METRICS.attempts, { outcome: 'retry' })) === 1, 'the retry');
  await receiver.close({ timeoutMs: 200 });
  expect(letters.map((letter) => [letter.waiting, letter.attempts])).toEqual([[true, 1]]);
  expect(await tally()).toEqual({ spans: 1, durations: 1, attempts: 1 });
  expect(await sdk.count(METRICS.attempts, { outcome: 'dead_letter' })).toBe(0);
  // Still a dead letter: in the gauge, and in the lag (to the end of its processing).
  expect(await sdk.count(METRICS.deadLetters)).toBe(1);
  expect(observations(await sdk.points(METRICS.eventLag))).toBe(1);
});

it('an event still queued when close() buries it: no attempt was made, none is counted', async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const letters: DeadLetter[] = [];
  const receiver = make(
    {
      queue: createMemoryQueue({ concurrency: 1, attempts: 1 }),
      onDeadLetter: (letter) => void letters.push(letter),
    },
    () => held,
  );
  await send(receiver); // runs, and holds the only slot
  await send(receiver); // waits behind it
  await sleep(20);
  const closing = receiver.close({ timeoutMs: 300 });
  await sleep(350);
  release();
  await closing;
  // Two dead letters, one attempt made (cut short by the close, so counted as its dead letter).
  expect(letters.map((letter) => [letter.waiting, letter.attempts])).toEqual([
    [undefined, 1],
    [true, 0],
  ]);
  expect(await tally()).toEqual({ spans: 1, durations: 1, attempts: 1 });
  expect(await sdk.count(METRICS.attempts, { outcome: 'dead_letter' })).toBe(1);
  expect(await sdk.count(METRICS.deadLetters)).toBe(2);
});

it('an ordering wait (memory queue) is no attempt: one span per run, attempt 1 each', async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let first = true;
  const receiver = make({ ordering: {} }, () => {
    if (first) {
      first = false;
      return held;
    }
  });
  const data = { ...sampleEventData('leave.approved'), leaveRequestId: 'lr-otel-attempts' };
  await send(receiver, data, '2026-01-01T00:00:00.000Z');
  await sleep(10);
  await send(receiver, data, '2026-01-02T00:00:00.000Z');
  await sleep(150);
  release();
  await until(
    () => sdk.spans().filter((span) => span.name.startsWith('process')).length === 2,
    'two attempts',
  );
  const processes = sdk.spans().filter((span) => span.name.startsWith('process'));
  expect(processes.map((span) => [span.attributes['workforce.attempt'], span.status.code])).toEqual([
    [1, 0],
    [1, 0],
  ]);
  expect(await tally()).toEqual({ spans: 2, durations: 2, attempts: 2 });
  expect(await sdk.count(METRICS.attempts, { outcome: 'success' })).toBe(2);
  await receiver.close();
});

it('no metric attribute carries an event or delivery id; an inline hand-over keeps the link', async () => {
  let calls = 0;
  const receiver = make(
    { mode: 'inline', ackDeadlineMs: 20, queue: createMemoryQueue({ backoff: () => 1 }) },
    async () => {
      calls++;
      if (calls === 1) {
        await sleep(60);
        throw new Error('fails after the 202');
      }
    },
  );
  const answer = await send(receiver);
  expect(answer.status).toBe(202);
  await answer.background;
  await until(
    () => sdk.spans().filter((span) => span.name.startsWith('process')).length === 2,
    'the queued attempt',
  );
  const receive = sdk.spans().find((span) => span.name.startsWith('receive'))!;
  const processes = sdk.spans().filter((span) => span.name.startsWith('process'));
  expect(processes.map((span) => span.attributes['workforce.attempt'])).toEqual([1, 2]);
  for (const span of processes) expect(span.links[0]!.context.spanId).toBe(receive.spanContext().spanId);
  expect(await sdk.count(METRICS.attempts, { outcome: 'retry' })).toBe(1);
  expect(await sdk.count(METRICS.attempts, { outcome: 'success' })).toBe(1);
  const keys = new Set<string>();
  for (const metric of (await sdk.metrics()).values())
    for (const point of metric.dataPoints) for (const key of Object.keys(point.attributes)) keys.add(key);
  expect([...keys].sort()).toEqual(['event_type', 'outcome']);
  await receiver.close();
});

it('an inline run handed over with no attempt left (memory queue, attempts: 1): counted once, as the dead letter', async () => {
  const letters: DeadLetter[] = [];
  const receiver = make(
    {
      mode: 'inline',
      ackDeadlineMs: 20,
      queue: createMemoryQueue({ attempts: 1 }),
      onDeadLetter: (letter) => void letters.push(letter),
    },
    async () => {
      await sleep(60);
      throw new TypeError('fails after the 202');
    },
  );
  const answer = await send(receiver);
  expect(answer.status).toBe(202);
  await answer.background;
  await until(() => letters.length === 1, 'the dead letter');
  // A dead letter at once: nothing runs it again.
  expect(letters.map((letter) => [letter.waiting, letter.attempts])).toEqual([[undefined, 1]]);
  expect(await tally()).toEqual({ spans: 1, durations: 1, attempts: 1 });
  expect(await sdk.count(METRICS.attempts, { outcome: 'dead_letter' })).toBe(1);
  await receiver.close();
});

it('an inline run past its 202 whose lease is lost to another delivery: counted once, as a retry', async () => {
  const inner = createMemoryStore();
  let lose = false;
  // The lease is found taken at the first renewal after the 202.
  const store: DedupeStore = {
    inProcess: true,
    claim: (id, leaseMs, key) => inner.claim(id, leaseMs, key),
    renew: (id, token, leaseMs) => (lose ? Promise.resolve(false) : inner.renew(id, token, leaseMs)),
    complete: (id, token, ttlMs) => inner.complete(id, token, ttlMs),
    release: (id, token) => inner.release(id, token),
  };
  const receiver = make(
    { mode: 'inline', ackDeadlineMs: 20, leaseMs: 90, store, queue: createMemoryQueue({ backoff: () => 1 }) },
    () => new Promise(() => {}),
  );
  const answer = await send(receiver);
  expect(answer.status).toBe(202);
  lose = true;
  await answer.background;
  const processes = sdk.spans().filter((span) => span.name.startsWith('process'));
  expect(processes.map((span) => span.attributes['error.type'])).toEqual(['WebhookError']);
  // As before the 202 (answered 500): the delivery that took the lease runs the event again.
  expect(await tally()).toEqual({ spans: 1, durations: 1, attempts: 1 });
  expect(await sdk.count(METRICS.attempts, { outcome: 'retry' })).toBe(1);
  await receiver.close();
});

it('close() cutting an inline run before its answer (503, the sender retries): counted once, as a retry', async () => {
  let started = false;
  const receiver = make({ mode: 'inline', ackDeadlineMs: 5000 }, () => {
    started = true;
    return new Promise(() => {});
  });
  const answering = send(receiver);
  await until(() => started, 'the run');
  await receiver.close({ timeoutMs: 100 });
  const answer = await answering;
  expect(answer.status).toBe(503);
  expect(JSON.parse(answer.body)).toEqual({ error: 'shutting_down' });
  expect(await tally()).toEqual({ spans: 1, durations: 1, attempts: 1 });
  expect(await sdk.count(METRICS.attempts, { outcome: 'retry' })).toBe(1);
});

it('close() cutting an inline run after its 202 (memory queue): counted once, as the dead letter it becomes', async () => {
  const letters: DeadLetter[] = [];
  const receiver = make(
    {
      mode: 'inline',
      ackDeadlineMs: 20,
      queue: createMemoryQueue({ attempts: 5 }),
      onDeadLetter: (letter) => void letters.push(letter),
    },
    () => new Promise(() => {}),
  );
  const answer = await send(receiver);
  expect(answer.status).toBe(202);
  await receiver.close({ timeoutMs: 200 });
  await until(() => letters.length === 1, 'the dead letter');
  // Not run again in this process: the attempt cut short ends in the letter, as close() makes of a queued run.
  expect(letters.map((letter) => [letter.waiting, letter.attempts])).toEqual([[undefined, 1]]);
  expect(await tally()).toEqual({ spans: 1, durations: 1, attempts: 1 });
  expect(await sdk.count(METRICS.attempts, { outcome: 'dead_letter' })).toBe(1);
});
