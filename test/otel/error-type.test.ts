// error.type on a failed operation: an attempt names the class its handler threw (the first failing handler's when
// several fail, as the dead-letter list names it; a value that throws when looked at still fails the span, measured),
// a 5xx answer its error code.
import { afterEach, expect, it } from 'vitest';
import { createMemoryQueue, createReceiver } from 'workforce-webhooks';
import { METRICS } from 'workforce-webhooks/otel';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { createTestSdk, observations, SpanStatusCode, type TestSdk } from './sdk.js';

const secret = 'whsec_otel_error_type_test';

let sdk: TestSdk;
afterEach(async () => {
  await sdk?.shutdown();
});

// One delivery to a receiver whose handlers of leave.approved are `handlers`, run once (attempts: 1).
async function failedAttempt(...handlers: (() => unknown)[]) {
  sdk = createTestSdk();
  const receiver = createReceiver({
    secret,
    logger: false,
    telemetry: sdk.telemetry,
    queue: createMemoryQueue({ attempts: 1 }),
  });
  for (const handler of handlers) receiver.on('leave.approved', handler);
  const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
  const answer = await receiver.handle({
    method: 'POST',
    headers: signed.headers,
    body: new TextEncoder().encode(signed.body),
  });
  await answer.background;
  await receiver.close();
  const processes = sdk.spans().filter((span) => span.name === 'process leave.approved');
  expect(processes).toHaveLength(1);
  return processes[0]!;
}

it('two handlers failing: error.type is the first failing handler’s class, not the wrapper’s', async () => {
  const span = await failedAttempt(
    () => {},
    () => {
      throw new TypeError('the first failing handler');
    },
    () => {
      throw new RangeError('the second failing handler');
    },
  );
  expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'TypeError' });
  expect(span.attributes['error.type']).toBe('TypeError');
});

it('a handler that throws a value which throws when looked at: the span still fails, and the attempt is measured', async () => {
  const { proxy, revoke } = Proxy.revocable(new Error('revoked'), {});
  revoke();
  const span = await failedAttempt(() => {
    throw proxy;
  });
  expect(span.status.code).toBe(SpanStatusCode.ERROR);
  expect(span.attributes['error.type']).toBe('object');
  expect(observations(await sdk.points(METRICS.handlerDuration, { outcome: 'failure' }))).toBe(1);
  expect(await sdk.count(METRICS.attempts, { outcome: 'dead_letter' })).toBe(1);
});

it('a 5xx answer names its error code in the receive span’s error.type; a 4xx, the sender’s, sets none', async () => {
  sdk = createTestSdk();
  const receiver = createReceiver({
    secret,
    logger: false,
    telemetry: sdk.telemetry,
    queue: createMemoryQueue({ maxQueued: 1 }),
  }).on('leave.approved', () => new Promise(() => {}));
  const send = async (options: { secret?: string } = {}) => {
    const signed = await createSignedDelivery({ secret, type: 'leave.approved', ...options });
    return receiver.handle({
      method: 'POST',
      headers: signed.headers,
      body: new TextEncoder().encode(signed.body),
    });
  };
  expect((await send()).status).toBe(202);
  expect((await send()).status).toBe(503);
  expect((await send({ secret: 'whsec_someone_else' })).status).toBe(400);
  await receiver.close({ timeoutMs: 50 });
  const receives = sdk.spans().filter((span) => span.name.startsWith('receive'));
  expect(
    receives.map((span) => [span.attributes['http.response.status_code'], span.attributes['error.type']]),
  ).toEqual([
    [202, undefined],
    [503, 'queue_full'],
    [400, undefined],
  ]);
});
