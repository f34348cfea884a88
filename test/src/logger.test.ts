// The default logger through the console it writes to (no `logger` option): once per kind, then once a minute.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createConsoleLogger, createMemoryQueue, createReceiver } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';

const secret = 'whsec_logger_test';
const encoder = new TextEncoder();

async function signed(signWith: string, nowMs: number) {
  const delivery = await createSignedDelivery({
    secret: signWith,
    type: 'leave.approved',
    timestamp: Math.floor(nowMs / 1000),
  });
  return { method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) };
}

describe('the default logger', () => {
  let printed: { level: 'warn' | 'error'; args: unknown[] }[];
  beforeEach(() => {
    printed = [];
    vi.spyOn(console, 'warn').mockImplementation((...args) => void printed.push({ level: 'warn', args }));
    vi.spyOn(console, 'error').mockImplementation((...args) => void printed.push({ level: 'error', args }));
  });
  afterEach(() => vi.restoreAllMocks());

  const messages = (): string[] => printed.map(({ args }) => String(args[0]));

  it('says a run of signature mismatches once, then at most once a minute with a count', async () => {
    let now = Date.parse('2026-11-23T12:00:00Z');
    const receiver = createReceiver({ secret, now: () => now });
    receiver.on('leave.approved', () => {});
    for (let i = 0; i < 3; i += 1) await receiver.handle(await signed('whsec_other', now));
    expect(messages()).toEqual([
      expect.stringMatching(/^workforce-webhooks: a delivery was refused 400 signature_mismatch\. Is this/),
    ]);
    now += 30_000;
    await receiver.handle(await signed('whsec_other', now));
    expect(printed).toHaveLength(1);
    now += 31_000;
    await receiver.handle(await signed('whsec_other', now));
    expect(printed).toHaveLength(2);
    expect(printed[1]!.level).toBe('warn');
    expect(printed[1]!.args[0]).toMatch(
      /^workforce-webhooks: 4 deliveries were refused 400 signature_mismatch since/,
    );
    // `code` is in the message already, so only the count is printed beside it.
    expect(printed[1]!.args[1]).toEqual({ count: 4 });
    await receiver.close();
  });

  it('lets one forgery among verified deliveries pass quietly, and says two in a row', async () => {
    const now = Date.now();
    const receiver = createReceiver({ secret, now: () => now, queue: createMemoryQueue() });
    receiver.on('leave.approved', () => {});
    expect((await receiver.handle(await signed(secret, now))).status).toBe(202);
    await receiver.handle(await signed('whsec_attacker', now));
    expect((await receiver.handle(await signed(secret, now))).status).toBe(202);
    await receiver.handle(await signed('whsec_attacker', now));
    expect(printed).toEqual([]);
    await receiver.handle(await signed('whsec_attacker', now));
    expect(messages()).toEqual([expect.stringContaining('deliveries were refused 400 signature_mismatch')]);
    await receiver.close();
  });

  it('points a run of stale signatures at the clock', async () => {
    const now = Date.now();
    const receiver = createReceiver({ secret, now: () => now });
    await receiver.handle(await signed(secret, now - 3_600_000));
    expect(messages()).toEqual([
      expect.stringContaining("timestamp_out_of_tolerance. Is this server's clock right?"),
    ]);
  });

  it('warns at createReceiver about a secret with whitespace, and never prints the secret', () => {
    createReceiver({ secret: ` ${secret}` });
    createReceiver({ secret: [secret, `${secret}\r\n`] });
    expect(messages()).toEqual([
      expect.stringContaining('leading or trailing whitespace'),
      expect.stringContaining('leading or trailing whitespace'),
    ]);
    expect(JSON.stringify(printed)).not.toContain(secret);
  });

  it('is replaced by a given logger and silenced by logger: false', async () => {
    const lines: string[] = [];
    const note = (_obj: object, msg?: string): void => void lines.push(msg ?? '');
    const given = createReceiver({
      secret: ' x',
      logger: { debug: note, info: note, warn: note, error: note },
    });
    createReceiver({ secret: ' x', logger: false });
    expect(lines).toEqual([expect.stringContaining('whitespace')]);
    // The receiver logs through a guarded copy of the given logger (a method that throws loses only its line).
    given.logger.warn({}, 'm');
    expect(lines.at(-1)).toBe('m');
    expect(printed).toEqual([]);
  });

  it('counts a repeated line instead of printing it, and prints it again a minute on', () => {
    let now = 0;
    const out = { warn: vi.fn(), error: vi.fn() };
    const logger = createConsoleLogger({ console: out, now: () => now });
    logger.info({ eventId: 'e' }, 'workforce-webhooks: normal traffic');
    logger.debug({}, 'workforce-webhooks: normal traffic');
    for (let i = 0; i < 5; i += 1)
      logger.error({ eventId: `e${i}` }, 'workforce-webhooks: the store is down');
    now = 60_000;
    logger.error({ eventId: 'e5' }, 'workforce-webhooks: the store is down');
    logger.warn({ kind: 'x', fix: 'do this' }, 'workforce-webhooks: wrong. Fix: do this');
    expect(out.error.mock.calls).toEqual([
      ['workforce-webhooks: the store is down', { eventId: 'e0' }],
      ['workforce-webhooks: the store is down', { eventId: 'e5', repeated: 5 }],
    ]);
    expect(out.warn.mock.calls).toEqual([['workforce-webhooks: wrong. Fix: do this']]);
  });
});
