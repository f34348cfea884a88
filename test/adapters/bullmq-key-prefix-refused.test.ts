// A client with an ioredis keyPrefix (kept for the Redis store, which supports it) given to the BullMQ queue: BullMQ
// refuses it, so the queue says so when it is made, with the fix, before it opens any connection.
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { redisUrl, uniqueName } from '../setup/redis-helpers.js';

const clients: Redis[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.quit().catch(() => client.disconnect())));
});

// How many connections the Redis has open under `name` (CLIENT SETNAME, which ioredis's connectionName sets).
async function connectionsNamed(name: string): Promise<number> {
  const admin = new Redis(redisUrl);
  clients.push(admin);
  const list = String(await admin.call('CLIENT', 'LIST'));
  return list.split('\n').filter((line) => line.includes(` name=${name} `)).length;
}

describe.skipIf(!redisUrl)('createBullmqQueue given a connection with an ioredis keyPrefix', () => {
  it.each(['client', 'options'] as const)(
    'refuses it given as %s, with the prefix option to use instead, and opens nothing',
    async (form) => {
      const connectionName = uniqueName('key-prefix');
      const options = { keyPrefix: 'app:', connectionName, maxRetriesPerRequest: 1 };
      const client = new Redis(redisUrl, { ...options, lazyConnect: true });
      clients.push(client);
      const connection =
        form === 'client' ? client : { ...options, host: client.options.host, port: client.options.port };

      let thrown: unknown;
      try {
        createBullmqQueue({ connection, name: uniqueName('key-prefix-queue') });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ name: 'ConfigurationError', code: 'invalid_options' });
      expect((thrown as Error).message).toContain('the ioredis keyPrefix "app:", which BullMQ refuses');
      expect((thrown as Error).message).toContain('prefix: "app:bull"');
      // No connection of the queue's was left open behind the refusal.
      expect(await connectionsNamed(connectionName)).toBe(0);
    },
  );
});
