// Ordering and lease renewals: a run whose lease lapsed (its renewals late: a busy event loop, a store that went
// quiet) while a newer event of the record took the key, ran and gave it up. Its next renewal must not take the free
// key: it tells the run's handlers they lost the key (lease_lost), so older handlers do not write over newer ones.
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createMemoryQueue, createReceiver, type WorkforceEvent } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { signedLeave, until } from '../support/ordering-scenario.js';

const secret = 'whsec_ordering_renewals';

// A TCP relay to Redis whose client-to-server direction can be held (what the instance sends is kept, not lost),
// as a connection that goes quiet for a while and then delivers.
async function pausableRelay(url: string) {
  const target = new URL(url);
  let held: Buffer[] | undefined;
  const ups = new Set<Socket>();
  const server: Server = createServer((down) => {
    const up = connect(Number(target.port), target.hostname);
    ups.add(up);
    down.on('data', (chunk) => (held === undefined ? up.write(chunk) : held.push(chunk)));
    up.pipe(down);
    const end = () => {
      up.destroy();
      down.destroy();
      ups.delete(up);
    };
    down.on('error', end).on('close', end);
    up.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    pause: () => {
      held = [];
    },
    resume: () => {
      const chunks = held ?? [];
      held = undefined;
      for (const up of ups) for (const chunk of chunks) up.write(chunk);
    },
    close: () => {
      for (const up of ups) up.destroy();
      server.close();
    },
  };
}

// The older event's handlers ran on after the newer event's ended (older over newer): at the least, their signal
// said before they ended that they lost the key, as it does when the newer event still holds it.
function expectOlderToldAfterNewer(
  log: readonly string[],
  abortedBeforeItsEnd: boolean,
  olderSignal: AbortSignal | undefined,
): void {
  expect(log).toEqual([
    'start leave.requested',
    'start leave.approved',
    'end leave.approved',
    'end leave.requested',
  ]);
  expect({
    abortedBeforeItsEnd,
    reason: (olderSignal?.reason as { code?: string } | undefined)?.code,
  }).toEqual({
    abortedBeforeItsEnd: true,
    reason: 'lease_lost',
  });
}

describe.skipIf(!redisUrl)(
  'Redis store × memory queue, two instances: a lease that lapsed while its handlers ran',
  () => {
    it("aborts the older event's handlers (lease_lost) once the newer event, on the other instance, took and left the key", {
      timeout: 20_000,
    }, async () => {
      const relay = await pausableRelay(redisUrl);
      onTestFinished(() => relay.close());
      const prefix = `${uniqueName('ordering-renewals')}:`;
      const log: string[] = [];
      let olderSignal: AbortSignal | undefined;
      let finishOlder!: () => void;
      const older = new Promise<void>((resolve) => {
        finishOlder = resolve;
      });
      const make = (client: ReturnType<typeof connectRedis>) => {
        const receiver = createReceiver({
          secret,
          store: createRedisStore({ client, prefix }),
          leaseMs: 600, // renewed every 200 ms
          queue: createMemoryQueue(),
          ordering: {},
        });
        receiver.on('leave.*', async (event: WorkforceEvent, ctx) => {
          log.push(`start ${event.type}`);
          if (event.type === 'leave.requested') {
            olderSignal = ctx.signal;
            await older;
          }
          log.push(`end ${event.type}`);
        });
        onTestFinished(() => receiver.close());
        return receiver;
      };
      const a = make(connectRedis(relay.url));
      const b = make(connectRedis());
      const key = crypto.randomUUID();
      expect((await a.handle(await signedLeave(secret, 'leave.requested', 1, key))).status).toBe(202);
      await until(() => log.includes('start leave.requested'), 'the older event');
      relay.pause(); // `a`'s connection goes quiet: its renewals wait in the relay
      await sleep(900); // past the lease
      expect((await b.handle(await signedLeave(secret, 'leave.approved', 2, key))).status).toBe(202);
      await until(() => log.includes('end leave.approved'), 'the newer event on b');
      relay.resume(); // `a`'s renewals reach Redis now, the key free
      await sleep(700);
      const abortedBeforeItsEnd = olderSignal?.aborted === true;
      finishOlder();
      await until(() => log.includes('end leave.requested'), 'the older event to end');
      expectOlderToldAfterNewer(log, abortedBeforeItsEnd, olderSignal);
    });
  },
);
