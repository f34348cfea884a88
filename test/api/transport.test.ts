// Every call ends: a deadline per request combined with the caller's signal, network failures and redirects as
// ApiError, and a key or base URL that could leak into an error refused when the client is made.
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

  it('covers a body trickled a byte at a time, which never stalls long enough for a read timeout', async () => {
    const server = await loopback((_, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"isSuccessful":true,"data":[');
      const drip = setInterval(() => res.write(' '), 20);
      res.on('close', () => clearInterval(drip));
    });
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl, timeoutMs: 300 });
      await expect(api.leave.listTypes()).rejects.toMatchObject({
        name: 'ApiError',
        code: 'timeout',
        status: 0,
      });
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

  it("copies no fetch error's message, and drops a cause that quotes the key", async () => {
    // A fetch (a wrapper, a test double) whose error quotes the request it was given, headers included.
    const quoting: typeof fetch = async (_, init) => {
      const sent = new Headers(init?.headers).get('authorization');
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error(`connect ECONNREFUSED, sending ${sent}`), { code: 'ECONNREFUSED' }),
      });
    };
    const plain: typeof fetch = async (_, init) => {
      throw new Error(`cannot send ${new Headers(init?.headers).get('authorization')}`);
    };
    for (const fetch of [quoting, plain]) {
      const api = createApiClient({ apiKey: 'wf_live_secret', baseUrl: 'http://127.0.0.1:9', fetch });
      const error = await api.leave.listTypes().catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'network_error', status: 0, cause: undefined });
      expect((error as Error).message).not.toContain('wf_live_secret');
    }
    const error = await createApiClient({ apiKey: 'wf_key', baseUrl: 'http://127.0.0.1:9', fetch: quoting })
      .leave.listTypes()
      .catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/could not reach http:\/\/127\.0\.0\.1:9 \(ECONNREFUSED\)$/);
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

describe('a redirect is a failed answer, never followed: the read API answers at its own URL', () => {
  it('sends nothing to another origin, and says where the redirect pointed', async () => {
    const other = await loopback((_, res) => envelope(res, 200, page([])));
    const port = new URL(other.baseUrl).port;
    const service = await loopback((_, res) => {
      res.writeHead(307, { location: `http://localhost:${port}/v1/leavetype/list?token=abc` });
      res.end();
    });
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: service.baseUrl });
      const error = await api.leave.listTypes().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code: 'redirected', status: 307, endpoint: 'GET /v1/leavetype/list' });
      expect((error as Error).message).toContain(`a redirect to http://localhost:${port}/v1/leavetype/list;`);
      expect(service.requests).toHaveLength(1);
      expect(other.requests).toEqual([]);
    } finally {
      await service.close();
      await other.close();
    }
  });

  it('ends a redirect loop after its first request', async () => {
    const server = await loopback((req, res) => {
      res.writeHead(302, { location: req.url ?? '/' });
      res.end();
    });
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl });
      await expect(api.attendance.listHolidays()).rejects.toMatchObject({ code: 'redirected', status: 302 });
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});

describe('what is refused when the client is made never echoes a secret', () => {
  it.each([
    ['a line break inside', 'wf_live_SECRET\nPART2'],
    ['a trailing line break', 'wf_live_SECRET\n'],
    ['a NUL character', 'wf_live_SECRET\u0000PART2'],
    ['a space', 'wf_live_SECRET PART2'],
    ['a character past ASCII', 'wf_live_SECRET\u2019'],
  ])('an API key with %s', (_, apiKey) => {
    let error: unknown;
    try {
      createApiClient({ apiKey, baseUrl: 'http://127.0.0.1:9' });
    } catch (e) {
      error = e;
    }
    // Else every call ends in network_error, its message quoting fetch's "Bearer wf_live_SECRET..." is invalid.
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/^workforce-webhooks: createApiClient apiKey has a character/);
    expect((error as Error).message).not.toMatch(/SECRET/);
  });

  it.each([
    [
      'a user and password',
      'http://svc-user:hunter2-password@127.0.0.1:9',
      /must not carry a user or password/,
    ],
    ['no URL at all', 'hunter2-password', /baseUrl is not a URL/],
    ['another scheme', 'ftp://127.0.0.1/hunter2-password', /baseUrl must be an http or https URL/],
  ])('a base URL with %s', (_, baseUrl, expected) => {
    let error: unknown;
    try {
      createApiClient({ apiKey: 'wf_key', baseUrl });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(expected);
    expect((error as Error).message).not.toContain('hunter2-password');
  });
});
