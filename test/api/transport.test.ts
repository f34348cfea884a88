// Every call ends: a deadline per request combined with the caller's signal, and network failures as ApiError.
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ApiError, createApiClient } from 'workforce-webhooks/api';
import { envelope, loopback, page } from './loopback.js';

describe('a deadline on every request: a service that never answers does not leave the call pending', () => {
  it('rejects with ApiError timeout when no answer comes within timeoutMs', async () => {
    const server = await loopback(() => {}); // reads the request, never answers
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl, timeoutMs: 200 });
      const error = await api.leave.listTypes().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code: 'timeout', status: 0, endpoint: 'GET /v1/leavetype/list' });
      expect((error as Error).message).toMatch(
        /^workforce-webhooks: timeout: no answer to GET \/v1\/leavetype\/list/,
      );
    } finally {
      await server.close();
    }
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31])(
    'refuses timeoutMs %s when the client is made, not at every call',
    (timeoutMs) => {
      expect(() => createApiClient({ apiKey: 'wf_key', baseUrl: 'http://127.0.0.1:9', timeoutMs })).toThrow(
        /timeoutMs must be a whole number of milliseconds/,
      );
    },
  );

  it('covers the body too: headers sent, then nothing', async () => {
    const server = await loopback((_, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"isSuccessful":true,');
    });
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl, timeoutMs: 200 });
      await expect(api.leave.listTypes()).rejects.toMatchObject({ code: 'timeout' });
    } finally {
      await server.close();
    }
  });

  it("is combined with the caller's signal: the caller's abort wins with the caller's reason", async () => {
    const server = await loopback(() => {});
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl, timeoutMs: 20_000 });
      const controller = new AbortController();
      const call = api.leave.listTypes({}, { signal: controller.signal });
      const reason = new Error('shutting down');
      setTimeout(() => controller.abort(reason), 50);
      await expect(call).rejects.toBe(reason);
    } finally {
      await server.close();
    }
  });

  it('leaves a prompt answer alone', async () => {
    const server = await loopback((_, res) => envelope(res, 200, page([])));
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl, timeoutMs: 5_000 });
      expect((await api.leave.listTypes()).data).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe('network failures are ApiError network_error, with the original error as cause', () => {
  it('wraps a refused connection', async () => {
    // A port that was free a moment ago: nothing listens there now.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const api = createApiClient({ apiKey: 'wf_key', baseUrl: `http://127.0.0.1:${port}` });
    const error = await api.attendance.listHolidays().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      code: 'network_error',
      status: 0,
      endpoint: 'GET /v1/attendance/holidays',
    });
    expect((error as ApiError).cause).toBeInstanceOf(TypeError);
    expect((error as Error).message).toContain('ECONNREFUSED');
  });

  it('wraps a connection closed before any answer', async () => {
    const server = await loopback((req) => req.socket.destroy());
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl });
      const error = await api.leave.listTypes().catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'network_error', status: 0 });
      expect((error as ApiError).cause).toBeDefined();
    } finally {
      await server.close();
    }
  });
});
