// Spec rule 2 and "Limits": the service waits 10 s (the mock's timeoutMs) for an answer, then counts a failure. The
// deadline holds however often the garbage collector runs while the endpoint keeps silent, and any number of attempts
// may wait at once.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { createMockService } from 'workforce-webhooks/testing';

// The real collector, run on demand: a test process is not started with --expose-gc.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

/** An endpoint that takes each delivery and never answers. */
async function silentEndpoint(): Promise<string> {
  const server = createServer((req) => {
    req.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
}

// A hang shows as this rather than as the test's own time limit; generous, the machine is shared.
const within = <T>(work: Promise<T>, what: string): Promise<T> =>
  Promise.race([
    work,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what} did not end within 15 s`)), 15_000).unref(),
    ),
  ]);

describe('an endpoint that never answers, while the garbage collector runs', () => {
  it('fails at the time limit and is retried, every time', async () => {
    const collector = setInterval(collect, 20);
    cleanup.push(async () => clearInterval(collector));
    const mock = await createMockService({ today: '2026-06-15', timeoutMs: 1000, retryScheduleMs: [60_000] });
    cleanup.push(() => mock.close());
    mock.subscribe(await silentEndpoint());
    for (let round = 0; round < 3; round++) {
      const { attempts } = await within(mock.sendTest(), 'the attempt');
      expect(attempts).toMatchObject([{ ok: false, error: 'no answer within 1000 ms', retryInMs: 60_000 }]);
    }
  });
});

describe('many attempts waiting for their answers at once', () => {
  it('is no leak to warn of: no MaxListenersExceededWarning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning.name);
    };
    process.on('warning', onWarning);
    cleanup.push(async () => process.off('warning', onWarning));
    // Holds every delivery until all of them are waiting, then answers them all.
    const waiting: (() => void)[] = [];
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        waiting.push(() => res.writeHead(200).end());
        if (waiting.length === 15) for (const answer of waiting.splice(0)) answer();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    });
    const mock = await createMockService({ today: '2026-06-15', retryScheduleMs: [] });
    cleanup.push(() => mock.close());
    mock.subscribe(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);
    // One emission a tick: each goes out on its own, so all fifteen wait for their answers together.
    const emissions = [];
    for (let n = 0; n < 15; n++) {
      emissions.push(mock.sendTest());
      await new Promise((resolve) => setImmediate(resolve));
    }
    const attempts = (await within(Promise.all(emissions), 'the attempts')).flatMap((e) => e.attempts);
    expect(attempts.map((a) => a.status)).toEqual(Array(15).fill(200));
    // A warning is emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.filter((name) => name === 'MaxListenersExceededWarning')).toEqual([]);
  });
});
