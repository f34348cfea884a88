// A store serves one receiver: two receivers on one store would share its done ids, so an event one of them took
// would be answered `duplicate` by the other and never run there. The second is refused with the fix; once the first
// is closed, its store serves the next receiver (a restart), duplicates still seen.
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  ConfigurationError,
  createMemoryQueue,
  createMemoryStore,
  createReceiver,
  type Receiver,
} from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_receiver_store_one_receiver';

const bodyOf = (text: string): Uint8Array => new TextEncoder().encode(text);

async function deliver(receiver: Receiver, delivery: { headers: Record<string, string>; body: string }) {
  const answer = await receiver.handle({
    method: 'POST',
    headers: delivery.headers,
    body: bodyOf(delivery.body),
  });
  return { status: answer.status, body: answer.body };
}

describe('one store given to two receivers', () => {
  it('refuses the second with the fix, and leaves the first serving and its queue free', async () => {
    const store = createMemoryStore();
    const first = createReceiver({ secret, store, logger: recordingLogger() });
    onTestFinished(() => first.close());
    const runs: string[] = [];
    first.on('leave.approved', (event) => {
      runs.push(event.id);
    });
    const queue = createMemoryQueue();
    let refusal: unknown;
    try {
      createReceiver({ secret: 'whsec_another_endpoint', store, queue, logger: recordingLogger() });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(ConfigurationError);
    expect((refusal as Error).message).toMatch(/^workforce-webhooks: /);
    expect((refusal as Error).message).toContain('a store serves one receiver');
    expect((refusal as Error).message).toContain('createMemoryStore()');
    expect((refusal as Error).message).toContain('prefix');

    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    expect((await deliver(first, delivery)).status).toBe(202);
    await expect.poll(() => runs).toHaveLength(1);
    // The refused receiver started nothing: its queue still serves a receiver of its own.
    const other = createReceiver({ secret, store: createMemoryStore(), queue, logger: recordingLogger() });
    onTestFinished(() => other.close());
  });

  it('gives the store to the next receiver once the first is closed, which still answers its done ids duplicate', async () => {
    const store = createMemoryStore();
    const first = createReceiver({ secret, store, logger: recordingLogger() });
    let runs = 0;
    first.on('leave.approved', () => {
      runs += 1;
    });
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    expect((await deliver(first, delivery)).status).toBe(202);
    await expect.poll(() => runs).toBe(1);
    await first.close();

    const next = createReceiver({ secret, store, logger: recordingLogger() });
    onTestFinished(() => next.close());
    next.on('leave.approved', () => {
      runs += 1;
    });
    expect(await deliver(next, delivery)).toEqual({
      status: 200,
      body: JSON.stringify({ received: true, duplicate: true }),
    });
    const fresh = await createSignedDelivery({ secret, type: 'leave.approved' });
    expect((await deliver(next, fresh)).status).toBe(202);
    await expect.poll(() => runs).toBe(2);
  });
});
