// The mock's webhook sender: signed deliveries exactly as the spec's "Delivery format", retried on failure.
import { setMaxListeners } from 'node:events';
import { answerStart } from '../../api/answer-start.js';
import { signPayload } from '../../src/signature.js';
import type { WorkforceEvent } from '../../src/types.js';
import { attemptStop } from './attempt-stop.js';
import { checkSenderOptions } from './sender-options.js';

/** An endpoint added to the mock, with its signing secret and its event choice. */
export interface Subscription {
  readonly id: string;
  readonly url: string;
  readonly secret: string;
  /** `'all'` (Every event) or the selected types. */
  readonly events: 'all' | readonly string[];
  /** The organisation whose endpoint it is: it gets that organisation's events only. The mock's `subscribe` sets it. */
  readonly organizationId?: string;
}

/** Misbehaviour on request: a second copy (new delivery id), a batch sent in reverse, a wrong signature. */
export interface DeliveryFaults {
  /**
   * A second copy of each delivery, with a new delivery id: `true` sends it once the first attempt has ended (a
   * redelivery); `'concurrent'` sends both at once, as when the service sends an event again while the endpoint is
   * still on the first copy (spec rule 2: a late answer counts as a failure and the event is sent again).
   */
  readonly duplicate?: boolean | 'concurrent';
  /** Events emitted in the same tick are delivered last first. */
  readonly reorder?: boolean;
  readonly badSignature?: boolean;
}

/** One HTTP attempt of a delivery and how the subscriber answered. */
export interface DeliveryAttempt {
  readonly eventId: string;
  readonly type: string;
  readonly deliveryId: string;
  readonly subscriptionId: string;
  /** 1 for the first attempt of this delivery, then 2, 3... on retries. */
  readonly attempt: number;
  /** Milliseconds since the epoch when it was sent. */
  readonly sentAt: number;
  readonly status?: number;
  /** The subscriber's answer body (first 500 characters); absent when it was cut short or unfinished at the limit. */
  readonly body?: string;
  /** Why it failed without a status: a network error, no answer within the time limit, or `close()`. */
  readonly error?: string;
  /** The network error's code, when it has one (`ECONNREFUSED`, a TLS code such as `DEPTH_ZERO_SELF_SIGNED_CERT`). */
  readonly code?: string;
  /** Milliseconds until the answer's status came, or until the attempt failed without one. */
  readonly durationMs: number;
  /** True only for a 2xx answer within the time limit (spec: non-2xx, 3xx and slow answers fail). */
  readonly ok: boolean;
  /** True when `close()` stopped it before the answer came: it says nothing of the endpoint, and is not retried. */
  readonly cancelled?: boolean;
  /** When it failed and another attempt is scheduled: the wait before that retry, in ms. */
  readonly retryInMs?: number;
}

/** Options of `createSender`. */
export interface SenderOptions {
  /** Longest wait for an answer, 1 to 10 000 ms; default 10 000 (spec "Limits": answer time). */
  readonly timeoutMs?: number;
  /**
   * Waits before each retry, in ms (each at most 2^31 - 1, a timer's longest); the spec shows only that retries go
   * on for two days, which the default spans.
   */
  readonly retryScheduleMs?: readonly number[];
  /** `User-Agent` version: `Svc-Webhooks/<version>`. */
  readonly version?: string;
  /** Applied to every delivery, on top of per-delivery faults. */
  readonly faults?: DeliveryFaults;
  readonly fetch?: typeof fetch;
  /**
   * Called with every attempt once it has ended, retries included (after it is added to `attempts`); what it throws
   * or rejects with is ignored, and changes nothing of the delivery.
   */
  readonly onAttempt?: (attempt: DeliveryAttempt) => void;
}

/**
 * The default retry waits: 1 min, 5 min, 30 min, 2 h, 5 h, then 10 h four times (47.6 h in all): the last retry
 * comes close to the end of the spec's two days, with room left for ten answers of up to 10 s each.
 * @example
 * createMockService({ retryScheduleMs: DEFAULT_RETRY_SCHEDULE_MS.map((ms) => ms / 1000) })
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [1, 5, 30, 120, 300, 600, 600, 600, 600].map(
  (m) => m * 60_000,
);

/** Sends events to subscriptions and keeps the log of attempts. */
export interface Sender {
  /** Delivers to every subscription that chose the event (`webhook.test`: every one); resolves with each first try. */
  deliver(
    event: WorkforceEvent,
    subscriptions: readonly Subscription[],
    faults?: DeliveryFaults,
  ): Promise<DeliveryAttempt[]>;
  readonly attempts: readonly DeliveryAttempt[];
  /**
   * Sends nothing more to a removed subscription: its scheduled retries are dropped, and an attempt of it waiting for
   * its answer ends as it would, without a retry.
   */
  forget(subscriptionId: string): void;
  /** Resolves when no attempt is in flight or scheduled (use a short retry schedule in tests). */
  settled(): Promise<void>;
  /**
   * Cancels scheduled retries and stops the attempts waiting for an answer (recorded as `cancelled`); resolves once
   * none is in flight.
   */
  close(): Promise<void>;
}

// What an attempt stopped by close() records: not the endpoint's failure, and never retried.
const CANCELLED = { error: 'cancelled: the mock service was closed', ok: false, cancelled: true } as const;

type Item = {
  event: WorkforceEvent;
  /** The body as first sent: every retry and duplicate sends these bytes (the service resends what it stored). */
  body: string;
  targets: readonly Subscription[];
  faults: DeliveryFaults;
  done: (a: DeliveryAttempt[]) => void;
};

// Calls the test's `onAttempt`. A callback that throws (or, async, rejects) is the test's own bug: it must not cost
// the attempt its outcome, the delivery its retries or the batch behind it (a rejected flush would leave deliver()
// unresolved and end the test run as an unhandled rejection). Nothing is logged: the test kit has no logger.
function notify(onAttempt: (attempt: DeliveryAttempt) => void, attempt: DeliveryAttempt): void {
  try {
    const returned: unknown = onAttempt(attempt);
    if (typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function')
      Promise.resolve(returned).catch(() => {});
  } catch {
    // Ignored, as said above.
  }
}

// fetch's error names the cause only in its `cause`: its code is what says the fix (nothing listening, a TLS
// certificate not trusted), where the message does not.
function networkCode(error: unknown): { code?: string } {
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return typeof code === 'string' ? { code } : {};
}

/**
 * Creates the sender the mock service uses.
 * @example
 * const sender = createSender({ retryScheduleMs: [50, 100] });
 */
export function createSender({
  timeoutMs = 10_000,
  retryScheduleMs = DEFAULT_RETRY_SCHEDULE_MS,
  version = '1.0',
  faults: always = {},
  fetch: fetchImpl = globalThis.fetch,
  onAttempt,
}: SenderOptions = {}): Sender {
  checkSenderOptions(timeoutMs, retryScheduleMs, version);
  const attempts: DeliveryAttempt[] = [];
  // Each scheduled retry, with the subscription it is for.
  const timers = new Map<ReturnType<typeof setTimeout>, string>();
  // Subscriptions removed: nothing more goes to them, a retry included (the service stops at a deleted endpoint).
  const forgotten = new Set<string>();
  let busy = 0;
  // Aborted by close(): an attempt waiting for its answer stops at once rather than at its time limit, and no retry
  // of it is scheduled.
  const closing = new AbortController();
  const closed = closing.signal;
  // Each attempt in flight listens on it (see attemptStop): any number at once is by design, not a leak to warn of.
  setMaxListeners(0, closed);
  const idle: (() => void)[] = [];
  let batch: Item[] = [];
  const wake = (): void => {
    if (busy === 0 && timers.size === 0) for (const resolve of idle.splice(0)) resolve();
  };
  const track = async <T>(work: Promise<T>): Promise<T> => {
    busy++;
    try {
      return await work;
    } finally {
      busy--;
      wake();
    }
  };

  const attempt = async (
    event: WorkforceEvent,
    body: string,
    to: Subscription,
    deliveryId: string,
    n: number,
    faults: DeliveryFaults,
  ): Promise<DeliveryAttempt> => {
    // A wrong signature is a valid signature under a secret the subscriber does not hold.
    const secret = faults.badSignature ? `${to.secret}_wrong` : to.secret;
    const sentAt = Date.now();
    const base = {
      eventId: event.id,
      type: event.type,
      deliveryId,
      subscriptionId: to.id,
      attempt: n,
      sentAt,
    };
    // Its answer deadline, or close(): an attempt waiting for its answer stops at the first.
    const stop = attemptStop(timeoutMs, closed);
    let result: DeliveryAttempt;
    try {
      // Signed inside the try: a secret that cannot sign fails this attempt, rather than leaving the delivery, and
      // settled() and close() behind it, waiting for ever.
      const headers = {
        'content-type': 'application/json; charset=utf-8',
        'user-agent': `Svc-Webhooks/${version}`,
        'svc-event-id': event.id,
        'svc-event-type': event.type,
        'svc-delivery-id': deliveryId,
        'svc-signature': await signPayload({ payload: body, secret }),
      };
      // Spec rule 5: redirects are not followed; a 3xx is a failure like any other non-2xx.
      const response = await fetchImpl(to.url, {
        method: 'POST',
        headers,
        body,
        redirect: 'manual',
        signal: stop.signal,
      });
      const answeredAt = Date.now();
      // Only the start is kept, so only the start is read: a subscriber streaming without end costs nothing more.
      // The status decides (spec rule 2: a 2xx status within the limit), so a body still unfinished at the limit, or
      // cut short, costs the attempt only its body, as one streaming without end does; close() still cancels it.
      const start = await answerStart(response, 2000).catch(() => undefined);
      if (start === undefined && closed.aborted) throw closed.reason;
      const ok = response.status >= 200 && response.status < 300;
      result = {
        ...base,
        status: response.status,
        ...(start !== undefined ? { body: start.text.slice(0, 500) } : {}),
        durationMs: answeredAt - sentAt,
        ok,
      };
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError';
      result = timedOut
        ? { ...base, error: `no answer within ${timeoutMs} ms`, durationMs: Date.now() - sentAt, ok: false }
        : closed.aborted
          ? { ...base, ...CANCELLED, durationMs: Date.now() - sentAt }
          : {
              ...base,
              error: String((error as Error).cause ?? error),
              ...networkCode(error),
              durationMs: Date.now() - sentAt,
              ok: false,
            };
    } finally {
      stop.end();
    }
    // Closed or unsubscribed meanwhile (the attempt was waiting for its answer): no retry, now or later.
    const retryInMs =
      !result.ok && !closed.aborted && !forgotten.has(to.id) ? retryScheduleMs[n - 1] : undefined;
    if (retryInMs !== undefined) result = { ...result, retryInMs };
    attempts.push(result);
    if (retryInMs !== undefined) {
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!closed.aborted) void track(attempt(event, body, to, deliveryId, n + 1, faults));
      }, retryInMs);
      timer.unref?.();
      timers.set(timer, to.id);
    }
    if (onAttempt !== undefined) notify(onAttempt, result);
    return result;
  };

  const flush = async (items: Item[]): Promise<void> => {
    const ordered = items.some((i) => i.faults.reorder) ? [...items].reverse() : items;
    for (const { event, body, targets, faults, done } of ordered) {
      const first: DeliveryAttempt[] = [];
      for (const to of targets) {
        // Unsubscribed between the emission and this tick's batch.
        if (forgotten.has(to.id)) continue;
        // A duplicate is a redelivery: same event id, a new delivery id.
        const copy = (): Promise<DeliveryAttempt> => attempt(event, body, to, crypto.randomUUID(), 1, faults);
        // Both in flight together: a check-then-insert dedupe that passes one copy after the other fails here.
        if (faults.duplicate === 'concurrent') first.push(...(await Promise.all([copy(), copy()])));
        else {
          first.push(await copy());
          if (faults.duplicate) first.push(await copy());
        }
      }
      done(first);
    }
  };

  return {
    attempts,
    deliver(event, subscriptions, faults = {}) {
      // Spec "Subscription" 3: the Test action sends webhook.test to the endpoint to check it, whatever events the
      // endpoint selected (its choice is of what happens in the service; a test it would never hear checks nothing).
      const targets = subscriptions.filter(
        (s) => s.events === 'all' || s.events.includes(event.type) || event.type === 'webhook.test',
      );
      return track(
        new Promise<DeliveryAttempt[]>((done) => {
          batch.push({ event, body: JSON.stringify(event), targets, faults: { ...always, ...faults }, done });
          if (batch.length > 1) return;
          // Everything emitted in this tick goes out as one batch (in reverse when asked to reorder).
          setImmediate(() => {
            const items = batch;
            batch = [];
            void flush(items);
          });
        }),
      );
    },
    forget(subscriptionId) {
      forgotten.add(subscriptionId);
      for (const [timer, id] of timers) {
        if (id !== subscriptionId) continue;
        clearTimeout(timer);
        timers.delete(timer);
      }
      wake();
    },
    settled: () =>
      busy === 0 && timers.size === 0 ? Promise.resolve() : new Promise<void>((r) => idle.push(r)),
    async close() {
      closing.abort();
      for (const timer of timers.keys()) clearTimeout(timer);
      timers.clear();
      if (busy === 0) for (const resolve of idle.splice(0)) resolve();
      // The aborted attempts end at once; waiting for them lets the caller's close() leave nothing running.
      else await new Promise<void>((resolve) => idle.push(resolve));
    },
  };
}
