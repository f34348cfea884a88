// The mock service with an `onAttempt` that throws or rejects: deliveries, retries and settling go on as without it,
// and nothing is left rejected unhandled.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, type TestContext } from 'vitest';
import { createMockService, type DeliveryAttempt } from 'workforce-webhooks/testing';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

/** An endpoint that answers 500 to the first delivery and 200 after it. */
async function failingOnce(): Promise<string> {
  let answered = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => res.writeHead(answered++ === 0 ? 500 : 200).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
}

// The rejections nobody handled while the test ran.
function unhandledRejections(onTestFinished: TestContext['onTestFinished']): unknown[] {
  const seen: unknown[] = [];
  const record = (reason: unknown): void => {
    seen.push(reason);
  };
  process.on('unhandledRejection', record);
  onTestFinished(() => {
    process.off('unhandledRejection', record);
  });
  return seen;
}

// `promise`, or 'no answer' when it has not settled after a wide bound (a hang, not a slow machine).
const settledOrHung = <T>(promise: Promise<T>): Promise<T | 'no answer'> =>
  Promise.race([promise, new Promise<'no answer'>((resolve) => setTimeout(resolve, 10_000, 'no answer'))]);

const callbacks = {
  throws: () => {
    throw new Error('a bug in the test callback');
  },
  rejects: async () => {
    throw new Error('a bug in the async test callback');
  },
};

describe('createMockService({ onAttempt }) with a callback that fails', () => {
  it.for(Object.entries(callbacks))(
    'delivers, retries and settles as without the callback when it %s',
    async ([, fail], { onTestFinished }) => {
      const unhandled = unhandledRejections(onTestFinished);
      const called: DeliveryAttempt[] = [];
      const mock = await createMockService({
        retryScheduleMs: [5],
        onAttempt: (attempt) => {
          called.push(attempt);
          return fail();
        },
      });
      cleanup.push(() => mock.close());
      mock.subscribe(await failingOnce());
      const emission = await settledOrHung(mock.sendTest());
      expect(emission).not.toBe('no answer');
      expect(await settledOrHung(mock.settled())).toBeUndefined();
      // The attempts as they were: the failure with its retry scheduled, then the retry's success.
      const outcomes = mock.deliveries.map(({ attempt, status, ok, retryInMs }) => ({
        attempt,
        status,
        ok,
        retryInMs,
      }));
      expect(outcomes).toEqual([
        { attempt: 1, status: 500, ok: false, retryInMs: 5 },
        { attempt: 2, status: 200, ok: true, retryInMs: undefined },
      ]);
      expect(called).toEqual(mock.deliveries);
      // Rejections are reported once the microtasks ran: after a turn of the event loop, any would be here.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    },
  );
});
