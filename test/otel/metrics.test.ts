// otelTelemetry on the real SDK: every answer of the status table counted and traced, and attempts measured.
import { afterEach, describe, expect, it } from 'vitest';
import {
  answers,
  createMemoryQueue,
  createReceiver,
  type DedupeStore,
  type EventQueue,
  outcomeOf,
  type ReceiverOptions,
} from 'workforce-webhooks';
import { METRICS, otelTelemetry } from 'workforce-webhooks/otel';
import { createSignedDelivery, sampleEventData, signPayload } from 'workforce-webhooks/testing';
import { createTestSdk, observations, SpanStatusCode, type TestSdk } from './sdk.js';

const secret = 'whsec_otel_metrics_test';
const encoder = new TextEncoder();
const PRIVATE = 'the private message of a handler';

type Input = Parameters<ReturnType<typeof createReceiver>['handle']>[0];

async function delivery(
  options: {
    type?: string;
    id?: string;
    secret?: string;
    timestamp?: number;
    data?: object;
    occurredAt?: string;
  } = {},
) {
  const signed = await createSignedDelivery({ secret, type: 'leave.approved', ...options } as never);
  return {
    method: 'POST',
    headers: signed.headers as Record<string, string>,
    body: encoder.encode(signed.body),
  };
}

let sdk: TestSdk;
afterEach(async () => {
  await sdk?.shutdown();
});

const make = (options: Partial<ReceiverOptions> = {}) =>
  createReceiver({
    secret,
    logger: false,
    queue: createMemoryQueue({ backoff: () => 1, attempts: 2 }),
    telemetry: sdk.telemetry,
    ...options,
  }).on('leave.approved', () => {});

const never = new Promise<void>(() => {});
const downQueue = (): EventQueue => {
  const inner = createMemoryQueue();
  return {
    start: (hooks) => inner.start(hooks),
    enqueue: () => Promise.reject(new Error('down')),
    deadLetters: (query) => inner.deadLetters(query),
    replay: (id) => inner.replay(id),
    discard: (id) => inner.discard(id),
    close: (options) => inner.close(options),
  };
};
const downStore = (): DedupeStore => ({
  claim: () => Promise.reject(new Error('down')),
  renew: async () => false,
  complete: async () => false,
  release: async () => false,
});

interface Case {
  readonly name: string;
  readonly status: number;
  readonly outcome: string;
  readonly reason?: string;
  /** Sends the delivery under test (after any set-up deliveries) and returns its answer's status. */
  run(): Promise<number>;
}

const send = async (options: Partial<ReceiverOptions>, input: Input | Promise<Input>): Promise<number> =>
  (await make(options).handle(await input)).status;

const cases: Case[] = [
  { name: 'queued', status: 202, outcome: 'accepted', run: () => send({}, delivery()) },
  {
    name: 'processed inline',
    status: 200,
    outcome: 'accepted',
    run: () => send({ mode: 'inline' }, delivery()),
  },
  {
    name: 'duplicate',
    status: 200,
    outcome: 'duplicate',
    async run() {
      const receiver = make();
      const input = await delivery();
      await (await receiver.handle(input)).background;
      await sdk.metrics(); // the first answer is counted too; only the second is looked at below
      return (await receiver.handle(input)).status;
    },
  },
  {
    name: 'ignored',
    status: 200,
    outcome: 'ignored',
    run: () => send({}, delivery({ type: 'employee.created' })),
  },
  {
    name: 'stale',
    status: 200,
    outcome: 'stale',
    async run() {
      const receiver = make({ ordering: {} });
      const data = { ...sampleEventData('leave.approved'), leaveRequestId: 'lr-otel-1' };
      const newer = await delivery({ data, occurredAt: '2026-01-02T00:00:00.000Z' });
      await (await receiver.handle(newer)).background;
      return (await receiver.handle(await delivery({ data, occurredAt: '2026-01-01T00:00:00.000Z' }))).status;
    },
  },
  {
    name: 'in progress',
    status: 409,
    outcome: 'refused',
    reason: 'in_progress',
    async run() {
      const receiver = make({ mode: 'inline', ackDeadlineMs: 60_000 }).on('leave.approved', () => never);
      const input = await delivery();
      void receiver.handle(input);
      await new Promise((resolve) => setTimeout(resolve, 10));
      return (await receiver.handle(input)).status;
    },
  },
  {
    name: 'missing signature',
    status: 400,
    outcome: 'refused',
    reason: 'missing_signature',
    run: async () => {
      const input = await delivery();
      delete input.headers['svc-signature'];
      return send({}, input);
    },
  },
  {
    name: 'malformed signature',
    status: 400,
    outcome: 'refused',
    reason: 'malformed_signature',
    run: async () => {
      const input = await delivery();
      input.headers['svc-signature'] = 'garbage';
      return send({}, input);
    },
  },
  {
    name: 'old timestamp',
    status: 400,
    outcome: 'refused',
    reason: 'timestamp_out_of_tolerance',
    run: () => send({}, delivery({ timestamp: Math.floor(Date.now() / 1000) - 3600 })),
  },
  {
    name: 'forged',
    status: 400,
    outcome: 'refused',
    reason: 'signature_mismatch',
    run: () => send({}, delivery({ secret: 'whsec_someone_else' })),
  },
  {
    name: 'signed body that is not an event',
    status: 400,
    outcome: 'refused',
    reason: 'invalid_payload',
    run: async () => {
      const payload = '{"not":"an event"}';
      const signature = await signPayload({ payload, secret, timestamp: Math.floor(Date.now() / 1000) });
      return send(
        {},
        { method: 'POST', headers: { 'svc-signature': signature }, body: encoder.encode(payload) },
      );
    },
  },
  {
    name: 'too large',
    status: 413,
    outcome: 'refused',
    reason: 'payload_too_large',
    run: () => send({ maxBodyBytes: 16 }, delivery()),
  },
  {
    name: 'body too slow',
    status: 408,
    outcome: 'refused',
    reason: 'body_timeout',
    run: () => send({}, { method: 'POST', headers: {}, bodyProblem: { kind: 'timeout' } }),
  },
  {
    name: 'not a POST',
    status: 405,
    outcome: 'refused',
    reason: 'method_not_allowed',
    run: async () => send({}, { ...(await delivery()), method: 'GET' }),
  },
  {
    name: 'not a POST, through fetch (Next App Router, Bun, Deno, Workers)',
    status: 405,
    outcome: 'refused',
    reason: 'method_not_allowed',
    run: async () => (await make().fetch(new Request('http://localhost/webhooks', { method: 'GET' }))).status,
  },
  {
    name: 'an unexpected failure (headers that throw when read)',
    status: 500,
    outcome: 'refused',
    reason: 'internal_error',
    async run() {
      const { body } = await delivery();
      const headers = new Proxy({} as Record<string, string>, {
        get() {
          throw new TypeError('unreadable headers');
        },
      });
      return send({ logger: false }, { method: 'POST', headers, body });
    },
  },
  {
    name: 'queue full',
    status: 503,
    outcome: 'refused',
    reason: 'queue_full',
    async run() {
      const receiver = make({ queue: createMemoryQueue({ maxQueued: 1 }) }).on('leave.approved', () => never);
      await receiver.handle(await delivery());
      return (await receiver.handle(await delivery())).status;
    },
  },
  {
    name: 'store down',
    status: 503,
    outcome: 'refused',
    reason: 'store_unavailable',
    run: () => send({ store: downStore() }, delivery()),
  },
  {
    name: 'queue down',
    status: 503,
    outcome: 'refused',
    reason: 'queue_unavailable',
    run: () => send({ queue: downQueue() }, delivery()),
  },
  {
    name: 'shutting down',
    status: 503,
    outcome: 'refused',
    reason: 'shutting_down',
    async run() {
      const receiver = make();
      await receiver.close();
      return (await receiver.handle(await delivery())).status;
    },
  },
  {
    name: 'handler failed inline',
    status: 500,
    outcome: 'refused',
    reason: 'handler_failed',
    run: async () =>
      (
        await make({ mode: 'inline' })
          .on('leave.approved', () => {
            throw new Error(PRIVATE);
          })
          .handle(await delivery())
      ).status,
  },
  {
    name: 'raw body unavailable',
    status: 500,
    outcome: 'refused',
    reason: 'raw_body_unavailable',
    run: () =>
      send({}, { method: 'POST', headers: {}, bodyProblem: { kind: 'raw_body_unavailable', fix: 'x' } }),
  },
  {
    name: 'no secret yet',
    status: 500,
    outcome: 'refused',
    reason: 'not_configured',
    run: () => send({ secret: () => undefined }, delivery()),
  },
];

describe('workforce_webhooks.deliveries and the receive span', () => {
  it.each(cases)('$name: $status counted as $outcome $reason', async ({ status, outcome, reason, run }) => {
    sdk = createTestSdk();
    expect(await run()).toBe(status);
    const last = sdk
      .spans()
      .filter((span) => span.name.startsWith('receive'))
      .at(-1)!;
    const counted = await sdk.count(
      METRICS.deliveries,
      reason === undefined ? { outcome } : { outcome, reason },
    );
    expect(counted).toBe(1);
    const points = await sdk.points(METRICS.deliveries, { outcome });
    if (reason === undefined)
      expect(points.every((point) => point.attributes.reason === undefined)).toBe(true);
    expect(last.attributes['http.response.status_code']).toBe(status);
    expect(last.attributes['workforce.outcome']).toBe(outcome);
    expect(last.attributes['workforce.refusal.reason']).toBe(reason);
    expect(last.attributes['messaging.system']).toBe('workforce');
    expect(last.attributes['messaging.operation.type']).toBe('receive');
    expect(last.status.code).toBe(status >= 500 ? SpanStatusCode.ERROR : SpanStatusCode.UNSET);
  });

  it('knows the outcome of every answer of the status table', () => {
    const all = Object.values(answers).flatMap((answer) =>
      'status' in answer ? [answer] : Object.values(answer as Record<string, typeof answers.accepted>),
    );
    const table = Object.fromEntries(all.map((answer) => [answer.body, outcomeOf(answer)]));
    expect(table).toMatchObject({
      '{"received":true}': { outcome: 'accepted' },
      '{"received":true,"duplicate":true}': { outcome: 'duplicate' },
      '{"received":true,"ignored":true}': { outcome: 'ignored' },
      '{"received":true,"stale":true}': { outcome: 'stale' },
      '{"error":"internal_error"}': { outcome: 'refused', reason: 'internal_error', status: 500 },
    });
    for (const answer of all.filter((one) => one.status >= 400))
      expect(outcomeOf(answer)).toEqual({
        status: answer.status,
        outcome: 'refused',
        reason: JSON.parse(answer.body).error,
      });
    // Every answer of the table is driven by a case above.
    const driven = new Set(cases.map((one) => `${one.status} ${one.reason ?? one.outcome}`));
    const missing = all
      .map((answer) => outcomeOf(answer))
      .filter((one) => !driven.has(`${one.status} ${one.reason ?? one.outcome}`));
    expect(missing).toEqual([]);
  });

  it('names the event and the delivery on the span', async () => {
    sdk = createTestSdk();
    const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
    await make().handle({ method: 'POST', headers: signed.headers, body: encoder.encode(signed.body) });
    const [span] = sdk.spans();
    expect(span!.name).toBe('receive leave.approved');
    expect(span!.attributes).toMatchObject({
      'messaging.message.id': signed.event.id,
      'messaging.destination.name': 'leave.approved',
      'workforce.delivery.id': signed.headers['svc-delivery-id'],
      'workforce.claim': 'claimed',
    });
  });
});

describe('attempts', () => {
  it('measures a successful attempt, links it to its delivery and records the lag', async () => {
    sdk = createTestSdk();
    const receiver = make();
    const occurredAt = new Date(Date.now() - 5000).toISOString();
    const input = await delivery({ occurredAt });
    await (await receiver.handle(input)).background;
    const receive = sdk.spans().find((span) => span.name === 'receive leave.approved')!;
    const process = sdk.spans().find((span) => span.name === 'process leave.approved')!;
    expect(process.attributes).toMatchObject({
      'messaging.operation.type': 'process',
      'messaging.destination.name': 'leave.approved',
      'workforce.attempt': 1,
      'workforce.delivery.id': input.headers['svc-delivery-id'],
    });
    expect(process.links.map((link) => link.context.spanId)).toEqual([receive.spanContext().spanId]);
    expect(process.links[0]!.context.traceId).toBe(receive.spanContext().traceId);
    expect(process.status.code).toBe(SpanStatusCode.UNSET);
    expect(await sdk.count(METRICS.attempts, { outcome: 'success' })).toBe(1);
    const durations = await sdk.points(METRICS.handlerDuration, {
      event_type: 'leave.approved',
      outcome: 'success',
    });
    expect(observations(durations)).toBe(1);
    const [lag] = await sdk.points(METRICS.eventLag);
    expect((lag!.value as { min: number }).min).toBeGreaterThanOrEqual(5);
    expect((await sdk.metrics()).get(METRICS.handlerDuration)!.descriptor.unit).toBe('s');
  });

  it('counts a retry and a dead letter, with the error class only, and the gauges see the dead letter', async () => {
    sdk = createTestSdk();
    const receiver = make().on('leave.approved', () => {
      throw new TypeError(PRIVATE);
    });
    const input = await delivery();
    await (await receiver.handle(input)).background;
    expect(await sdk.count(METRICS.attempts, { outcome: 'retry' })).toBe(1);
    expect(await sdk.count(METRICS.attempts, { outcome: 'dead_letter' })).toBe(1);
    expect(await sdk.count(METRICS.attempts, { outcome: 'success' })).toBe(0);
    expect(observations(await sdk.points(METRICS.handlerDuration, { outcome: 'failure' }))).toBe(2);
    const processes = sdk.spans().filter((span) => span.name.startsWith('process'));
    expect(processes.map((span) => span.attributes['workforce.attempt'])).toEqual([1, 2]);
    for (const span of processes) {
      expect(span.status.code).toBe(SpanStatusCode.ERROR);
      expect(span.attributes['error.type']).toBe('TypeError');
    }
    expect(await sdk.count(METRICS.deadLetters)).toBe(1);
    expect(await sdk.count(METRICS.queueDepth)).toBe(0);
    // Never the handler's message, the body or the secret in anything exported.
    const exported = JSON.stringify(sdk.spans().map((span) => [span.attributes, span.status, span.events]));
    expect(exported).not.toContain(PRIVATE);
    expect(exported).not.toContain(secret);
    expect(exported).not.toContain(new TextDecoder().decode(input.body).slice(0, 40));

    expect(await receiver.replay(JSON.parse(new TextDecoder().decode(input.body)).id)).toBe(true);
    expect(await sdk.count(METRICS.replays)).toBe(1);
    await receiver.close();
  });

  it('ends the attempt span on a timeout even when the handler never settles', async () => {
    sdk = createTestSdk();
    const receiver = make({
      queue: createMemoryQueue({ attempts: 1, handlerTimeoutMs: 20 }),
    }).on('leave.approved', () => never);
    await (await receiver.handle(await delivery())).background;
    const [process] = sdk.spans().filter((span) => span.name.startsWith('process'));
    expect(process!.attributes['error.type']).toBe('HandlerTimeoutError');
    expect(await sdk.count(METRICS.attempts, { outcome: 'dead_letter' })).toBe(1);
  });

  it('shows the queue depth while a handler runs', async () => {
    sdk = createTestSdk();
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const receiver = make().on('leave.approved', () => held);
    const answer = await receiver.handle(await delivery());
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await sdk.count(METRICS.queueDepth)).toBe(1);
    release();
    await answer.background;
    expect(await sdk.count(METRICS.queueDepth)).toBe(0);
  });
});

describe('with no SDK registered', () => {
  it('observes nothing (the global providers are no-ops) and the receiver works as without telemetry', async () => {
    sdk = createTestSdk();
    const telemetry = otelTelemetry();
    expect(telemetry.delivery!('a-delivery')).toBeUndefined();
    const seen: string[] = [];
    const receiver = createReceiver({ secret, logger: false, telemetry }).on('leave.approved', (event) => {
      seen.push(event.id);
    });
    const answer = await receiver.handle(await delivery({ id: '0b6f3c2e-8f1a-4d2b-9c3e-5a7d1e2f4b6c' }));
    expect(answer.status).toBe(202);
    await answer.background;
    expect(seen).toEqual(['0b6f3c2e-8f1a-4d2b-9c3e-5a7d1e2f4b6c']);
  });
});
