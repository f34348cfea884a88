// An answer that runs on (a proxy or a wrong baseUrl streaming without end) fails at a size, with memory to spare,
// instead of being read until the deadline.
import { describe, expect, it } from 'vitest';
import { ApiError, createApiClient } from 'workforce-webhooks/api';
import { envelope, loopback, page } from './loopback.js';

const MiB = 1024 * 1024;

describe('the size of an answer is bounded', () => {
  it('fails with ApiError invalid_response once an answer passes 32 MiB, not at the deadline', async () => {
    // 40 MiB of a JSON envelope that never closes, then silence: a client reading it all waits for its deadline.
    const server = await loopback((_, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"isSuccessful":true,"code":"00","message":"Success","data":');
      const chunk = Buffer.alloc(MiB, ' ');
      let sent = 0;
      const more = (): void => {
        while (sent < 40 && !res.destroyed) {
          sent++;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
      };
      more();
    });
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl, timeoutMs: 20_000 });
      const error = await api.leave.listTypes().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({
        code: 'invalid_response',
        status: 200,
        endpoint: 'GET /v1/leavetype/list',
      });
      expect((error as Error).message).toContain('larger than 32 MiB');
    } finally {
      await server.close();
    }
  });

  it('reads a large page whole, multi-byte characters across chunks included', async () => {
    const names = Array.from({ length: 2000 }, (_, i) => `Chiọma Ẹ̀kọ́ ${i} ${'✓'.repeat(200)}`);
    const types = names.map((name, i) => ({
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      name,
      description: 'd',
      maxLeaveDays: 10,
      carryForward: { maxCarryForwardLimit: 0, expirationDate: 0 },
      eligibilityCriteria: 0,
      requiresDocument: false,
      requiredDocument: [],
      isActive: true,
      created: '2024-01-10T08:00:00.000Z',
      lastModified: '2025-12-01T08:00:00.000Z',
    }));
    const server = await loopback((_, res) => envelope(res, 200, page(types)));
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl });
      const listed = await api.leave.listTypes({ pageSize: 2000 });
      expect(listed.data.map((t) => t.name)).toEqual(names);
    } finally {
      await server.close();
    }
  });
});
