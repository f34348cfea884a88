// The OpenTelemetry API, an optional peer: loaded here so that, missing, it is named with the command to install it.
type Api = typeof import('@opentelemetry/api');

/**
 * `@opentelemetry/api`, or a thrown error that says to install it (not a bare resolution error).
 * @example
 * const tracer = api.trace.getTracerProvider().getTracer('workforce-webhooks');
 */
export const api: Api = await import('@opentelemetry/api').catch((error: unknown) => {
  throw new Error(
    'workforce-webhooks/otel needs @opentelemetry/api, which is not installed. Install it: npm install @opentelemetry/api',
    { cause: error },
  );
});
