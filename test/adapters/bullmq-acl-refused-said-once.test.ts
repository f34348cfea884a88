// The BullMQ queue on a Redis user whose ACL leaves out the queue's keys (a managed Redis user limited to its app's
// key pattern): Redis refuses the worker's every fetch, and the log says so once, with the fix, not once a second.
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore, createReceiver, type Logger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// How many of the user's commands Redis refused, by its ACL log (repeats of one refusal are counted in one entry).
async function refusals(admin: Redis): Promise<number> {
  const entries = (await admin.call('ACL', 'LOG')) as unknown[][];
  let count = 0;
  for (const entry of entries) {
    const at = entry.indexOf('count');
    count += Number(entry[at + 1]);
  }
  return count;
}

describe.skipIf(!hasRedisServer())('createBullmqQueue on a Redis user not allowed its keys', () => {
  it('says once, with the ACL to grant, however many fetches Redis refuses', {
    timeout: 60_000,
  }, async () => {
    const server = await startRedisServer();
    cleanups.push(() => server.dispose());
    const admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
    cleanups.push(() => admin.disconnect());
    await admin.call('ACL', 'SETUSER', 'app', 'on', '>app-password', '~app:*', '+@all');
    const lines: { msg: string; fields: object }[] = [];
    const keep = (fields: object, msg?: string) => void lines.push({ msg: msg ?? '', fields });
    const logger: Logger = { debug() {}, info() {}, warn: keep, error: keep };
    const receiver = createReceiver({
      secret: 'whsec_bullmq_acl',
      store: createMemoryStore(),
      queue: createBullmqQueue({
        connection: `redis://app:app-password@127.0.0.1:${server.port}`,
        name: 'acl',
      }),
      logger,
    }).on('leave.approved', () => {});
    cleanups.push(() => receiver.close({ timeoutMs: 2000 }));

    await expect.poll(() => refusals(admin), { timeout: 45_000, interval: 100 }).toBeGreaterThanOrEqual(6);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.msg).toMatch(/the Redis user may not use the queue's keys or commands \(NOPERM/);
    expect(lines[0]!.msg).toMatch(/ACL SETUSER <user> ~bull:\* \+@all/);
    expect(lines[0]!.fields).toEqual({ kind: 'NOPERM', queue: 'acl' });
    expect(JSON.stringify(lines)).not.toMatch(/app-password/);
  });
});
