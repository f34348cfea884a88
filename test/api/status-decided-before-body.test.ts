// A redirect or a rate-limited answer is decided by its status and headers: a body that stalls or runs on does not
// turn the retry, or the redirect's fix, into a timeout at the deadline.
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ApiError, createApiClient } from 'workforce-webhooks/api';
import { envelope, loopback, page } from './loopback.js';

/** Sends the head and the start of a body, then nothing more until the connection closes. */
function stall(res: ServerResponse, status: number, headers: Record<string, string>): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.write('{"isSuccessful":false,"code":"rate_limited","message":"');
}

// Far above what two loopback requests take, even on a loaded machine: a call that waits for the stalled body
// ends here, with ApiError timeout, instead of with the answer its status gave.
const timeoutMs = 10_000;

describe('spec "Errors": a rate-limited answer\'s Retry-After is in its headers', () => {
  it.each([429, 503])('a %i whose body never ends is retried after its Retry-After', async (status) => {
    const server = await loopback((_, res, index) =>
      index === 0 ? stall(res, status, { 'retry-after': '0' }) : envelope(res, 200, page([])),
    );
    try {
      const sleeps: number[] = [];
      const api = createApiClient({
        apiKey: 'wf_key',
        baseUrl: server.baseUrl,
        timeoutMs,
        rateLimit: false,
        sleep: async (ms) => {
          sleeps.push(ms);
        },
      });
      expect((await api.leave.listTypes()).totalRecords).toBe(0);
      expect(sleeps).toEqual([0]);
      expect(server.requests).toHaveLength(2);
    } finally {
      await server.close();
    }
  });

  it('a 429 whose body never ends, still limited after the retries, is rate_limited', async () => {
    const server = await loopback((_, res) => stall(res, 429, { 'retry-after': '1' }));
    try {
      const api = createApiClient({
        apiKey: 'wf_key',
        baseUrl: server.baseUrl,
        timeoutMs,
        rateLimit: false,
        maxRetries: 1,
        sleep: async () => {},
      });
      const error = await api.attendance.listExceptions().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code: 'rate_limited', status: 429 });
      expect(server.requests).toHaveLength(2);
    } finally {
      await server.close();
    }
  });
});

describe('spec rule 5 (no redirects) on the read API: a 3xx is answered as redirected, body or not', () => {
  it('a redirect whose body never ends says where it pointed, not that the answer timed out', async () => {
    const server = await loopback((_, res) =>
      stall(res, 301, { location: 'https://api.example.com/v1/leavetype/list' }),
    );
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl, timeoutMs });
      const error = await api.leave.listTypes().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code: 'redirected', status: 301, endpoint: 'GET /v1/leavetype/list' });
      expect((error as Error).message).toContain('a redirect to https://api.example.com/v1/leavetype/list;');
    } finally {
      await server.close();
    }
  });
});
