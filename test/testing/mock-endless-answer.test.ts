// The mock's sender against a subscriber whose answer body never ends: the status decides the delivery, and only
// the start of the body is read and kept.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMockService } from 'workforce-webhooks/testing';
import { endless } from '../cli/endless-answer.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

describe('a subscriber answering 2xx with a body that never ends', () => {
  it('is delivered on its status, with the first 500 characters of the body kept', async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => endless(200)(req, res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    });
    const mock = await createMockService({ today: '2026-06-15', timeoutMs: 3000, retryScheduleMs: [] });
    cleanup.push(() => mock.close());
    mock.subscribe(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);
    const { attempts } = await mock.sendTest();
    expect(attempts).toMatchObject([{ status: 200, ok: true, body: 'a'.repeat(500) }]);
    expect(attempts[0]).not.toHaveProperty('error');
  });
});
