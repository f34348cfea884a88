// createMockService refuses, with the fix, a `version` no User-Agent header can carry, rather than failing every
// delivery attempt with an error blamed on the endpoint.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createMockService } from 'workforce-webhooks/testing';

describe('createMockService({ version })', () => {
  it.each([
    ['a trailing newline', '1.0\n'],
    ['a space', '1.0 beta'],
    ['a letter outside ASCII', 'version-ß'],
    ['nothing', ''],
  ])('refuses a version with %s', async (_, version) => {
    await expect(createMockService({ today: '2026-06-15', version })).rejects.toThrow(
      `workforce-webhooks mock: version must be printable ASCII without spaces (it is sent as User-Agent: Svc-Webhooks/<version>), got ${JSON.stringify(version)}`,
    );
  });

  it('sends a version a header carries as User-Agent: Svc-Webhooks/<version>', async () => {
    const agents: string[] = [];
    const server = createServer((req, res) => {
      agents.push(String(req.headers['user-agent']));
      req.resume();
      req.on('end', () => res.writeHead(200).end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const mock = await createMockService({ today: '2026-06-15', version: '2.3.1', retryScheduleMs: [] });
    try {
      mock.subscribe(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);
      const { attempts } = await mock.sendTest();
      expect(attempts.map((a) => a.ok)).toEqual([true]);
      expect(agents).toEqual(['Svc-Webhooks/2.3.1']);
    } finally {
      await mock.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
