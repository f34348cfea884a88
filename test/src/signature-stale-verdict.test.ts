// A stale signature is refused as stale whether it matches or not, and the refusal says which: only a matching one
// speaks of the clock. A clock that gives no number refuses every signature, never accepts one of any age.
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver, signPayload, verifySignature, WebhookVerificationError } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { createRefusalReport } from '../../src/refusal-report.js';
import { StaleSignatureError } from '../../src/signature.js';
import { recordingLogger } from '../support/logger.js';

const SECRET = 'whsec_stale_verdict_Rn3';
const T = 1_700_000_000;
const at = (seconds: number) => () => seconds * 1000;
const encoder = new TextEncoder();

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('verified');
}

describe('a stale signature', () => {
  it('says it matched when it was made with the secret, an hour old or an hour early', async () => {
    const payload = '{"id":"evt"}';
    const header = await signPayload({ payload, secret: SECRET, timestamp: T });
    for (const offset of [3600, -3600]) {
      const error = await refusal(verifySignature({ payload, header, secret: SECRET, now: at(T + offset) }));
      expect(error).toBeInstanceOf(StaleSignatureError);
      expect(error).toMatchObject({ code: 'timestamp_out_of_tolerance', signed: true, ageSeconds: offset });
    }
  });

  it('says it did not match when it is forged, for the same answer code', async () => {
    const payload = '{"id":"evt"}';
    for (const header of [
      await signPayload({ payload, secret: `${SECRET}_forged`, timestamp: T }),
      `t=${T},v1=${'a'.repeat(64)}`,
      `t=${T},v1=not-hex`,
    ]) {
      const error = await refusal(verifySignature({ payload, header, secret: SECRET, now: at(T + 3600) }));
      expect(error).toBeInstanceOf(WebhookVerificationError);
      expect(error).toMatchObject({ code: 'timestamp_out_of_tolerance', signed: false, ageSeconds: 3600 });
    }
  });

  it('matches under any secret of a rotation pair', async () => {
    const payload = '{}';
    const header = await signPayload({ payload, secret: SECRET, timestamp: T });
    const error = await refusal(
      verifySignature({ payload, header, secret: ['whsec_next_Rn3', SECRET], now: at(T + 400) }),
    );
    expect(error).toMatchObject({ signed: true, ageSeconds: 400 });
  });
});

describe('a clock that gives no number', () => {
  it('refuses a signature of any age instead of skipping the tolerance', async () => {
    const payload = '{}';
    const header = await signPayload({ payload, secret: SECRET, timestamp: 1 });
    for (const now of [() => Number.NaN, () => 'Tue Nov 24 2026', () => undefined]) {
      const error = await refusal(verifySignature({ payload, header, secret: SECRET, now: now as never }));
      expect(error).toMatchObject({ code: 'timestamp_out_of_tolerance' });
      expect((error as Error).message).toContain('gave no number');
    }
    const error = await refusal(
      verifySignature({ payload, header, secret: SECRET, toleranceSeconds: Number.NaN, now: at(1) }),
    );
    expect(error).toMatchObject({ code: 'timestamp_out_of_tolerance' });
  });

  it('as the receiver’s `now` (a JavaScript `now: Date`), refuses a replay and names the option', async () => {
    const logger = recordingLogger();
    // `Date` called without `new` returns a string: the shape of mistake nothing checks in plain JavaScript.
    const receiver = createReceiver({ secret: SECRET, logger, now: Date as never });
    onTestFinished(() => receiver.close());
    let ran = 0;
    receiver.on('leave.approved', () => {
      ran++;
    });
    // A delivery captured a day ago and sent again.
    const replay = await createSignedDelivery({
      secret: SECRET,
      type: 'leave.approved',
      timestamp: Math.floor(Date.now() / 1000) - 86_400,
    });
    const answer = await receiver.handle({
      method: 'POST',
      headers: replay.headers,
      body: encoder.encode(replay.body),
    });
    await answer.background;
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 400,
      body: '{"error":"timestamp_out_of_tolerance"}',
    });
    expect(ran).toBe(0);
    const said = logger.lines.filter((line) => line.level === 'warn');
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toContain('does the `now` option return milliseconds, like `Date.now`?');
    expect(said[0]!.msg).not.toContain('NTP');
  });
});

describe('the refusal report', () => {
  const report = () => {
    const logger = recordingLogger();
    return { logger, report: createRefusalReport({ logger, now: () => 0 }) };
  };

  it('speaks of the clock for a stale signature that matched, with its offset and the fix', () => {
    const { logger, report: r } = report();
    r.refused('timestamp_out_of_tolerance', 420);
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]!.msg).toContain("Is this server's clock right?");
    expect(logger.lines[0]!.msg).toContain('signed 420 s before');
    expect(logger.lines[0]!.msg).toContain('NTP');
  });

  it('never speaks of the clock for a stale signature that did not match, naming the secret instead', () => {
    const { logger, report: r } = report();
    for (let i = 0; i < 3; i++) r.refused('timestamp_out_of_tolerance');
    expect(logger.lines).toHaveLength(1);
    const msg = logger.lines[0]!.msg!;
    expect(msg).toContain('refused 400 timestamp_out_of_tolerance');
    expect(msg).toContain('does not match this secret either');
    expect(msg).not.toMatch(/clock right|NTP|signed \d+ s/);
    expect(logger.lines[0]!.obj).toEqual({ code: 'timestamp_out_of_tolerance', count: 1 });
  });

  it('still speaks of the clock at once when the secret is fixed after stale forgeries', () => {
    const { logger, report: r } = report();
    r.refused('timestamp_out_of_tolerance');
    r.refused('timestamp_out_of_tolerance', 420);
    expect(logger.lines.map((line) => line.msg)).toEqual([
      expect.stringContaining('does not match this secret either'),
      expect.stringContaining("Is this server's clock right?"),
    ]);
  });
});
