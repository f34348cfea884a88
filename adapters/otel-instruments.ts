// The workforce_webhooks.* metrics: their fixed names, and the instruments one meter makes of them.
import type { BatchObservableResult, Counter, Histogram, Meter } from '@opentelemetry/api';
import { withDeadline } from '../src/deadline.js';
import type { QueueCounts } from '../src/telemetry.js';
import { api } from './otel-api.js';

/** The metric names, fixed so dashboards can rely on them. */
export const METRICS: {
  readonly deliveries: 'workforce_webhooks.deliveries';
  readonly handlerDuration: 'workforce_webhooks.handler.duration';
  readonly eventLag: 'workforce_webhooks.event.lag';
  readonly attempts: 'workforce_webhooks.attempts';
  readonly queueDepth: 'workforce_webhooks.queue.depth';
  readonly deadLetters: 'workforce_webhooks.dead_letters';
  readonly staleSkips: 'workforce_webhooks.stale_skips';
  readonly replays: 'workforce_webhooks.replays';
} = Object.freeze({
  deliveries: 'workforce_webhooks.deliveries',
  handlerDuration: 'workforce_webhooks.handler.duration',
  eventLag: 'workforce_webhooks.event.lag',
  attempts: 'workforce_webhooks.attempts',
  queueDepth: 'workforce_webhooks.queue.depth',
  deadLetters: 'workforce_webhooks.dead_letters',
  staleSkips: 'workforce_webhooks.stale_skips',
  replays: 'workforce_webhooks.replays',
});

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
// From seconds (a queue keeping up) to the sender's two days of retries.
const LAG_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600, 72 * 3600];
// A queue's counts are one round trip (a few ms on a live Redis). A silent Redis must not hold a scrape for the
// queue's own 10 s admin deadline, Prometheus's default scrape timeout: the whole scrape would fail with it.
const COUNTS_TIMEOUT_MS = 2_000;
// The no-op counter's class: a meter whose counters are of it records nothing (no SDK behind it).
const NOOP_COUNTER = api.createNoopMeter().createCounter('_').constructor;

/** The instruments of one meter, and whether it records (with no SDK registered it is the API's no-op one). */
export interface Instruments {
  readonly measuring: boolean;
  readonly deliveries: Counter;
  readonly duration: Histogram;
  readonly lag: Histogram;
  readonly attempts: Counter;
  readonly staleSkips: Counter;
  readonly replays: Counter;
}

type QueueList = readonly (() => Promise<QueueCounts>)[];

// The queue lists whose counts each meter's gauges sum: every otelTelemetry() on one meter (an app with two receivers,
// each given its own) is in the same gauges. A callback of each would observe them apart, and the last one to observe
// would win: the other receivers' jobs and dead letters missing from the gauges.
const gaugeQueues = new WeakMap<Meter, QueueList[]>();

// Registers the queue gauges on `meter` once, read from every list given for it at each collection.
const observeQueues = (meter: Meter, queues: QueueList): void => {
  const known = gaugeQueues.get(meter);
  if (known !== undefined) {
    if (!known.includes(queues)) known.push(queues);
    return;
  }
  const all: QueueList[] = [queues];
  gaugeQueues.set(meter, all);
  const depth = meter.createObservableGauge(METRICS.queueDepth, {
    description: 'Jobs held by the queue: waiting, retrying and running',
    unit: '{job}',
  });
  const deadLetters = meter.createObservableGauge(METRICS.deadLetters, {
    description: 'Dead letters kept, waiting for a replay',
    unit: '{event}',
  });
  // A queue that cannot be counted now (Redis away, or silent past COUNTS_TIMEOUT_MS) is left out of this
  // collection rather than read as zero.
  meter.addBatchObservableCallback(
    async (result: BatchObservableResult) => {
      const counted = await Promise.allSettled(
        all.flat().map((counts) => withDeadline(counts, COUNTS_TIMEOUT_MS, 'queue_unavailable')),
      );
      let held = 0;
      let dead = 0;
      let any = false;
      for (const outcome of counted) {
        if (outcome.status !== 'fulfilled') continue;
        any = true;
        held += outcome.value.depth;
        dead += outcome.value.deadLetters;
      }
      if (!any) return;
      result.observe(depth, held);
      result.observe(deadLetters, dead);
    },
    [depth, deadLetters],
  );
};

/**
 * The instruments of `meter`, the queue gauges read from `queues` (and those of every other caller on this meter)
 * at each collection.
 * @example
 * const instruments = instrumentsOf(meterProvider.getMeter('workforce-webhooks'), queues);
 */
export const instrumentsOf = (meter: Meter, queues: QueueList): Instruments => {
  const deliveries = meter.createCounter(METRICS.deliveries, {
    description: 'Deliveries answered, by outcome (and reason, when refused)',
    unit: '{delivery}',
  });
  const instruments: Instruments = {
    measuring: deliveries.constructor !== NOOP_COUNTER,
    deliveries,
    duration: meter.createHistogram(METRICS.handlerDuration, {
      description: 'Duration of one attempt of an event’s handlers',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    lag: meter.createHistogram(METRICS.eventLag, {
      description: 'Time from the event’s occurredAt to the end of its processing',
      unit: 's',
      advice: { explicitBucketBoundaries: LAG_BUCKETS },
    }),
    attempts: meter.createCounter(METRICS.attempts, {
      description: 'Handler attempts, by what followed: success, retry or dead_letter',
      unit: '{attempt}',
    }),
    staleSkips: meter.createCounter(METRICS.staleSkips, {
      description: 'Events skipped as stale by ordering',
      unit: '{event}',
    }),
    replays: meter.createCounter(METRICS.replays, {
      description: 'Dead letters queued again',
      unit: '{event}',
    }),
  };
  // A no-op meter never collects: nothing to register (nor to keep).
  if (instruments.measuring) observeQueues(meter, queues);
  return instruments;
};
