// `check` against a receiver whose Redis store has stopped: each 503 store_unavailable comes with what to look at.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createNodeHandler } from 'workforce-webhooks/node';
import { createRedisStore } from 'workforce-webhooks/redis';
import { runCli } from '../../cli/run.js';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';
import { capture } from './capture.js';

const SECRET = 'whsec_check_store_hint';
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

describe('check on a receiver whose dedupe store is down', () => {
  it.skipIf(!hasRedisServer())(
    'prints 503 store_unavailable with a hint to look at the store',
    { timeout: 60_000 },
    async () => {
      const redis = await startRedisServer();
      cleanup.push(() => redis.dispose());
      // The client the README advises for the store.
      const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
      client.on('error', () => {});
      cleanup.push(async () => client.disconnect());
      const receiver = createReceiver({
        secret: SECRET,
        store: createRedisStore({ client }),
        storeTimeoutMs: 300,
        logger: false,
      }).on('webhook.test', () => {});
      cleanup.push(() => receiver.close());
      const server = createServer(createNodeHandler(receiver));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      cleanup.push(async () => {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      });
      await redis.stop();
      const io = capture();
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
      expect(await runCli(['check', '--url', url, '--secret', SECRET, '--timeout-ms', '5000'], io)).toBe(1);
      expect(io.out).toContain('answer: 503 {"error":"store_unavailable"}');
      expect(io.out).toMatch(/hint: +the receiver's dedupe store \(Redis or Postgres\) is unreachable/);
    },
  );
});
