// Inline mode and its lease on a real Redis: a handler that holds the event loop past its lease keeps its claim,
// one whose claim was taken stops with a clear reason, and a done mark that finds the claim gone is logged.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver, WebhookError } from 'workforce-webhooks';
import { createNodeHandler } from 'workforce-webhooks/node';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery, type SignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_inline_lease_test';
const encoder = new TextEncoder();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function inlineReceiver(prefix: string, logger = recordingLogger(), leaseMs = 300): Receiver {
  const receiver = createReceiver({
    secret,
    mode: 'inline',
    leaseMs,
    logger,
    store: createRedisStore({ client: connectRedis(), prefix }),
  });
  cleanups.push(() => receiver.close({ timeoutMs: 2000 }));
  return receiver;
}

const handle = (receiver: Receiver, delivery: SignedDelivery<string>) =>
  receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });

// Another process posts `delivery` every `everyMs` for `forMs`, like a sender whose copies arrive while this
// process is busy (they wait in the socket, as real ones do); resolves with the statuses it got.
function sendCopies(url: string, delivery: SignedDelivery<string>, everyMs: number, forMs: number) {
  const script = `
    const { url, headers, body, everyMs, forMs } = JSON.parse(process.env.COPIES);
    const statuses = [];
    const until = Date.now() + forMs;
    const sends = [];
    const tick = setInterval(() => {
      if (Date.now() > until) return clearInterval(tick), Promise.all(sends).then(() => console.log(JSON.stringify(statuses)));
      sends.push(fetch(url, { method: 'POST', headers, body }).then((r) => statuses.push(r.status), () => statuses.push(0)));
    }, everyMs);`;
  const child = spawn(process.execPath, ['-e', script], {
    env: { ...process.env, COPIES: JSON.stringify({ url, ...delivery, everyMs, forMs }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise<number[]>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(output) as number[]) : reject(new Error(output)),
    );
  });
}

describe.skipIf(!redisUrl)('inline mode and its lease (Redis store)', () => {
  it('runs an event once when a synchronous section outlasts the lease while copies keep arriving', {
    timeout: 60_000,
  }, async () => {
    // The case was a 300 ms lease and a 600 ms section; the same ratio at 1 s leaves a loaded machine the
    // lease's own margin between the renewal and the done mark.
    const receiver = inlineReceiver(`${uniqueName('sync')}:`, recordingLogger(), 1000);
    let runs = 0;
    receiver.on('leave.approved', async () => {
      runs++;
      await sleep(20);
      const until = Date.now() + 2000; // twice the lease, the event loop held
      while (Date.now() < until);
      await sleep(20);
    });
    const server = createServer(createNodeHandler(receiver));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => void server.close());
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });

    // The first copy runs it; the others arrive while the loop is held, and after.
    const statuses = await sendCopies(url, delivery, 50, 4000);
    expect(statuses.length).toBeGreaterThan(10);
    expect(statuses.every((status) => [200, 409].includes(status))).toBe(true);
    expect(statuses).toContain(409);
    expect(runs).toBe(1);
  });

  it('aborts ctx.signal with lease_lost and logs an error when a renewal finds the claim taken', async () => {
    const prefix = `${uniqueName('taken')}:`;
    const logger = recordingLogger();
    const receiver = inlineReceiver(prefix, logger);
    const redis = connectRedis();
    let reason: unknown;
    let runs = 0;
    receiver.on('leave.approved', async (event, ctx) => {
      runs++;
      // Another delivery takes the id over (as after a lapsed lease): the next renewal finds its token.
      await redis.set(`${prefix}${event.id}`, 'another-deliverys-token', 'PX', 30_000);
      await new Promise<void>((resolve) => {
        ctx.signal.addEventListener('abort', () => resolve());
        setTimeout(resolve, 5000);
      });
      reason = ctx.signal.reason;
    });
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const answer = await handle(receiver, delivery);
    expect(reason).toBeInstanceOf(WebhookError);
    expect((reason as WebhookError).code).toBe('lease_lost');
    expect(answer.status).toBe(500);
    expect(
      logger.lines.filter((line) => line.level === 'error' && /lease was lost/.test(line.msg ?? '')),
    ).toHaveLength(1);
    // Nothing handed to the queue: the event belongs to the delivery that took it.
    expect(await redis.get(`${prefix}${delivery.event.id}`)).toBe('another-deliverys-token');
    expect((await receiver.deadLetters()).items).toEqual([]);
    expect(runs).toBe(1);
  });

  it('logs at error level a done mark that finds the claim taken by another delivery', async () => {
    const prefix = `${uniqueName('taken')}:`;
    const logger = recordingLogger();
    const receiver = inlineReceiver(prefix, logger);
    const redis = connectRedis();
    receiver.on('leave.approved', async (event) => {
      await redis.set(`${prefix}${event.id}`, 'another-delivery-token');
    });
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    expect((await handle(receiver, delivery)).status).toBe(200);
    expect(
      logger.lines.filter((line) => line.level === 'error' && line.obj.eventId === delivery.event.id),
    ).toHaveLength(1);
    expect(await redis.get(`${prefix}${delivery.event.id}`)).toBe('another-delivery-token');
  });

  it('marks the id done when its lease lapsed and nobody took it (the key is gone)', async () => {
    const prefix = `${uniqueName('gone')}:`;
    const logger = recordingLogger();
    const receiver = inlineReceiver(prefix, logger);
    const redis = connectRedis();
    receiver.on('leave.approved', async (event) => {
      await redis.del(`${prefix}${event.id}`);
    });
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    expect((await handle(receiver, delivery)).status).toBe(200);
    expect(await redis.get(`${prefix}${delivery.event.id}`)).toBe('done');
    expect(logger.lines.filter((line) => line.level === 'error')).toEqual([]);
  });
});
