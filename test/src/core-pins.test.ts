// Handlers that misbehave, late registrations, catch-alls and unusual but valid envelopes, through `handle`.
import { describe, expect, it } from 'vitest';
import {
  createMemoryQueue,
  createReceiver,
  type MemoryQueueOptions,
  type ReceiverOptions,
  type WorkforceEvent,
} from 'workforce-webhooks';
import { createSignedDelivery, signPayload } from 'workforce-webhooks/testing';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_core_pins';
const encoder = new TextEncoder();

async function delivery() {
  const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
  return { method: 'POST', headers: signed.headers, body: encoder.encode(signed.body) };
}

// A delivery of any bytes, signed as the service signs them.
async function rawDelivery(body: string | Uint8Array) {
  const bytes = typeof body === 'string' ? encoder.encode(body) : body;
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'svc-delivery-id': crypto.randomUUID(),
      'svc-signature': await signPayload({ payload: bytes, secret }),
    },
    body: bytes,
  };
}

const envelope = (fields: Record<string, unknown> = {}): Record<string, unknown> => ({
  id: crypto.randomUUID(),
  type: 'leave.approved',
  apiVersion: '2026-10-15',
  occurredAt: new Date().toISOString(),
  organizationId: '00000000-0000-4000-8000-000000000001',
  data: { leaveRequestId: crypto.randomUUID() },
  ...fields,
});

const make = (options: Partial<ReceiverOptions> = {}, queue: MemoryQueueOptions = {}) =>
  createReceiver({
    secret,
    logger: false,
    queue: createMemoryQueue({ backoff: () => 1, attempts: 3, ...queue }),
    ...options,
  });

/** Polls `check` until it holds, or fails after `ms`: a wide bound on a hang, never a timing assertion. */
async function until(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const statusOf = async (receiver: ReturnType<typeof make>, body: string | Uint8Array): Promise<number> =>
  (await receiver.handle(await rawDelivery(body))).status;

describe('handlers that misbehave', () => {
  it('a handler throwing null, undefined, a string, an object with throwing getters or a Proxy ends as a dead letter', async () => {
    const weird = {
      get message(): string {
        throw new Error('message getter');
      },
      toString(): string {
        throw new Error('toString');
      },
    };
    const proxy = new Proxy(
      {},
      {
        get() {
          throw new Error('get trap');
        },
        getPrototypeOf() {
          throw new Error('prototype trap');
        },
      },
    );
    for (const thrown of [null, undefined, 'a string', weird, proxy]) {
      const receiver = make({ logger: recordingLogger() });
      receiver.on('leave.approved', () => {
        throw thrown;
      });
      expect((await receiver.handle(await delivery())).status).toBe(202);
      await until(async () => (await receiver.deadLetters()).items.length === 1);
      await receiver.close();
    }
  });

  it('inline: a handler throwing null is answered 500 handler_failed', async () => {
    const receiver = make({ mode: 'inline' });
    receiver.on('leave.approved', () => {
      throw null;
    });
    expect((await receiver.handle(await delivery())).body).toBe('{"error":"handler_failed"}');
    await receiver.close();
  });

  it('a thenable that never settles is cut at the time limit, retried, and dead-lettered after every attempt', async () => {
    const receiver = make({}, { handlerTimeoutMs: 20 });
    // biome-ignore lint/suspicious/noThenProperty: a thenable that never calls back is the point of this test.
    receiver.on('leave.approved', () => ({ then() {} }) as never);
    await receiver.handle(await delivery());
    await until(async () => (await receiver.deadLetters()).items.length === 1);
    expect((await receiver.deadLetters()).items[0]!.attempts).toBe(3);
    await receiver.close();
  });
});

describe('registrations', () => {
  it('a handler registered after the event was queued runs with it', async () => {
    const receiver = make();
    const seen: string[] = [];
    receiver.on('leave.approved', () => void seen.push('first'));
    const answer = await receiver.handle(await delivery());
    receiver.on('leave.*', () => void seen.push('later'));
    await answer.background;
    await until(() => seen.length === 2);
    expect(seen.sort()).toEqual(['first', 'later']);
    await receiver.close();
  });

  it("on('*') and onAny get a type the map does not name", async () => {
    const receiver = make();
    const seen: string[] = [];
    receiver.on('*' as never, (event: WorkforceEvent) => void seen.push(`star:${event.type}`));
    receiver.onAny((event) => void seen.push(`any:${event.type}`));
    const answer = await receiver.handle(
      await rawDelivery(JSON.stringify(envelope({ type: 'benefits.enrolled' }))),
    );
    expect(answer.status).toBe(202);
    await answer.background;
    await until(() => seen.length === 2);
    expect(seen.sort()).toEqual(['any:benefits.enrolled', 'star:benefits.enrolled']);
    await receiver.close();
  });
});

describe('envelopes', () => {
  it('accepts unknown fields, duplicate keys, __proto__ keys, big numbers, a BOM and deep nesting', async () => {
    const receiver = make({ maxBodyBytes: 10_000_000 });
    receiver.on('leave.approved', () => {});
    // A new event each time: a second delivery of one event would be a duplicate.
    const body = (): string => JSON.stringify(envelope());
    expect(await statusOf(receiver, JSON.stringify(envelope({ extra: { a: 1 } })))).toBe(202);
    expect(await statusOf(receiver, body().replace('{', `{"id":"${crypto.randomUUID()}",`))).toBe(202);
    expect(await statusOf(receiver, body().replace('"data":{', '"data":{"__proto__":{"x":1},'))).toBe(202);
    expect(await statusOf(receiver, body().replace('{', '{"__proto__":{"id":"x"},'))).toBe(202);
    expect(
      await statusOf(receiver, body().replace('"data":{', '"data":{"n":123456789012345678901234567890,')),
    ).toBe(202);
    expect(await statusOf(receiver, new Uint8Array([0xef, 0xbb, 0xbf, ...encoder.encode(body())]))).toBe(202);
    const deep = body().replace('"data":{', `"data":{"deep":${'['.repeat(200_000)}${']'.repeat(200_000)},`);
    expect(await statusOf(receiver, deep)).toBe(202);
    // No prototype was polluted by the __proto__ keys.
    expect({} as Record<string, unknown>).not.toHaveProperty('x');
    await receiver.close();
  });

  it('refuses an apiVersion that is a number, and logs no text of the body', async () => {
    const logger = recordingLogger();
    const receiver = make({ logger });
    receiver.on('leave.approved', () => {});
    expect(await statusOf(receiver, JSON.stringify(envelope({ apiVersion: 5, secretText: 'ssn-999' })))).toBe(
      400,
    );
    expect(JSON.stringify(logger.lines)).not.toContain('ssn');
    await receiver.close();
  });
});
