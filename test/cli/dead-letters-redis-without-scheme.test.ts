// `dead-letters --redis host:port` without `redis://` (ioredis takes it): when nothing listens there, the message names
// the host and port, as it does for a redis:// URL.
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run.js';
import { capture } from './capture.js';

describe('dead-letters --redis without its scheme, nothing listening', () => {
  it.each(['localhost', '127.0.0.1'])(
    'names %s and the port, with the fix; exit 1',
    { timeout: 60_000 },
    async (host) => {
      const probe = createServer();
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      const { port } = probe.address() as { port: number };
      await new Promise((resolve) => probe.close(resolve));
      const io = capture();

      const code = await runCli(
        ['dead-letters', 'list', '--redis', `${host}:${port}`, '--queue', 'workforce-webhooks'],
        io,
      );

      expect(io.err).toBe(
        `workforce-webhooks: error: cannot reach Redis at --redis (${host}:${port}): nothing listens there; start Redis, or fix the host and port in --redis; error code ECONNREFUSED\n`,
      );
      expect(code).toBe(1);
    },
  );
});
