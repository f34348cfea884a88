// The CLI's edges: a --url that is not a URL is a usage mistake for send as for check, and check's trailing-slash
// probe toggles the slash on the path, not after a query.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runChecks } from '../../cli/checks.js';
import { runCli } from '../../cli/run.js';
import { capture } from './capture.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

describe('send: a --url that is not a URL is a usage mistake (exit 2), as for check', () => {
  it('exits 2 with one line naming --url, like check does', async () => {
    const check = capture();
    expect(await runCli(['check', '--url', 'not a url', '--secret', 'whsec_x'], check)).toBe(2);
    const send = capture();
    const code = await runCli(
      ['send', '--url', 'not a url', '--secret', 'whsec_x', '--type', 'leave.approved'],
      send,
    );
    expect({ code, err: send.err }).toMatchObject({ code: 2, err: expect.stringMatching(/--url/) });
  });
});

describe("check: --timeout-ms within the service's 10 s", () => {
  it.each(['30000', '0'])(
    'exits 2 for --timeout-ms %s: a longer limit would pass what the service fails',
    async (ms) => {
      const io = capture();
      const code = await runCli(
        ['check', '--url', 'http://127.0.0.1:9/hooks', '--secret', 'whsec_x', '--timeout-ms', ms],
        io,
      );
      expect({ code, err: io.err }).toMatchObject({
        code: 2,
        err: expect.stringMatching(/--timeout-ms must be 1 to 10000/),
      });
    },
  );
});

describe('check: "no 3xx anywhere, a trailing slash included" for an endpoint URL with a query string', () => {
  it('asks for the path with a trailing slash, not for the query with a slash appended', async () => {
    const paths: string[] = [];
    const server: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        paths.push(req.url ?? '');
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks?source=workforce`;
    await runChecks({ url, secret: 'whsec_x', timeoutMs: 2000 });
    // The trailing-slash variant of /hooks?source=workforce is /hooks/?source=workforce.
    expect(paths).toContain('/hooks/?source=workforce');
  });
});
