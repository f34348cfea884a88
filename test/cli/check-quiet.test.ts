// check against a freshly started receiver with the default logger (the Express quick start, then check first, as a
// newcomer does): every check passes and nothing about the secret or the clock is printed, as its valid deliveries
// go before its forged and stale ones.
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { runChecks } from '../../cli/checks.js';

const SECRET = 'whsec_check_quiet';

afterEach(() => {
  vi.restoreAllMocks();
});

async function quickstart(): Promise<{ url: string; stop: () => Promise<void> }> {
  const receiver = createReceiver({ secret: SECRET }); // no logger option, as in the quick start
  receiver.on('leave.approved', () => {});
  receiver.onAny(() => {});
  const app = express();
  app.all('/webhooks/workforce', createExpressMiddleware(receiver));
  app.use(express.json());
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks/workforce`,
    stop: async () => {
      await receiver.close();
      server.close();
    },
  };
}

describe('README: `check` against a freshly started quick start is normal traffic', () => {
  it('passes every check and prints no warning about the secret or the clock', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    const { url, stop } = await quickstart();
    const results = await runChecks({ url, secret: SECRET });
    await stop();
    expect(results.filter((r) => !r.ok)).toEqual([]);
    // The secret is right and the clock is right: neither hint may be printed.
    expect([...warn.mock.calls, ...error.mock.calls].map((call) => String(call[0]))).toEqual([]);
  });
});
