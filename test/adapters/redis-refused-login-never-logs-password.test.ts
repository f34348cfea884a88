import { inspect } from 'node:util';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type Logger } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';

const secret = 'whsec_redis_refused_login';
const encoder = new TextEncoder();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// Every line as a logger that prints its fields in full would print it (pino and the console both print an error's
// own fields and its cause).
function printingLogger(): { logger: Logger; printed: string[] } {
  const printed: string[] = [];
  const print = (level: string) => (fields: object, msg?: string) =>
    void printed.push(`${level} ${msg ?? ''} ${inspect(fields, { depth: null })} ${JSON.stringify(fields)}`);
  return { logger: { debug() {}, info() {}, warn: print('warn'), error: print('error') }, printed };
}

describe.skipIf(!hasRedisServer())('Redis store: a login Redis refuses', () => {
  it.each([
    [
      'a wrong password',
      'wrong-password-1f9c',
      (port: number) => `redis://:wrong-password-1f9c@127.0.0.1:${port}`,
    ],
    [
      'a wrong user and password',
      'wrong-password-7a2e',
      (port: number) => `redis://app:wrong-password-7a2e@127.0.0.1:${port}`,
    ],
  ])(
    'never logs the password with %s, in the store line or the 503s',
    { timeout: 60_000 },
    async (_, password, url) => {
      const server = await startRedisServer(['--requirepass', 'the-right-one']);
      cleanups.push(() => server.dispose());
      const { port } = server;
      const client = new Redis(url(port), { maxRetriesPerRequest: 1 });
      let errors = 0;
      client.on('error', () => {
        errors += 1;
      });
      cleanups.push(async () => client.disconnect());
      const { logger, printed } = printingLogger();
      const receiver = createReceiver({
        secret,
        logger,
        mode: 'inline',
        store: createRedisStore({ client, logger }),
      }).on('leave.approved', () => {});
      cleanups.push(() => receiver.close({ timeoutMs: 2000 }));

      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
        const answer = await receiver.handle({
          method: 'POST',
          headers: delivery.headers,
          body: encoder.encode(delivery.body),
        });
        statuses.push(answer.status);
      }
      await expect.poll(() => errors, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
      expect(statuses).toEqual([503, 503, 503]);
      // Said, with the fix, in the store's line and with each 503.
      expect(printed.filter((line) => line.includes('Redis refused the username or password'))).toHaveLength(
        4,
      );
      expect(printed.join('\n')).not.toContain(password);
    },
  );
});
