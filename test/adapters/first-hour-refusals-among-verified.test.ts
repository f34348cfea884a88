// Signature refusals that keep coming between verified deliveries (a second endpoint with its own secret sending to
// the same URL, a proxy that changes some bodies) are said with a hint of their own; a lone probe stays quiet.
import { createServer } from 'node:http';
import express from 'express';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver, type Receiver } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { expectAnswer, post } from '../contract/adapter-client.js';
import { listen } from '../contract/adapter-listen.js';
import { type LogLine, recordingLogger } from '../support/logger.js';

const SECRET = 'whsec_first_hour_spread_Tz8';
const OTHER_ENDPOINT_SECRET = 'whsec_first_hour_spread_other_Wd1';
const MINUTE = 60_000;

const warnings = (lines: LogLine[]): LogLine[] =>
  lines.filter((l) => l.level === 'warn' || l.level === 'error');

/** An Express app on loopback whose receiver reads the clock from `clock.now`; both closed when the test ends. */
async function mountedApp(clock: { now: number }): Promise<{
  url: string;
  receiver: Receiver;
  lines: LogLine[];
}> {
  const logger = recordingLogger();
  const receiver = createReceiver({ secret: SECRET, logger, now: () => clock.now });
  onTestFinished(() => receiver.close());
  receiver.on('leave.approved', () => {});
  const app = express();
  app.all('/webhooks/workforce', createExpressMiddleware(receiver));
  const mounted = await listen(createServer(app));
  onTestFinished(() => mounted.close());
  return { url: mounted.url, receiver, lines: logger.lines };
}

const deliver = async (url: string, secret: string, nowMs: number, timestamp = nowMs) =>
  post(
    url,
    await createSignedDelivery({ secret, type: 'leave.approved', timestamp: Math.floor(timestamp / 1000) }),
  );

describe('signature refusals between verified deliveries', () => {
  it('are said once they come back a third time within ten minutes, naming a second endpoint or a proxy', async () => {
    const clock = { now: Date.now() };
    const { url, lines } = await mountedApp(clock);
    for (let i = 0; i < 3; i++) {
      expectAnswer(await deliver(url, SECRET, clock.now), 202, { received: true });
      expect(warnings(lines)).toEqual([]);
      expectAnswer(await deliver(url, OTHER_ENDPOINT_SECRET, clock.now), 400, {
        error: 'signature_mismatch',
      });
      clock.now += 2 * MINUTE;
    }
    const said = warnings(lines);
    expect(said).toHaveLength(1);
    expect(said[0]!.level).toBe('warn');
    expect(said[0]!.msg).toContain('3 deliveries were refused 400 signature_mismatch');
    expect(said[0]!.msg).toContain('second endpoint');
    expect(said[0]!.obj).toEqual({ code: 'signature_mismatch', count: 3 });
    expect(JSON.stringify(lines)).not.toContain('first_hour_spread');
  });

  it('stay quiet when they are lone probes: a forged and a stale one per run, runs apart', async () => {
    const clock = { now: Date.now() };
    const { url, lines } = await mountedApp(clock);
    for (let run = 0; run < 3; run++) {
      expectAnswer(await deliver(url, SECRET, clock.now), 202, { received: true });
      expectAnswer(await deliver(url, `${SECRET}_forged`, clock.now), 400, { error: 'signature_mismatch' });
      expectAnswer(await deliver(url, SECRET, clock.now, clock.now - 60 * MINUTE), 400, {
        error: 'timestamp_out_of_tolerance',
      });
      clock.now += 6 * MINUTE;
    }
    expect(warnings(lines)).toEqual([]);
  });

  it('say stale signatures that keep coming among verified ones, asking what holds requests back', async () => {
    const clock = { now: Date.now() };
    const { url, lines } = await mountedApp(clock);
    for (let i = 0; i < 3; i++) {
      expectAnswer(await deliver(url, SECRET, clock.now), 202, { received: true });
      expectAnswer(await deliver(url, SECRET, clock.now, clock.now - 10 * MINUTE), 400, {
        error: 'timestamp_out_of_tolerance',
      });
    }
    const said = warnings(lines);
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toContain('3 deliveries were refused 400 timestamp_out_of_tolerance');
    expect(said[0]!.msg).toContain('hold some requests back');
  });
});
