// Edges of the core found by review: inline runs around close(), a secret function that misbehaves, and the
// CLI's check (a forgery, then a stale delivery) against a receiver that works, which must stay quiet.
import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMemoryQueue, createReceiver, silentLogger } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_shutdown_and_secrets';
const encoder = new TextEncoder();

async function delivery(overrides: { timestamp?: number; signWith?: string } = {}) {
  const { signWith, ...rest } = overrides;
  const signed = await createSignedDelivery({ secret: signWith ?? secret, type: 'leave.approved', ...rest });
  return { method: 'POST', headers: signed.headers, body: encoder.encode(signed.body), event: signed.event };
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

describe('inline mode and close()', () => {
  it('answers 503 shutting_down, and runs nothing, when the claim comes back after close() began', async () => {
    const receiver = createReceiver({ secret, logger: silentLogger, mode: 'inline' });
    let ran = 0;
    receiver.on('leave.approved', async () => {
      ran++;
      await sleep(100);
    });
    // The delivery passed the receiver's own closing check; its claim (a store promise) is still on its way.
    const answer = receiver.handle(await delivery());
    await receiver.close({ timeoutMs: 5000 });
    const response = await answer;
    expect([response.status, JSON.parse(response.body)]).toEqual([503, { error: 'shutting_down' }]);
    await sleep(150);
    // Not accepted: the sender sends it again (to an instance that runs), and nothing ran after close().
    expect(ran).toBe(0);
  });

  it('answers a run cut short by close() 503 shutting_down with Retry-After: no handler failed', async () => {
    const receiver = createReceiver({ secret, logger: silentLogger, mode: 'inline' });
    receiver.on('leave.approved', (_event, ctx) => sleep(500, ctx.signal));
    const answer = receiver.handle(await delivery());
    await sleep(20);
    await receiver.close({ timeoutMs: 20 });
    const response = await answer;
    expect([response.status, JSON.parse(response.body), response.headers['retry-after']]).toEqual([
      503,
      { error: 'shutting_down' },
      '5',
    ]);
  });
});

describe('a secret function that misbehaves', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
    vi.restoreAllMocks();
  });

  it('never prints the secret it was reading: JSON.parse quotes its input in its error', async () => {
    const printed: unknown[][] = [];
    vi.spyOn(console, 'warn').mockImplementation((...args) => void printed.push(args));
    vi.spyOn(console, 'error').mockImplementation((...args) => void printed.push(args));
    // Rotation through one variable holding a JSON array, written with a trailing comma.
    const env = { WORKFORCE_WEBHOOK_SECRETS: '["whsec_current_k3yMaterialX9",]' };
    const receiver = createReceiver({ secret: () => JSON.parse(env.WORKFORCE_WEBHOOK_SECRETS) as string[] });
    receiver.on('leave.approved', () => {});
    expect((await receiver.handle(await delivery())).status).toBe(500);
    await receiver.close();
    const text = printed
      .map((args) => args.map((a) => (typeof a === 'string' ? a : inspect(a, { depth: 5 }))).join(' '))
      .join('\n');
    expect(text).toContain('`secret` function threw (SyntaxError)');
    expect(text).not.toMatch(/ialX9/);
  });

  it('answers not_configured for one that returns a promise, which it never leaves rejected and unhandled', async () => {
    process.on('unhandledRejection', onUnhandled);
    const logger = recordingLogger();
    // A JS caller (or `as any`): an async secret manager read that fails.
    const receiver = createReceiver({
      secret: (() => Promise.reject(new Error('secret manager down'))) as unknown as () => string,
      logger,
    });
    receiver.on('leave.approved', () => {});
    const response = await receiver.handle(await delivery());
    expect([response.status, JSON.parse(response.body)]).toEqual([500, { error: 'not_configured' }]);
    await sleep(50);
    await receiver.close();
    expect(unhandled).toEqual([]);
    expect(logger.lines.some((line) => line.msg?.includes('returned a promise'))).toBe(true);
  });
});

describe('normal traffic is quiet', () => {
  it("logs nothing for the CLI's check (a forgery, then a stale delivery) among verified deliveries", async () => {
    const logger = recordingLogger();
    const now = Date.now();
    const receiver = createReceiver({ secret, logger, now: () => now, queue: createMemoryQueue() });
    receiver.on('leave.approved', () => {});
    expect((await receiver.handle(await delivery())).status).toBe(202);
    // What `workforce-webhooks check` sends first (cli/checks.ts): a forgery, then a signature an hour old.
    expect((await receiver.handle(await delivery({ signWith: `${secret}_forged` }))).status).toBe(400);
    expect((await receiver.handle(await delivery({ timestamp: Math.floor(now / 1000) - 3600 }))).status).toBe(
      400,
    );
    expect((await receiver.handle(await delivery())).status).toBe(202);
    await receiver.close();
    expect(logger.lines.filter((l) => l.level === 'warn' || l.level === 'error').map((l) => l.msg)).toEqual(
      [],
    );
  });
});
