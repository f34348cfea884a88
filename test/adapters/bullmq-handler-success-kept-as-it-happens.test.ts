// The BullMQ queue keeps each handler's success on the job as it happens when others of the event still run (one
// write each), and writes nothing more for an event with one handler; an older attempt never overwrites the record of
// the attempt that took its job over.
import { once } from 'node:events';
import { connect } from 'node:net';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore, createReceiver, type Receiver, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';

const secret = 'whsec_bullmq_handler_success_kept';
const encoder = new TextEncoder();

const toClose: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const each of toClose.splice(0).reverse()) await each.close();
});

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

async function deliver(receiver: Receiver, type: string, id: string): Promise<number> {
  const delivery = await createSignedDelivery({ secret, type, id });
  const answer = await receiver.handle({
    method: 'POST',
    headers: delivery.headers,
    body: encoder.encode(delivery.body),
  });
  return answer.status;
}

// Every write of a job's `data` field that Redis runs for the queue `name` (a script's included), as MONITOR shows
// them: on a socket of its own, each line read as it comes.
async function watchDataWrites(
  name: string,
): Promise<{ readonly writes: string[]; readonly echoed: string[]; stop(): void }> {
  const { hostname, port } = new URL(redisUrl);
  const socket = connect(Number(port || 6379), hostname);
  await once(socket, 'connect');
  const writes: string[] = [];
  // ECHOs seen: a test echoes a mark to know every command Redis ran before it has been read here.
  const echoed: string[] = [];
  const echo = /"echo" "([^"]*)"$/i;
  const write = new RegExp(`^\\+\\S+ \\[[^\\]]*\\] "hset" "(bull:${name}:[^"]*)" "data"`, 'i');
  let pending = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\r\n');
    pending = lines.pop()!;
    for (const line of lines) {
      const key = write.exec(line)?.[1];
      if (key !== undefined) writes.push(key);
      const mark = echo.exec(line)?.[1];
      if (mark !== undefined) echoed.push(mark);
    }
  });
  socket.write('MONITOR\r\n');
  return { writes, echoed, stop: () => socket.destroy() };
}

describe.skipIf(!redisUrl)('the handlers’ successes of a BullMQ job', () => {
  it('are written once per success while other handlers run, and never for an event with one handler', {
    timeout: 60_000,
  }, async () => {
    const name = uniqueName('success-kept');
    const redis: Redis = connectRedis();
    const gate = deferred();
    const runs: string[] = [];
    const receiver = createReceiver({
      secret,
      store: createMemoryStore(),
      queue: createBullmqQueue({ connection: connectRedis(), name }),
      logger: silentLogger,
    });
    toClose.push(receiver);
    receiver.on('employee.created', async (event) => {
      runs.push(`one:${event.id}`);
    });
    receiver.on('leave.approved', async (event) => {
      runs.push(`first:${event.id}`);
    });
    receiver.on('leave.approved', async (event) => {
      runs.push(`second:${event.id}`);
      await gate.promise;
    });
    const watch = await watchDataWrites(name);
    toClose.push({ close: async () => watch.stop() });

    // One handler: nothing written beside what BullMQ writes itself.
    const single = crypto.randomUUID();
    expect(await deliver(receiver, 'employee.created', single)).toBe(202);
    await expect
      .poll(() => redis.zscore(`bull:${name}:completed`, single), { timeout: 20_000 })
      .not.toBeNull();
    expect(runs).toEqual([`one:${single}`]);

    // Two handlers, the first done while the second waits: its success is on the job at once, in one write.
    const several = crypto.randomUUID();
    expect(await deliver(receiver, 'leave.approved', several)).toBe(202);
    const completed = async () =>
      (JSON.parse((await redis.hget(`bull:${name}:${several}`, 'data')) ?? '{}') as { completed?: number[] })
        .completed;
    await expect.poll(completed, { timeout: 20_000 }).toHaveLength(1);
    gate.resolve();
    await expect
      .poll(() => redis.zscore(`bull:${name}:completed`, several), { timeout: 20_000 })
      .not.toBeNull();
    expect(runs.slice(1).sort()).toEqual([`first:${several}`, `second:${several}`]);
    // MONITOR's lines may trail the answers: once it shows a mark echoed after the completion, it showed every write.
    const mark = `${name}:done`;
    await redis.echo(mark);
    await expect.poll(() => watch.echoed, { timeout: 10_000 }).toContain(mark);
    expect(watch.writes).toEqual([`bull:${name}:${several}`]);
    redis.disconnect();
  });

  it('are not overwritten by an older attempt that ends after another worker took its job over', {
    timeout: 90_000,
  }, async () => {
    const name = uniqueName('success-stale-write');
    const redis: Redis = connectRedis();
    const older = deferred();
    const newer = deferred();
    const runs: string[] = [];
    // The older worker: one slot (so the job, once taken from it, goes to the other worker), and a lock renewed only
    // long after the test (its lapse is made by hand). Both its handlers fail once told to.
    const first = createReceiver({
      secret,
      store: createMemoryStore(),
      queue: createBullmqQueue({
        connection: connectRedis(),
        name,
        concurrency: 1,
        lockDurationMs: 60_000,
        lockRenewMs: 59_000,
        stalledIntervalMs: 200,
      }),
      logger: silentLogger,
    });
    for (const handler of ['x', 'y'])
      first.on('leave.approved', async () => {
        runs.push(`${handler}:older`);
        await older.promise;
        throw new Error(`${handler} failed`);
      });
    const id = crypto.randomUUID();
    expect(await deliver(first, 'leave.approved', id)).toBe(202);
    await expect.poll(() => runs.length, { timeout: 20_000 }).toBe(2);

    // Its lock lapses (as for a worker stuck past it): the newer worker takes the job over; there `y` succeeds at
    // once and `x` waits, so `y`'s success is on the job.
    const second = createReceiver({
      secret,
      store: createMemoryStore(),
      queue: createBullmqQueue({ connection: connectRedis(), name, stalledIntervalMs: 200 }),
      logger: silentLogger,
    });
    toClose.push(second);
    second.on('leave.approved', async () => {
      runs.push('x:newer');
      await newer.promise;
    });
    second.on('leave.approved', async () => {
      runs.push('y:newer');
    });
    await redis.del(`bull:${name}:${id}:lock`);
    const completed = async () =>
      (JSON.parse((await redis.hget(`bull:${name}:${id}`, 'data')) ?? '{}') as { completed?: number[] })
        .completed;
    await expect.poll(completed, { timeout: 30_000 }).toEqual([1]);

    // The older attempt ends now, its handlers failed: what it writes must not drop `y`'s success.
    older.resolve();
    await first.close({ timeoutMs: 10_000 });
    expect(await completed()).toEqual([1]);
    newer.resolve();
    await expect.poll(() => redis.zscore(`bull:${name}:completed`, id), { timeout: 20_000 }).not.toBeNull();
    expect(runs.sort()).toEqual(['x:newer', 'x:older', 'y:newer', 'y:older']);
    redis.disconnect();
  });
});
