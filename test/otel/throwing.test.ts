// Telemetry that throws (a broken meter, a span processor's bug, any Telemetry object) or answers a promise that
// rejects (an async metrics client) changes no answer and loses no event: it is logged once per method and otherwise
// ignored.
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import {
  createMemoryQueue,
  createReceiver,
  type DeadLetter,
  type ReceiverOptions,
  type Telemetry,
} from 'workforce-webhooks';
import { createSignedDelivery, sampleEventData } from 'workforce-webhooks/testing';
import { throwingMeterProvider, throwingProcessor, throwingTelemetry } from './broken.js';
import { createTestSdk, SpanStatusCode, type TestSdk, type TestSdkOptions, until } from './sdk.js';

const secret = 'whsec_otel_throwing_test';
const encoder = new TextEncoder();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function delivery(options: { secret?: string; data?: object; occurredAt?: string } = {}) {
  const signed = await createSignedDelivery({ secret, type: 'leave.approved', ...options } as never);
  const headers = signed.headers as Record<string, string>;
  return { id: signed.event.id, input: { method: 'POST', headers, body: encoder.encode(signed.body) } };
}

const sdks: TestSdk[] = [];
const receivers: { close(options?: { timeoutMs?: number }): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close({ timeoutMs: 200 })));
  await Promise.all(sdks.splice(0).map((sdk) => sdk.shutdown()));
});

function make(telemetry: Telemetry, options: Partial<ReceiverOptions> = {}) {
  const receiver = createReceiver({ secret, logger: false, telemetry, ...options });
  receivers.push(receiver);
  return receiver;
}

// `handle` promises never to throw or reject: a throw is shown as the answer, to fail the status check.
const statusOf = async (answer: () => Promise<{ status: number }>): Promise<number | string> => {
  try {
    return (await answer()).status;
  } catch (error) {
    return `threw: ${String(error)}`;
  }
};

const brokenSdks: [string, TestSdkOptions][] = [
  ['a meter whose instruments throw', { meterProvider: throwingMeterProvider }],
  ['a span processor whose onStart throws', { spanProcessors: [throwingProcessor('start')] }],
  ['a span processor whose onEnd throws', { spanProcessors: [throwingProcessor('end')] }],
];

describe.each(brokenSdks)('otelTelemetry with %s', (_name, options) => {
  const telemetry = (): Telemetry => {
    const sdk = createTestSdk(options);
    sdks.push(sdk);
    return sdk.telemetry;
  };

  it('answers a forged delivery 400 and an accepted one 202 (handle neither throws nor rejects)', async () => {
    const receiver = make(telemetry()).on('leave.approved', () => {});
    const forged = await delivery({ secret: 'whsec_someone_else' });
    expect(await statusOf(() => receiver.handle(forged.input))).toBe(400);
    const accepted = await delivery();
    expect(await statusOf(() => receiver.handle(accepted.input))).toBe(202);
  });

  it('answers inline 200, the handler run once', async () => {
    const ran: string[] = [];
    const receiver = make(telemetry(), { mode: 'inline' }).on('leave.approved', (event) => {
      ran.push(event.id);
    });
    const { id, input } = await delivery();
    expect(await statusOf(() => receiver.handle(input))).toBe(200);
    expect(ran).toEqual([id]);
  });

  it('runs a succeeding handler once: never retried, never a dead letter', async () => {
    const ran: string[] = [];
    const receiver = make(telemetry(), { queue: createMemoryQueue({ attempts: 3, backoff: () => 1 }) }).on(
      'leave.approved',
      (event) => {
        ran.push(event.id);
      },
    );
    const { id, input } = await delivery();
    await (await receiver.handle(input)).background;
    await sleep(50);
    expect(ran).toEqual([id]);
    expect((await receiver.deadLetters()).items).toEqual([]);
  });

  it('retries a failing handler, then hands its dead letter to onDeadLetter', async () => {
    let calls = 0;
    const announced: string[] = [];
    const receiver = make(telemetry(), {
      queue: createMemoryQueue({ attempts: 2, backoff: () => 1 }),
      onDeadLetter: (letter) => {
        announced.push(letter.event.id);
      },
    }).on('leave.approved', () => {
      calls++;
      throw new Error('always fails');
    });
    const { id, input } = await delivery();
    await (await receiver.handle(input)).background;
    expect({ calls, announced }).toEqual({ calls: 2, announced: [id] });
  });
});

it('a span processor that throws on end, at an attempt time limit, raises no uncaught exception', async () => {
  const uncaught: unknown[] = [];
  const listener = (error: unknown) => uncaught.push(error);
  process.on('uncaughtException', listener);
  try {
    const sdk = createTestSdk({ spanProcessors: [throwingProcessor('end')] });
    sdks.push(sdk);
    const announced: string[] = [];
    const receiver = make(sdk.telemetry, {
      queue: createMemoryQueue({ attempts: 1, handlerTimeoutMs: 20 }),
      onDeadLetter: (letter) => {
        announced.push(letter.event.id);
      },
    }).on('leave.approved', () => new Promise<void>(() => {}));
    const { id, input } = await delivery();
    await (await receiver.handle(input)).background;
    await sleep(50);
    expect(uncaught.map(String)).toEqual([]);
    expect(announced).toEqual([id]);
  } finally {
    process.off('uncaughtException', listener);
  }
});

it('a Telemetry whose every method throws: nothing changes, and each method is logged once', async () => {
  const { telemetry, called } = throwingTelemetry();
  const warnings: { hook?: string; kind?: string }[] = [];
  const logger = {
    debug() {},
    info() {},
    warn: (obj: object) => void warnings.push(obj),
    error() {},
  };
  const announced: string[] = [];
  const skipped: string[] = [];
  const ran: string[] = [];
  let failing = '';
  const receiver = make(telemetry, {
    logger,
    ordering: {},
    queue: createMemoryQueue({ attempts: 2, backoff: () => 1 }),
    onDeadLetter: (letter) => {
      announced.push(letter.event.id);
    },
    onStale: (event) => {
      skipped.push(event.id);
    },
  }).on('leave.approved', (event) => {
    ran.push(event.id);
    if (event.id === failing) throw new Error('fails until replayed');
  });
  const data = (leaveRequestId: string) => ({ ...sampleEventData('leave.approved'), leaveRequestId });

  // Retried, then a dead letter, which gives its ordering key up: a newer event of its record runs at once.
  const failed = await delivery({ data: data('lr-failing'), occurredAt: '2026-01-02T00:00:00.000Z' });
  failing = failed.id;
  expect(await statusOf(() => receiver.handle(failed.input))).toBe(202);
  await until(() => announced.length === 1, 'the dead letter');
  const newer = await delivery({ data: data('lr-failing'), occurredAt: '2026-01-03T00:00:00.000Z' });
  const answer = await receiver.handle(newer.input);
  expect(answer.status).toBe(202);
  await answer.background;
  // An older one is skipped as stale, and onStale still hears of it.
  const older = await delivery({ data: data('lr-failing'), occurredAt: '2026-01-01T00:00:00.000Z' });
  expect(await statusOf(() => receiver.handle(older.input))).toBe(200);
  await until(() => skipped.length === 1, 'onStale');
  // Replayed: queued again, and skipped as stale in turn (a newer event of its record was handled since).
  expect(await receiver.replay(failed.id)).toBe(true);
  await until(() => skipped.length === 2, 'the replay');

  expect({ ran, announced, skipped }).toEqual({
    ran: [failed.id, failed.id, newer.id],
    announced: [failed.id],
    skipped: [older.id, failed.id],
  });
  const hooks = [
    'observeQueue',
    'delivery.event',
    'delivery.claimed',
    'delivery.enqueued',
    'delivery.answered',
    'attempt.run',
    'attempt.end',
    'retried',
    'deadLettered',
    'staleSkipped',
    'replayed',
  ];
  expect([...called].sort()).toEqual([...hooks].sort());
  // Once per method, however many deliveries, attempts and letters threw since.
  const logged = warnings.filter((warning) => warning.kind?.startsWith('telemetry:'));
  expect(logged.map((warning) => warning.hook).sort()).toEqual([...hooks].sort());
  expect(logged.every((warning) => warning.kind === `telemetry:${warning.hook}`)).toBe(true);
});

it('a Telemetry whose delivery and attempt throw: answered and run unobserved', async () => {
  const fail = (): never => {
    throw new Error('broken telemetry');
  };
  const ran: string[] = [];
  const receiver = make({ delivery: fail, attempt: fail }).on('leave.approved', (event) => {
    ran.push(event.id);
  });
  const forged = await delivery({ secret: 'whsec_someone_else' });
  expect(await statusOf(() => receiver.handle(forged.input))).toBe(400);
  const { id, input } = await delivery();
  const answer = await receiver.handle(input);
  expect(answer.status).toBe(202);
  await answer.background;
  expect(ran).toEqual([id]);
  expect((await receiver.deadLetters()).items).toEqual([]);
});

it('a Telemetry whose methods answer a promise that rejects (an async metrics client): logged once per method, never unhandled', async () => {
  const down = new Error('the metrics backend is down');
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => {
    if (reason === down) unhandled.push(reason);
  };
  process.on('unhandledRejection', onUnhandled);
  onTestFinished(() => void process.off('unhandledRejection', onUnhandled));
  // The pattern of the Telemetry TSDoc's example, with a client call that rejects.
  const metrics = { increment: async (_name: string, _type: string): Promise<void> => Promise.reject(down) };
  const telemetry: Telemetry = {
    retried: (job) => metrics.increment('retried', job.event.type),
    deadLettered: (letter) => metrics.increment('dead', letter.event.type),
  };
  const warnings: { hook?: string; kind?: string }[] = [];
  const logger = { debug() {}, info() {}, warn: (obj: object) => void warnings.push(obj), error() {} };
  const letters: DeadLetter[] = [];
  const receiver = make(telemetry, {
    logger,
    queue: createMemoryQueue({ attempts: 3, backoff: () => 1 }),
    onDeadLetter: (letter) => void letters.push(letter),
  }).on('leave.approved', () => {
    throw new Error('fails');
  });
  const { input } = await delivery();
  expect(await statusOf(() => receiver.handle(input))).toBe(202);
  await until(() => letters.length === 1, 'the dead letter');
  const logged = () => warnings.filter((warning) => warning.kind?.startsWith('telemetry:'));
  await until(() => logged().length === 2, 'the rejections logged');
  // A turn for any rejection left unhandled to be reported.
  await sleep(10);
  // Unchanged: every attempt made; each method logged once (retried rejected twice), none left unhandled.
  expect(letters[0]!.attempts).toBe(3);
  expect(
    logged()
      .map((warning) => warning.hook)
      .sort(),
  ).toEqual(['deadLettered', 'retried']);
  expect(unhandled).toEqual([]);
});

it('a meter whose instruments throw: the receive and process spans still end, with their status, and the throw is logged', async () => {
  const sdk = createTestSdk({ meterProvider: throwingMeterProvider });
  sdks.push(sdk);
  const warnings: { hook?: string }[] = [];
  const logger = { debug() {}, info() {}, warn: (obj: object) => void warnings.push(obj), error() {} };
  const receiver = make(sdk.telemetry, { logger, queue: createMemoryQueue({ attempts: 1 }) }).on(
    'leave.approved',
    () => {
      throw new TypeError('always fails');
    },
  );
  const { input } = await delivery();
  await (await receiver.handle(input)).background;
  await until(async () => (await receiver.deadLetters()).items.length === 1, 'the dead letter');
  expect(
    sdk
      .spans()
      .map((span) => ({ name: span.name, status: span.status.code, error: span.attributes['error.type'] }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  ).toEqual([
    { name: 'process leave.approved', status: SpanStatusCode.ERROR, error: 'TypeError' },
    { name: 'receive leave.approved', status: SpanStatusCode.UNSET, error: undefined },
  ]);
  expect(
    warnings
      .map((warning) => warning.hook)
      .filter((hook) => hook?.startsWith('delivery') || hook?.startsWith('attempt'))
      .sort(),
  ).toEqual(['attempt.end', 'delivery.answered']);
});
