// The class named for a memory dead letter's failure (what an operator lists), whatever its handler threw.
import { runInNewContext } from 'node:vm';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createMemoryQueue, createReceiver, errorClassOf, silentLogger } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';

const secret = 'whsec_dead_letters_error_class_test';

class Unnamed extends Error {
  override get name(): string {
    throw new Error('this name cannot be read');
  }
}

// What each handler throws, and the class its dead letter is listed under.
const thrown: Record<string, [() => unknown, string]> = {
  'a revoked Proxy': [
    () => {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    },
    'object',
  ],
  'an Error whose name getter throws': [() => new Unnamed('down'), 'Error'],
  'an Error whose constructor is gone': [
    () => Object.defineProperty(new Error('down'), 'constructor', { value: undefined }),
    'Error',
  ],
  'an Error whose name is not a string': [() => Object.assign(new Error('down'), { name: 42 }), 'Error'],
  'a TypeError of another realm (a vm context)': [
    () => runInNewContext('new TypeError("down")'),
    'TypeError',
  ],
  'a RangeError': [() => new RangeError('down'), 'RangeError'],
  'a string': [() => 'down', 'string'],
};

describe('errorClassOf on the memory queue dead letters', () => {
  it('names a class for every failure a handler can throw, never throwing itself', async () => {
    const receiver = createReceiver({
      secret,
      logger: silentLogger,
      queue: createMemoryQueue({ attempts: 1 }),
    });
    onTestFinished(() => receiver.close({ timeoutMs: 5000 }));
    const kinds = new Map<string, string>();
    receiver.on('leave.approved', (event) => {
      throw thrown[kinds.get(event.id)!]![0]();
    });
    for (const kind of Object.keys(thrown)) {
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
      kinds.set(delivery.event.id, kind);
      const answer = await receiver.handle({
        method: 'POST',
        headers: delivery.headers,
        body: new TextEncoder().encode(delivery.body),
      });
      expect(answer.status).toBe(202);
    }
    await receiver.close({ timeoutMs: 10_000 });
    const { items } = await receiver.deadLetters();
    const listed = Object.fromEntries(
      items.map((letter) => [kinds.get(letter.event.id), errorClassOf(letter.error)]),
    );
    expect(listed).toEqual(
      Object.fromEntries(Object.entries(thrown).map(([kind, [, name]]) => [kind, name])),
    );
  });
});
