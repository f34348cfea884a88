// The replay window is refused when it is wider than a unit mistake explains: a toleranceSeconds given in milliseconds
// (300000 for 300 s is 83 h), or a doneTtlMs that forgets an event id while its signature is still in tolerance.
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  ConfigurationError,
  createMemoryStore,
  createReceiver,
  type ReceiverOptions,
} from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { until } from '../support/ordering-scenario.js';

const secret = 'whsec_options_replay_window';
const encoder = new TextEncoder();
const HOUR = 3600_000;

function refusal(options: Partial<ReceiverOptions>): ConfigurationError | undefined {
  try {
    const receiver = createReceiver({ secret, logger: false, ...options });
    void receiver.close();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }
  return undefined;
}

describe('toleranceSeconds given in milliseconds', () => {
  for (const [label, toleranceSeconds] of [
    ['300_000', 300_000],
    ['300000 read from an environment variable', Number('300000')],
    ['3601', 3601],
  ] as const) {
    it(`${label} is refused at creation, naming the option, the value, the hours it would allow and the fix`, () => {
      const error = refusal({ toleranceSeconds });
      expect(error?.message).toContain('toleranceSeconds must be at most 3600 seconds');
      expect(error?.message).toContain(`got ${toleranceSeconds}`);
      expect(error?.message).toContain('Fix: leave toleranceSeconds unset (300');
    });
  }

  it('names the value in seconds it likely meant', () => {
    expect(refusal({ toleranceSeconds: 300_000 })?.message).toContain('300000 ms is toleranceSeconds: 300');
    expect(refusal({ toleranceSeconds: 300_000 })?.message).toContain('replayed for 83.3 h');
  });

  it('takes the default, 600 and an hour', () => {
    expect(refusal({})).toBeUndefined();
    expect(refusal({ toleranceSeconds: 600 })).toBeUndefined();
    expect(refusal({ toleranceSeconds: 3600 })).toBeUndefined();
  });

  it('an hour-old delivery is still refused under the default tolerance (the window stays the spec one)', async () => {
    const receiver = createReceiver({ secret, logger: false });
    onTestFinished(() => receiver.close());
    receiver.on('leave.approved', () => {});
    const signed = await createSignedDelivery({
      secret,
      type: 'leave.approved',
      timestamp: Math.floor((Date.now() - HOUR) / 1000),
    });
    const answer = await receiver.handle({
      method: 'POST',
      headers: signed.headers,
      body: encoder.encode(signed.body),
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toBe(JSON.stringify({ error: 'timestamp_out_of_tolerance' }));
  });
});

describe('a doneTtlMs not longer than the window a signature is taken for', () => {
  it('is refused at creation: an id forgotten while its signature is in tolerance would run its handlers again', () => {
    for (const doneTtlMs of [60_000, 600_000, 72]) {
      const error = refusal({ doneTtlMs });
      expect(error?.message).toContain(
        'doneTtlMs must be longer than the 600000 ms a signature is taken for',
      );
      expect(error?.message).toContain(`got ${doneTtlMs}`);
      expect(error?.message).toContain('Fix: leave doneTtlMs unset (72 h');
    }
  });

  it('follows the tolerance given, and takes a window just longer than it', () => {
    expect(refusal({ toleranceSeconds: 10, doneTtlMs: 20_000 })?.message).toContain(
      'the 20000 ms a signature',
    );
    expect(refusal({ toleranceSeconds: 10, doneTtlMs: 20_001 })).toBeUndefined();
    expect(refusal({ doneTtlMs: 600_001 })).toBeUndefined();
  });

  it('with a window that passes, a replay of a done delivery at the far edge of the window its signature is taken for stays a duplicate', async () => {
    let clock = Date.now();
    const store = createMemoryStore({ now: () => clock });
    const receiver = createReceiver({ secret, logger: false, now: () => clock, store, doneTtlMs: 600_001 });
    onTestFinished(() => receiver.close());
    let ran = 0;
    receiver.on('leave.approved', () => {
      ran++;
    });
    const signed = await createSignedDelivery({
      secret,
      type: 'leave.approved',
      // Signed by a service clock just under the tolerance ahead: taken now, and taken again until 2 × 299 s later.
      timestamp: Math.floor(clock / 1000) + 299,
    });
    const input = { method: 'POST', headers: signed.headers, body: encoder.encode(signed.body) };
    expect((await receiver.handle(input)).status).toBe(202);
    await until(() => ran === 1, 'the first delivery processed');
    clock += 598_000;
    const replayed = await receiver.handle(input);
    expect({ status: replayed.status, body: replayed.body }).toEqual({
      status: 200,
      body: JSON.stringify({ received: true, duplicate: true }),
    });
    expect(ran).toBe(1);
  });
});
