// Iterating a paged list follows the page's own totalPages: an empty page that says more follow ends nothing.
import { describe, expect, it } from 'vitest';
import { ApiError, createApiClient } from 'workforce-webhooks/api';
import { envelope, loopback } from './loopback.js';

const request = (n: number) => ({
  id: `00000000-0000-4000-8000-00000000000${n}`,
  startDate: '2026-03-02T00:00:00',
  endDate: '2026-03-02T00:00:00',
});

/** A page as the service sends it, numbered as asked. */
const pageOf = (pageNumber: number, data: unknown[], totalPages: number) => ({
  data,
  pageNumber,
  pageSize: 2,
  totalRecords: totalPages * 2,
  totalPages,
});

describe('spec "Response envelope": totalPages is the number of pages', () => {
  it('goes on past an empty page whose totalPages says more follow, and yields the records after it', async () => {
    const pages: Record<string, unknown[]> = { '1': [request(1), request(2)], '2': [], '3': [request(3)] };
    const server = await loopback((req, res) => {
      const asked = new URL(req.url ?? '/', 'http://x').searchParams.get('PageNumber') ?? '1';
      envelope(res, 200, pageOf(Number(asked), pages[asked] ?? [], 3));
    });
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl, rateLimit: false });
      const seen: string[] = [];
      for await (const leave of api.leave.iterateRequests({ pageSize: 2 })) seen.push(leave.id);
      expect(seen).toEqual([request(1).id, request(2).id, request(3).id]);
      expect(server.requests.map((url) => url.searchParams.get('PageNumber'))).toEqual(['1', '2', '3']);
    } finally {
      await server.close();
    }
  });

  it('stops with invalid_response, saying why, when empty pages keep saying more follow', async () => {
    // A count that never matches its pages: every page empty, a million pages announced.
    const server = await loopback((req, res) => {
      const asked = new URL(req.url ?? '/', 'http://x').searchParams.get('PageNumber') ?? '1';
      envelope(res, 200, pageOf(Number(asked), [], 1_000_000));
    });
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl, rateLimit: false });
      const seen: unknown[] = [];
      const error = await (async () => {
        for await (const leave of api.attendance.iterateExceptions()) seen.push(leave);
      })().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({
        code: 'invalid_response',
        field: 'data.totalPages',
        endpoint: 'GET /v1/attendance/exceptions',
      });
      expect((error as Error).message).toContain('were empty though totalPages is 1000000');
      expect(seen).toEqual([]);
      // Bounded: a handful of requests, not a million.
      expect(server.requests.length).toBeGreaterThan(1);
      expect(server.requests.length).toBeLessThanOrEqual(10);
    } finally {
      await server.close();
    }
  });

  it('an empty list (totalPages 0) is one request and no error', async () => {
    const server = await loopback((_, res) => envelope(res, 200, pageOf(1, [], 0)));
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl, rateLimit: false });
      const seen: unknown[] = [];
      for await (const type of api.leave.iterateTypes()) seen.push(type);
      expect(seen).toEqual([]);
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
