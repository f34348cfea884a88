// Broken telemetry for the tests: a meter whose instruments throw, span processors that throw, a Telemetry that throws.
import type { Meter, MeterProvider } from '@opentelemetry/api';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { AttemptObserver, DeliveryObserver, Telemetry } from 'workforce-webhooks';

const boom = (what: string) => (): never => {
  throw new Error(`broken telemetry (${what})`);
};

/**
 * The real meter provider, whose synchronous instruments throw on `add` and `record` (a broken meter).
 * @example
 * createTestSdk({ meterProvider: throwingMeterProvider });
 */
export function throwingMeterProvider(real: MeterProvider): MeterProvider {
  const broken = boom('meter');
  return {
    getMeter(name, version, options) {
      const meter = real.getMeter(name, version, options);
      return new Proxy(meter, {
        get(target, key) {
          const value = Reflect.get(target, key, target);
          if (key === 'createCounter' || key === 'createHistogram' || key === 'createUpDownCounter')
            return (...args: unknown[]) =>
              new Proxy((value as (...a: unknown[]) => object).apply(target, args), {
                get: (instrument, k) => (k === 'add' || k === 'record' ? broken : Reflect.get(instrument, k)),
              });
          return typeof value === 'function' ? value.bind(target) : value;
        },
      }) as Meter;
    },
  };
}

/**
 * A span processor of the real SDK's interface with a bug: it throws when a span starts, or when one ends.
 * @example
 * createTestSdk({ spanProcessors: [throwingProcessor('end')] });
 */
export function throwingProcessor(on: 'start' | 'end'): SpanProcessor {
  return {
    onStart: on === 'start' ? boom('onStart') : () => {},
    onEnd: on === 'end' ? boom('onEnd') : () => {},
    forceFlush: async () => {},
    shutdown: async () => {},
  };
}

/**
 * A Telemetry whose every method, and every method of the observers it returns, records its name and throws.
 * The attempt observer's `run` throws before calling the handlers.
 * @example
 * const { telemetry, called } = throwingTelemetry();
 */
export function throwingTelemetry(): { readonly telemetry: Telemetry; readonly called: Set<string> } {
  const called = new Set<string>();
  const thrower =
    (name: string) =>
    (..._args: unknown[]): never => {
      called.add(name);
      throw new Error(`broken telemetry (${name})`);
    };
  const delivery: DeliveryObserver = {
    event: thrower('delivery.event'),
    claimed: thrower('delivery.claimed'),
    enqueued: thrower('delivery.enqueued'),
    answered: thrower('delivery.answered'),
  };
  const attempt: AttemptObserver = { run: thrower('attempt.run'), end: thrower('attempt.end') };
  const telemetry: Telemetry = {
    // Observers handed out first, so that their methods are reached; the factories' own throws are tested apart.
    delivery: () => delivery,
    attempt: () => attempt,
    retried: thrower('retried'),
    deadLettered: thrower('deadLettered'),
    staleSkipped: thrower('staleSkipped'),
    replayed: thrower('replayed'),
    observeQueue: thrower('observeQueue'),
  };
  return { telemetry, called };
}
