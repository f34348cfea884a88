// A stale request whose signature does not match (a scanner, a replay of garbage) is refused 400 as stale like any
// other, and never tells the user to fix a clock that is right: only a stale signature that matched speaks of it.
import { createServer } from 'node:http';
import express from 'express';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { expectAnswer, post } from '../contract/adapter-client.js';
import { listen } from '../contract/adapter-listen.js';
import { type LogLine, recordingLogger } from '../support/logger.js';

const SECRET = 'whsec_first_hour_stale_forgery_Yb5';
const HOUR = 3600;

const warnings = (lines: LogLine[]): LogLine[] =>
  lines.filter((l) => l.level === 'warn' || l.level === 'error');

/** An Express app on loopback with a right clock; both closed when the test ends. */
async function mountedApp(): Promise<{ url: string; lines: LogLine[] }> {
  const logger = recordingLogger();
  const receiver = createReceiver({ secret: SECRET, logger });
  onTestFinished(() => receiver.close());
  receiver.on('leave.approved', () => {});
  const app = express();
  app.all('/webhooks/workforce', createExpressMiddleware(receiver));
  const mounted = await listen(createServer(app));
  onTestFinished(() => mounted.close());
  return { url: mounted.url, lines: logger.lines };
}

const hourOld = (secret: string) =>
  createSignedDelivery({ secret, type: 'leave.approved', timestamp: Math.floor(Date.now() / 1000) - HOUR });

describe('stale requests whose signature does not match', () => {
  it('are refused 400 timestamp_out_of_tolerance and never blamed on the clock, before any delivery verified', async () => {
    const app = await mountedApp();
    for (let i = 0; i < 3; i++) {
      expectAnswer(await post(app.url, await hourOld(`${SECRET}_forged`)), 400, {
        error: 'timestamp_out_of_tolerance',
      });
    }
    const said = warnings(app.lines);
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toContain('refused 400 timestamp_out_of_tolerance');
    expect(said[0]!.msg).toContain('does not match this secret either');
    expect(said[0]!.msg).not.toMatch(/clock right|NTP|signed \d+ s/);
    expect(said[0]!.obj).toEqual({ code: 'timestamp_out_of_tolerance', count: 1 });
  });

  it('leave the clock warning to the first stale request that matched, said at once with its offset', async () => {
    const app = await mountedApp();
    expectAnswer(await post(app.url, await hourOld(`${SECRET}_forged`)), 400, {
      error: 'timestamp_out_of_tolerance',
    });
    expectAnswer(await post(app.url, await hourOld(SECRET)), 400, { error: 'timestamp_out_of_tolerance' });
    const said = warnings(app.lines);
    expect(said).toHaveLength(2);
    expect(said[1]!.msg).toContain("Is this server's clock right?");
    expect(said[1]!.msg).toMatch(/signed 36\d\d s before this server's time/);
    expect(said[1]!.obj).toMatchObject({ code: 'timestamp_out_of_tolerance', count: 1 });
  });

  it('stay quiet among verified deliveries, as lone forgeries do', async () => {
    const app = await mountedApp();
    for (let i = 0; i < 2; i++) {
      expectAnswer(
        await post(app.url, await createSignedDelivery({ secret: SECRET, type: 'leave.approved' })),
        202,
        { received: true },
      );
      expectAnswer(await post(app.url, await hourOld(`${SECRET}_forged`)), 400, {
        error: 'timestamp_out_of_tolerance',
      });
    }
    expect(warnings(app.lines)).toEqual([]);
  });
});
