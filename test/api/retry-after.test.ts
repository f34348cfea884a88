// A Retry-After that is neither delay-seconds nor an HTTP date ('1.5', which Date.parse reads as a day in 2001) waits
// the documented one second, not nothing.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from 'workforce-webhooks/api';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

describe('an unreadable Retry-After waits the documented one second', () => {
  it.each(['1.5', '-1', '0.5'])('Retry-After: %s', async (value) => {
    let n = 0;
    const server: Server = createServer((_req, res) => {
      n++;
      if (n === 1) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': value });
        res.end(
          JSON.stringify({ isSuccessful: false, code: 'rate_limited', message: 'slow down', data: null }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          isSuccessful: true,
          code: '00',
          message: 'Success',
          data: { data: [], pageNumber: 1, pageSize: 25, totalRecords: 0, totalPages: 0 },
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    });
    const sleeps: number[] = [];
    const api = createApiClient({
      apiKey: 'wf_key',
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      rateLimit: false,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    });
    await api.leave.listTypes();
    expect(sleeps).toEqual([1000]);
  });
});
