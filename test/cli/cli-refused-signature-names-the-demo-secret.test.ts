// `send` and `check` against an example of this package on this machine, started without WORKFORCE_WEBHOOK_SECRET:
// a refused signature names the demo secret the example checks, and sending with it is accepted.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../cli/run.js';
import { createExampleApp, DEMO_SECRET } from '../../examples/express/server.js';
import { capture } from './capture.js';

describe('a refused signature to an example on this machine', () => {
  let url: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    // Unset (or empty, as a blank line in .env leaves it): the example falls back to its demo secret.
    vi.stubEnv('WORKFORCE_WEBHOOK_SECRET', '');
    const { app, receiver } = createExampleApp({ log: () => {} });
    vi.unstubAllEnvs();
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/workforce`;
    close = async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await receiver.close();
    };
  });

  afterAll(() => close?.());

  it('send says which secret the examples check, and that one is accepted', { timeout: 60_000 }, async () => {
    const refused = capture();
    const argv = ['send', '--url', url, '--type', 'leave.approved'];
    expect(await runCli([...argv, '--secret', 'whsec_my_own_secret'], refused)).toBe(1);
    expect(refused.out).toMatch(/^HTTP 400 /);
    expect(refused.err).toContain(`WORKFORCE_WEBHOOK_SECRET=${DEMO_SECRET}`);
    expect(refused.err).not.toContain('whsec_my_own_secret');

    const accepted = capture('', { env: { WORKFORCE_WEBHOOK_SECRET: DEMO_SECRET } });
    expect(await runCli(argv, accepted)).toBe(0);
    expect(accepted.out).toMatch(/^HTTP 2\d\d /);
  });

  it('check says it once, in the shared cause of the refused deliveries', { timeout: 120_000 }, async () => {
    const io = capture();
    expect(await runCli(['check', '--url', url, '--secret', 'whsec_my_own_secret'], io)).toBe(1);
    const all = io.out + io.err;
    expect(all.split(`WORKFORCE_WEBHOOK_SECRET=${DEMO_SECRET}`)).toHaveLength(2);
    expect(all).not.toContain('whsec_my_own_secret');
  });

  it('says the server has another secret when the demo one is refused', { timeout: 60_000 }, async () => {
    const io = capture();
    const other = createExampleApp({ secret: 'whsec_set_by_the_operator', log: () => {} });
    const server = other.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const at = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/workforce`;
      const argv = ['send', '--url', at, '--type', 'leave.approved', '--secret', DEMO_SECRET];
      expect(await runCli(argv, io)).toBe(1);
      expect(io.err).toContain("--secret is an example's demo secret");
      expect(io.err).toContain('WORKFORCE_WEBHOOK_SECRET set: pass that one');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await other.receiver.close();
    }
  });
});
