// A baseUrl with a query string (a gateway's token, https://gw.example/workforce?code=abc) keeps it on every call,
// merged with the call's own parameters: the real client against a loopback gateway that refuses calls without it.
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, createApiClient } from 'workforce-webhooks/api';
import { envelope, type Loopback, loopback, page } from './loopback.js';

const servers: Loopback[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

/** A gateway under /workforce that lets through only calls carrying code=abc. */
async function gateway(): Promise<Loopback> {
  const server = await loopback((req, res) => {
    const url = new URL(req.url ?? '/', 'http://gateway.invalid');
    if (url.searchParams.get('code') !== 'abc') return envelope(res, 401, null);
    envelope(res, 200, url.pathname.endsWith('/list') ? page([]) : []);
  });
  servers.push(server);
  return server;
}

describe('createApiClient baseUrl with a query string', () => {
  it("sends the base's parameters on every call, with the call's own", async () => {
    const server = await gateway();
    const api = createApiClient({ apiKey: 'key', baseUrl: `${server.baseUrl}/workforce?code=abc` });

    await api.leave.listTypes();
    await api.leave.listTypes({ pageSize: 5 });
    await api.attendance.listHolidays({ year: 2026 });

    expect(server.requests.map((url) => `${url.pathname}${url.search}`)).toEqual([
      '/workforce/v1/leavetype/list?code=abc',
      '/workforce/v1/leavetype/list?code=abc&PageSize=5',
      '/workforce/v1/attendance/holidays?code=abc&Year=2026',
    ]);
  });

  it("lets a call's own parameter replace the base's of the same name, sent once", async () => {
    const server = await gateway();
    const api = createApiClient({ apiKey: 'key', baseUrl: `${server.baseUrl}/?code=abc&PageSize=50` });

    await api.leave.listTypes({ pageSize: 5 });

    expect(server.requests.map((url) => url.search)).toEqual(['?code=abc&PageSize=5']);
  });

  it('names no token of the base in an error', async () => {
    const server = await gateway();
    const api = createApiClient({ apiKey: 'key', baseUrl: `${server.baseUrl}/workforce?code=wrong` });

    const error = await api.leave.listTypes().catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ApiError);
    expect(String((error as ApiError).message)).not.toContain('wrong');
  });
});
