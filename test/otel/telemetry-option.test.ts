// `createReceiver({ telemetry })` given something that is not a Telemetry (otelTelemetry's options, the otel module
// itself, an SDK instance), or `otelTelemetry` given a provider itself or under another name, refuses it with the
// fix, instead of observing nothing in silence.
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigurationError, createReceiver, type Telemetry } from 'workforce-webhooks';
import * as otelModule from 'workforce-webhooks/otel';
import { otelTelemetry } from 'workforce-webhooks/otel';
import { createTestSdk } from './sdk.js';

const secret = 'whsec_otel_telemetry_option_test';

const refusal = (telemetry: unknown): unknown => {
  try {
    void createReceiver({ secret, logger: false, telemetry: telemetry as Telemetry }).close();
  } catch (error) {
    return error;
  }
  return undefined;
};

it.each([
  [
    'otelTelemetry’s options instead of otelTelemetry(options)',
    () => ({ tracerProvider: {}, meterProvider: {} }),
  ],
  ['the otel module itself', () => otelModule],
  [
    'an SDK instance',
    () =>
      new (class NodeSdkLike {
        readonly config = {};
        start(): void {}
        shutdown(): Promise<void> {
          return Promise.resolve();
        }
      })(),
  ],
])('refuses %s with a ConfigurationError that says to call otelTelemetry()', (_name, telemetry) => {
  const error = refusal(telemetry());
  expect(error).toBeInstanceOf(ConfigurationError);
  expect((error as Error).message).toMatch(
    /^workforce-webhooks: telemetry has none of the Telemetry methods/,
  );
  expect((error as Error).message).toContain('otelTelemetry(');
});

it('takes an empty object (observes nothing), a class instance whose methods are on its prototype, and otelTelemetry()', async () => {
  class Counting implements Telemetry {
    readonly seen: string[] = [];
    replayed(eventId: string): void {
      this.seen.push(eventId);
    }
  }
  const sdk = createTestSdk();
  expect([refusal({}), refusal(new Counting()), refusal(sdk.telemetry)]).toEqual([
    undefined,
    undefined,
    undefined,
  ]);
  await sdk.shutdown();
});

describe('otelTelemetry refuses options that would leave the global providers in use, in silence', () => {
  const meterProvider = new MeterProvider();
  const tracerProvider = new BasicTracerProvider();
  afterAll(() => Promise.all([meterProvider.shutdown(), tracerProvider.shutdown()]));
  const thrown = (make: () => unknown): unknown => {
    try {
      make();
    } catch (error) {
      return error;
    }
    return undefined;
  };

  it.each([
    [
      'a meter provider given itself',
      () => otelTelemetry(meterProvider as never),
      /otelTelemetry\(\{ meterProvider \}\)/,
    ],
    [
      'a tracer provider given itself',
      () => otelTelemetry(tracerProvider as never),
      /otelTelemetry\(\{ tracerProvider \}\)/,
    ],
    [
      'a provider under another name',
      () => otelTelemetry({ meter: meterProvider } as never),
      /no option "meter"/,
    ],
    [
      'a meter instead of a provider',
      () => otelTelemetry({ meterProvider: meterProvider.getMeter('x') as never }),
      /getMeter/,
    ],
    ['a string', () => otelTelemetry('global' as never), /options object/],
  ])('%s: a ConfigurationError with the fix', (_name, make, fix) => {
    const error = thrown(make);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(fix);
  });

  it('takes no options, either provider, or both', () => {
    expect(
      [
        () => otelTelemetry(),
        () => otelTelemetry({}),
        () => otelTelemetry({ meterProvider }),
        () => otelTelemetry({ tracerProvider, meterProvider: undefined }),
        () => otelTelemetry({ tracerProvider, meterProvider }),
      ].map(thrown),
    ).toEqual([undefined, undefined, undefined, undefined, undefined]);
  });
});
