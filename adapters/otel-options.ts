// The options of otelTelemetry, and their check at creation: a wrong one would observe nothing, silently.
import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import { ConfigurationError } from '../src/errors.js';

/** Options of `otelTelemetry`. */
export interface OtelTelemetryOptions {
  /** Where spans go. Default: the global one (`trace.getTracerProvider()`), a no-op until an SDK registers. */
  readonly tracerProvider?: TracerProvider;
  /** Where metrics go. Default: the global one (`metrics.getMeterProvider()`). */
  readonly meterProvider?: MeterProvider;
}

// A provider given as the options (otelTelemetry(meterProvider)) or under another name would leave the global ones
// in use, no-ops when the app registers none: nothing observed, and nothing said. Refused at once, with the fix.
const OPTIONS: Readonly<Record<keyof OtelTelemetryOptions, 'getTracer' | 'getMeter'>> = {
  tracerProvider: 'getTracer',
  meterProvider: 'getMeter',
};
/**
 * Throws a `ConfigurationError` with the fix for options that would leave the global no-op providers in use.
 * @example
 * checkOptions(options);
 */
export function checkOptions(options: OtelTelemetryOptions): void {
  const fix =
    'Pass otelTelemetry({ tracerProvider, meterProvider }) (each optional; the global one by default)';
  if (typeof options !== 'object' || options === null)
    throw new ConfigurationError(`otelTelemetry takes an options object, got ${typeof options}. ${fix}`);
  const given = options as Record<string, unknown>;
  for (const method of ['getTracer', 'getMeter'])
    if (typeof given[method] === 'function')
      throw new ConfigurationError(
        `otelTelemetry was given a provider itself, not options. Pass otelTelemetry({ ${method === 'getTracer' ? 'tracerProvider' : 'meterProvider'} })`,
      );
  for (const key of Object.keys(given)) {
    const method = OPTIONS[key as keyof OtelTelemetryOptions];
    if (method === undefined)
      throw new ConfigurationError(`otelTelemetry has no option ${JSON.stringify(key)}. ${fix}`);
    const value = given[key] as Record<string, unknown> | undefined;
    if (value !== undefined && typeof value?.[method] !== 'function')
      throw new ConfigurationError(
        `otelTelemetry's ${key} must have a ${method} method (an OpenTelemetry ${key.replace('P', ' p')}). ${fix}`,
      );
  }
}
