// A store that can say what a failed call means (an address where its server never answered) has each delivery's 503
// logged with its fix, even when the receiver's own storeTimeoutMs gave up on the call first; without such a reading,
// or when the reading throws, the delivery is still answered 503 and logged as an outage.
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  ConfigurationError,
  createMemoryStore,
  createReceiver,
  type DedupeStore,
  type ReceiverOptions,
  WebhookError,
} from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_receiver_store_explains';
const FIX = 'the store has never answered at this address: check its host and port';

// A store whose server has never answered: its claims never settle, and it reads a call nobody answered as a wrong
// address (`explain`, when given). Its other calls are the memory store's.
function silentStore(explain?: (error: unknown) => unknown): DedupeStore & { readonly explained: unknown[] } {
  const memory = createMemoryStore();
  const explained: unknown[] = [];
  return {
    explained,
    claim: () => new Promise(() => {}),
    complete: (id, token, ttlMs) => memory.complete(id, token, ttlMs),
    release: (id, token) => memory.release(id, token),
    renew: (id, token, leaseMs) => memory.renew(id, token, leaseMs),
    ...(explain === undefined
      ? {}
      : {
          explain(error: unknown) {
            explained.push(error);
            return explain(error);
          },
        }),
  };
}

const neverAnswered = (error: unknown): unknown =>
  error instanceof WebhookError && error.code === 'store_unavailable'
    ? Object.assign(
        new ConfigurationError(`${error.message.replace(/^workforce-webhooks: /, '')} (${FIX})`),
        {
          cause: error,
        },
      )
    : error;

async function deliverTwice(store: DedupeStore, options: Partial<ReceiverOptions> = {}) {
  const logger = recordingLogger();
  const receiver = createReceiver({ secret, store, logger, storeTimeoutMs: 50, ...options });
  onTestFinished(() => receiver.close({ timeoutMs: 0 }));
  receiver.on('employee.created', () => {});
  const answers: { status: number; body: string }[] = [];
  for (let i = 0; i < 2; i++) {
    const delivery = await createSignedDelivery({ secret, type: 'employee.created' });
    const answer = await receiver.handle({
      method: 'POST',
      headers: delivery.headers,
      body: new TextEncoder().encode(delivery.body),
    });
    answers.push({ status: answer.status, body: answer.body });
  }
  return { answers, errors: logger.lines.filter((line) => line.level === 'error') };
}

describe("a store's reading of its own failures, on each delivery's line", () => {
  it("logs each 503 the receiver's deadline cut short with the store's fix", async () => {
    const store = silentStore(neverAnswered);
    const { answers, errors } = await deliverTwice(store);
    expect(answers.map((a) => a.status)).toEqual([503, 503]);
    expect(answers.map((a) => JSON.parse(a.body))).toEqual([
      { error: 'store_unavailable' },
      { error: 'store_unavailable' },
    ]);
    expect(errors).toHaveLength(2);
    for (const line of errors) {
      expect(line.msg).toBe(
        `workforce-webhooks: the dedupe store is not set up: no answer within 50 ms (${FIX})`,
      );
      expect(line.obj.eventId).toEqual(expect.any(String));
    }
    // Asked with the receiver's own deadline error, once per delivery.
    expect(store.explained).toHaveLength(2);
    for (const error of store.explained) expect((error as WebhookError).code).toBe('store_unavailable');
  });

  it('logs an outage as one when the store has no reading of it, or its reading throws', async () => {
    for (const store of [
      silentStore(),
      silentStore(() => {
        throw new Error('broken reading');
      }),
      silentStore((error) => error),
    ]) {
      const { answers, errors } = await deliverTwice(store);
      expect(answers.map((a) => a.status)).toEqual([503, 503]);
      expect(errors.map((line) => line.msg)).toEqual([
        'workforce-webhooks: the dedupe store is unreachable',
        'workforce-webhooks: the dedupe store is unreachable',
      ]);
    }
  });

  it('does not ask again about a failure the store already said is a setup mistake', async () => {
    const memory = createMemoryStore();
    const explained: unknown[] = [];
    const store: DedupeStore = {
      claim: () => Promise.reject(new ConfigurationError("the store's table is missing: run migrate()")),
      complete: (id, token, ttlMs) => memory.complete(id, token, ttlMs),
      release: (id, token) => memory.release(id, token),
      renew: (id, token, leaseMs) => memory.renew(id, token, leaseMs),
      explain(error) {
        explained.push(error);
        return new ConfigurationError('read twice');
      },
    };
    const { answers, errors } = await deliverTwice(store);
    expect(answers.map((a) => a.status)).toEqual([503, 503]);
    expect(errors.map((line) => line.msg)).toEqual([
      "workforce-webhooks: the dedupe store is not set up: the store's table is missing: run migrate()",
      "workforce-webhooks: the dedupe store is not set up: the store's table is missing: run migrate()",
    ]);
    expect(explained).toEqual([]);
  });
});
