// Counting Redis round trips in process: every ioredis client (the package's, BullMQ's copies of it, a hand-written
// one) goes through Redis.prototype.sendCommand, and each delivery runs in an AsyncLocalStorage context of its own.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Redis } from 'ioredis';

/** One delivery's round trips: those whose reply came in before its answer, and those after. */
interface Delivery {
  answered: boolean;
  before: number;
  after: number;
}

/** Round trips counted since `countRoundTrips` was called. */
export interface RoundTrips {
  /** Runs `accept` for one delivery and counts the round trips made in its context, before and after it resolves. */
  deliver<T>(accept: () => Promise<T>): Promise<T>;
  /** Totals so far: before and after the answers, and outside any delivery (workers, their idle fetches). */
  totals(): { readonly before: number; readonly after: number; readonly outside: number };
}

/**
 * Patches ioredis so that every round trip is counted. Commands written in one synchronous turn on one client (a
 * pipeline or a MULTI) are one round trip.
 * @example
 * const trips = countRoundTrips(); await trips.deliver(() => receiver.handle(input)); trips.totals();
 */
export function countRoundTrips(): RoundTrips {
  const storage = new AsyncLocalStorage<Delivery>();
  const deliveries: Delivery[] = [];
  let outside = 0;
  let batchClient: unknown;
  const send = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<Redis['sendCommand']>) {
    const reply = send.apply(this, args);
    if (batchClient !== this) {
      batchClient = this;
      queueMicrotask(() => {
        batchClient = undefined;
      });
      const delivery = storage.getStore();
      const tally = (): void => {
        if (delivery === undefined) outside++;
        else if (delivery.answered) delivery.after++;
        else delivery.before++;
      };
      (args[0] as unknown as { promise: Promise<unknown> }).promise.then(tally, tally);
    }
    return reply;
  } as Redis['sendCommand'];
  return {
    deliver(accept) {
      const delivery: Delivery = { answered: false, before: 0, after: 0 };
      deliveries.push(delivery);
      return storage.run(delivery, accept).finally(() => {
        delivery.answered = true;
      });
    },
    totals: () => ({
      before: deliveries.reduce((sum, d) => sum + d.before, 0),
      after: deliveries.reduce((sum, d) => sum + d.after, 0),
      outside,
    }),
  };
}
