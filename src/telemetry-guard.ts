// The user's telemetry with every method guarded: a throw goes to the receiver's log, never into a delivery.
import { ConfigurationError } from './errors.js';
import type { Telemetry, TelemetryFault } from './telemetry.js';

// Every method of `Telemetry`, by name: a Record, so that a method added to the interface must be added here.
const HOOKS: Readonly<Record<keyof Telemetry, true>> = {
  delivery: true,
  attempt: true,
  retried: true,
  deadLettered: true,
  staleSkipped: true,
  replayed: true,
  observeQueue: true,
};

// An object with none of the methods but other things in it would observe nothing, silently: otelTelemetry's options
// instead of otelTelemetry(options), an SDK instance, the otel module itself. `{}` observes nothing on purpose.
function checkTelemetry(telemetry: Telemetry): void {
  for (const hook in HOOKS) if ((telemetry as Record<string, unknown>)[hook] !== undefined) return;
  const keys = Object.keys(telemetry);
  if (keys.length === 0) return;
  const shown = keys.slice(0, 5).join(', ') + (keys.length > 5 ? ', ...' : '');
  throw new ConfigurationError(
    `telemetry has none of the Telemetry methods (${Object.keys(HOOKS).join(', ')}), so it would observe nothing; got an object of ${shown}. Pass otelTelemetry({ tracerProvider, meterProvider }) from workforce-webhooks/otel, or an object with some of those methods`,
  );
}

/**
 * The telemetry with every method guarded: a throw goes to `fault`, and a `delivery` or `attempt` that throws
 * observes nothing. Made once per receiver; the observers these return are guarded where they are called
 * (`observeDelivery`, `observeAttempts`, `observeEvent`, `observeClaim`, `traceOf`), so a delivery costs no wrapper.
 * An object with none of the methods but other things in it is refused (`ConfigurationError`): it is a mistake.
 * @example
 * const telemetry = guardTelemetry(options.telemetry, (hook, err) => logger.warn({ hook, err }));
 */
export function guardTelemetry(telemetry: Telemetry, fault: TelemetryFault): Telemetry {
  checkTelemetry(telemetry);
  const guarded: Record<string, (...args: unknown[]) => unknown> = {};
  for (const hook of Object.keys(HOOKS) as (keyof Telemetry)[]) {
    const method = telemetry[hook] as ((...args: unknown[]) => unknown) | undefined;
    if (method === undefined) continue;
    // Called on `telemetry`, as a class instance's methods expect; a throw answers undefined (nothing observed).
    // A method that answers a promise (an async metrics client) has its rejection go where a throw goes, never
    // unhandled: one property read when it answers an object.
    const rejected = (error: unknown): void => fault(hook, error);
    guarded[hook] = (...args) => {
      try {
        const result = method.apply(telemetry, args);
        if (typeof result === 'object' && result !== null) {
          const then = (result as { then?: unknown }).then;
          if (typeof then === 'function')
            (then as PromiseLike<unknown>['then']).call(result, undefined, rejected);
        }
        return result;
      } catch (error) {
        fault(hook, error);
        return undefined;
      }
    };
  }
  return guarded as Telemetry;
}
