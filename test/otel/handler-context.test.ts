// A handler runs in its own attempt's context: never in the context of another delivery whose request happened to
// wake the queue up (its baggage, its suppressed tracing).
import { type Baggage, context, propagation, ROOT_CONTEXT } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { createMemoryQueue, createReceiver, type Receiver } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { registerContextManager } from './context-manager.js';
import { createTestSdk, type TestSdk } from './sdk.js';

const secret = 'whsec_otel_handler_context_test';
const encoder = new TextEncoder();

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

// Each delivery handled in the context its request was served in (what an HTTP instrumentation sets up), with the
// sender's tenant in its baggage.
const tenantContext = (tenant: string) =>
  propagation.setBaggage(ROOT_CONTEXT, propagation.createBaggage({ tenant: { value: tenant } }));

it('a queued event’s handlers do not run in the context of the delivery whose attempt ended before it (memory queue)', async () => {
  const sdk = createTestSdk();
  const seen = new Map<string, string | undefined>();
  let release!: () => void;
  const first = new Promise<void>((resolve) => {
    release = resolve;
  });
  const tenantOf = (baggage: Baggage | undefined) => baggage?.getEntry('tenant')?.value;
  const receiver = createReceiver({
    secret,
    logger: false,
    telemetry: sdk.telemetry,
    // One at a time: the second event starts when the first one's attempt ends, in that attempt's continuation.
    queue: createMemoryQueue({ concurrency: 1 }),
  }).on('leave.approved', async (event) => {
    seen.set(event.id, tenantOf(propagation.getActiveBaggage()));
    if (seen.size === 1) await first;
  });
  open.push({ receiver, sdk });

  const deliver = async (tenant: string) => {
    const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
    const input = { method: 'POST', headers: signed.headers, body: encoder.encode(signed.body) };
    const answer = await context.with(tenantContext(tenant), () => receiver.handle(input));
    expect(answer.status).toBe(202);
    return { id: signed.event.id, background: answer.background };
  };
  const a = await deliver('tenant-a');
  const b = await deliver('tenant-b');
  release();
  await Promise.all([a.background, b.background]);
  // Whatever a request carried, a handler sees its attempt's own context only (a request's baggage travels in no
  // job, so an event handled later, or on another instance, could not see it either).
  expect(seen).toEqual(
    new Map([
      [a.id, undefined],
      [b.id, undefined],
    ]),
  );
});
