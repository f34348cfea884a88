// kill -9 of an instance while one handler of an event has succeeded and another still runs (BullMQ queue): the
// instance that takes the job over runs only the cut handler.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';

const secret = 'whsec_handler_success_kill';
const root = fileURLToPath(new URL('../../', import.meta.url));

// A receiver process on the sources, with two handlers per event: the catch-all one ends at once, the typed one ends
// at once too unless BLOCK=1 (then it never does). Each logs to Redis what it did, on which instance.
const INSTANCE = `
const { Redis } = await import('ioredis');
const { createServer } = await import('node:http');
const { createReceiver } = await import(${JSON.stringify(`${root}src/index.ts`)});
const { createBullmqQueue } = await import(${JSON.stringify(`${root}adapters/bullmq.ts`)});
const { createNodeHandler } = await import(${JSON.stringify(`${root}adapters/node.ts`)});
const { RUN_NAME: name, INSTANCE: instance, REDIS_URL: url, SECRET: secret, BLOCK: block } = process.env;
const connection = new Redis(url, { maxRetriesPerRequest: null });
const log = new Redis(url);
const receiver = createReceiver({
  secret,
  queue: createBullmqQueue({ connection, name, lockDurationMs: 1000, stalledIntervalMs: 500, backoff: () => 10 }),
});
receiver.onAny(async (event) => { await log.rpush(name + ':log', 'any:' + instance + ':' + event.id); });
receiver.on('leave.approved', async (event) => {
  await log.rpush(name + ':log', 'typed-start:' + instance + ':' + event.id);
  if (block === '1') await new Promise(() => {});
  await log.rpush(name + ':log', 'typed-done:' + instance + ':' + event.id);
});
const server = createServer(createNodeHandler(receiver));
server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: server.address().port }) + '\\n'));
`;

interface Child {
  readonly url: string;
  kill(signal: 'SIGKILL'): Promise<void>;
}

const children: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(
    children.splice(0).map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }),
  );
});

async function startChild(env: Record<string, string>): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', INSTANCE], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('\n')) resolve((JSON.parse(output.split('\n')[0]!) as { port: number }).port);
    });
    child.once('exit', (code) => reject(new Error(`instance ${env.INSTANCE} exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/`,
    async kill(signal) {
      child.kill(signal);
      await exited;
    },
  };
}

describe.skipIf(!redisUrl)('a handler that succeeded before its instance was killed (BullMQ queue)', () => {
  it('is not run again by the instance that takes the job over; the cut one is', {
    timeout: 120_000,
  }, async () => {
    const name = uniqueName('handler-kill');
    const env = { REDIS_URL: redisUrl, RUN_NAME: name, SECRET: secret };
    const redis = connectRedis();
    const entries = () => redis.lrange(`${name}:log`, 0, -1);
    const a = await startChild({ ...env, INSTANCE: 'a', BLOCK: '1' });
    const id = crypto.randomUUID();
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved', id });
    const response = await fetch(a.url, { method: 'POST', headers: delivery.headers, body: delivery.body });
    expect(response.status).toBe(202);

    // The catch-all handler succeeded on `a` while the typed one still runs there, and its success is on the job
    // (the typed handler registered second): then `a` dies.
    await expect
      .poll(async () => [...(await entries())].sort(), { timeout: 30_000, interval: 20 })
      .toEqual([`any:a:${id}`, `typed-start:a:${id}`]);
    const completed = async () =>
      (JSON.parse((await redis.hget(`bull:${name}:${id}`, 'data')) ?? '{}') as { completed?: number[] })
        .completed;
    await expect.poll(completed, { timeout: 10_000, interval: 20 }).toHaveLength(1);
    await a.kill('SIGKILL');

    await startChild({ ...env, INSTANCE: 'b', BLOCK: '0' });
    await expect.poll(entries, { timeout: 60_000, interval: 50 }).toContain(`typed-done:b:${id}`);
    // The job completed on `b` (nothing of it left to run) ...
    await expect
      .poll(() => redis.exists(`bull:${name}:${id}:lock`), { timeout: 30_000, interval: 50 })
      .toBe(0);
    // ... and only the typed handler, cut by the kill, ran there: the catch-all one's success was kept.
    expect((await entries()).filter((entry) => entry.startsWith('any:'))).toEqual([`any:a:${id}`]);
    expect(await entries()).toHaveLength(4);
    redis.disconnect();
  });
});
