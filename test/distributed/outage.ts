// Helpers of the outage tests: a receiver served on loopback in this process, and deliveries sent across a crash of its backend.
import { createServer } from 'node:http';
import { expect } from 'vitest';
import type { Receiver } from 'workforce-webhooks';
import { createNodeHandler } from 'workforce-webhooks/node';
import { createSignedDelivery, type SignedDelivery } from 'workforce-webhooks/testing';
import { type Answers, deliverUntilAccepted } from './cluster.js';

/** What one POST got: the status, the Retry-After header and the body. */
export interface Answer {
  readonly status: number;
  readonly retryAfter: string | null;
  readonly body: string;
}

/** A receiver behind node:http on loopback: its URL, one-shot `post`, and `close` (server, then a drain). */
export interface Served {
  readonly url: string;
  post(delivery: SignedDelivery<string>): Promise<Answer>;
  close(): Promise<void>;
}

/**
 * Serves `receiver` on a free loopback port with the node adapter, as an application would.
 * @example
 * const served = await serveReceiver(receiver);
 * expect((await served.post(delivery)).status).toBe(202);
 */
export async function serveReceiver(receiver: Receiver): Promise<Served> {
  const server = createServer(createNodeHandler(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  return {
    url,
    async post(delivery) {
      const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
      return {
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        body: await response.text(),
      };
    },
    async close() {
      server.close();
      await receiver.close({ timeoutMs: 2000 });
    },
  };
}

/**
 * `count` fresh deliveries of `type`, each with its own event id.
 * @example
 * const before = await signedDeliveries(secret, 10);
 */
export function signedDeliveries(
  secret: string,
  count: number,
  type = 'leave.approved',
): Promise<SignedDelivery<string>[]> {
  return Promise.all(Array.from({ length: count }, () => createSignedDelivery({ secret, type })));
}

/** A server a test can crash and bring back on the same port (`RedisServer`, `PostgresServer`). */
export interface Restartable {
  stop(options?: { readonly crash?: boolean }): Promise<void>;
  start(): Promise<void>;
}

/**
 * Crashes `backend`, sends 20 new deliveries and expects each refused 503 `store_unavailable` with a Retry-After (never
 * a 2xx without a claim), brings `backend` back, and retries each like the sender until the same receiver, never
 * restarted, accepts it with a 202. Resolves with those deliveries and every answer each got.
 * @example
 * const { during, retried } = await deliverAcrossCrash(served, redis, { secret, pauseMs: 50 });
 */
export async function deliverAcrossCrash(
  served: Served,
  backend: Restartable,
  { secret, pauseMs }: { readonly secret: string; readonly pauseMs: number },
): Promise<{ readonly during: SignedDelivery<string>[]; readonly retried: Answers[] }> {
  await backend.stop({ crash: true });
  const during = await signedDeliveries(secret, 20);
  const refused = await Promise.all(during.map((delivery) => served.post(delivery)));
  for (const answer of refused) {
    expect(answer.status).toBe(503);
    expect(answer.retryAfter).toMatch(/^\d+$/);
    expect(JSON.parse(answer.body)).toEqual({ error: 'store_unavailable' });
  }

  await backend.start();
  const retried = await Promise.all(
    during.map((delivery) => deliverUntilAccepted(delivery, () => served.url, { pauseMs })),
  );
  expect(retried.map((answers) => answers.at(-1))).toEqual(Array(20).fill(202));
  return { during, retried };
}
