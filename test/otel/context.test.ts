// Handlers run inside their attempt's process span; every attempt links to the receive span that accepted its
// event, a dead letter's replay included, on the memory queue and on BullMQ.
import { trace } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryQueue, createReceiver, type Receiver, type ReceiverOptions } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { registerContextManager } from './context-manager.js';
import { createTestSdk, type TestSdk, until } from './sdk.js';

const secret = 'whsec_otel_context_test';
const encoder = new TextEncoder();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let unregister: () => void;
beforeAll(() => {
  unregister = registerContextManager();
});
afterAll(() => unregister());

const open: { receiver: Receiver; sdk: TestSdk }[] = [];
afterEach(async () => {
  await Promise.all(
    open.splice(0).map(async ({ receiver, sdk }) => {
      await receiver.close({ timeoutMs: 2000 });
      await sdk.shutdown();
    }),
  );
});

const bullmq = (): Partial<ReceiverOptions> => ({
  store: createRedisStore({ client: connectRedis(), prefix: `${uniqueName('otel-context')}:` }),
  queue: createBullmqQueue({ connection: redisUrl, name: uniqueName('otel-context'), attempts: 1 }),
});

// The handler notes the span active in it, after an await (the context must carry through it).
function instance(options: Partial<ReceiverOptions>, handler: () => unknown = () => {}) {
  const sdk = createTestSdk();
  const active: (string | undefined)[] = [];
  const receiver = createReceiver({ secret, logger: false, telemetry: sdk.telemetry, ...options }).on(
    'leave.approved',
    async () => {
      await sleep(1);
      active.push(trace.getActiveSpan()?.spanContext().spanId);
      return handler();
    },
  );
  open.push({ receiver, sdk });
  const processes = () => sdk.spans().filter((span) => span.name === 'process leave.approved');
  return { receiver, sdk, active, processes };
}

async function send(receiver: Receiver) {
  const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
  const answer = await receiver.handle({
    method: 'POST',
    headers: signed.headers,
    body: encoder.encode(signed.body),
  });
  return { id: signed.event.id, answer };
}

describe('handlers run inside the process span', () => {
  it('memory queue', async () => {
    const { receiver, active, processes } = instance({});
    await (await send(receiver)).answer.background;
    expect(active).toEqual(processes().map((span) => span.spanContext().spanId));
    expect(trace.getActiveSpan()).toBeUndefined();
  });

  it('inline', async () => {
    const { receiver, active, processes } = instance({ mode: 'inline' });
    expect((await send(receiver)).answer.status).toBe(200);
    expect(active).toEqual(processes().map((span) => span.spanContext().spanId));
  });

  it.skipIf(!redisUrl)('BullMQ', async () => {
    const { receiver, active, processes } = instance(bullmq());
    await send(receiver);
    await until(() => processes().length === 1, 'the attempt');
    expect(active).toEqual(processes().map((span) => span.spanContext().spanId));
  });
});

describe('a replayed dead letter: its attempt still links to the delivery that accepted it', () => {
  const replayed = async (options: Partial<ReceiverOptions>) => {
    let fail = true;
    const { receiver, sdk, processes } = instance(options, () => {
      if (fail) throw new Error('fails until replayed');
    });
    const { id } = await send(receiver);
    await until(async () => (await receiver.deadLetters()).items.length === 1, 'the dead letter');
    const [letter] = (await receiver.deadLetters()).items;
    fail = false;
    expect(await receiver.replay(id)).toBe(true);
    await until(() => processes().length === 2, 'the replayed attempt');
    const receive = sdk.spans().find((span) => span.name === 'receive leave.approved')!;
    const link = { traceparent: `00-${receive.spanContext().traceId}-${receive.spanContext().spanId}-01` };
    expect(letter!.trace).toEqual(link);
    expect(processes().map((span) => span.links.map((l) => l.context.spanId))).toEqual([
      [receive.spanContext().spanId],
      [receive.spanContext().spanId],
    ]);
  };

  it('memory queue', () => replayed({ queue: createMemoryQueue({ attempts: 1 }) }));

  it.skipIf(!redisUrl)('BullMQ', () => replayed(bullmq()));
});
