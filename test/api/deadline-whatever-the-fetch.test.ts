// The deadline is the client's own, whatever the fetch it is given: a fetch that drops the signal (a wrapper that
// passes on only the headers) still ends each call at timeoutMs, or at the caller's abort.
import { describe, expect, it } from 'vitest';
import { ApiError, createApiClient } from 'workforce-webhooks/api';
import { loopback } from './loopback.js';

/** A fetch wrapper that forwards the URL, headers and redirect mode, and drops the signal. */
const signalless: typeof fetch = (input, init) =>
  fetch(input, { headers: init?.headers, redirect: init?.redirect });

/** The call's outcome, or 'still pending' after a bound far above timeoutMs: a hang fails the test, not the run. */
async function outcome(call: Promise<unknown>): Promise<unknown> {
  let bound: ReturnType<typeof setTimeout> | undefined;
  const pending = new Promise((resolve) => {
    bound = setTimeout(() => resolve('still pending'), 10_000);
  });
  try {
    return await Promise.race([call.catch((e: unknown) => e), pending]);
  } finally {
    clearTimeout(bound);
  }
}

describe('README "Every call ends": timeoutMs holds whatever fetch the client is given', () => {
  it('a service that never answers, through a fetch that drops the signal, is ApiError timeout', async () => {
    const server = await loopback(() => {});
    try {
      const api = createApiClient({
        apiKey: 'wf_key',
        baseUrl: server.baseUrl,
        timeoutMs: 300,
        fetch: signalless,
      });
      const error = await outcome(api.leave.listTypes());
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code: 'timeout', status: 0, endpoint: 'GET /v1/leavetype/list' });
    } finally {
      await server.close();
    }
  });

  it('headers sent, then a body that never ends, through a fetch that drops the signal, is ApiError timeout', async () => {
    const server = await loopback((_, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"isSuccessful":true,');
    });
    try {
      const api = createApiClient({
        apiKey: 'wf_key',
        baseUrl: server.baseUrl,
        timeoutMs: 300,
        fetch: signalless,
      });
      const error = await outcome(api.attendance.listRecords());
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code: 'timeout', status: 0 });
    } finally {
      await server.close();
    }
  });

  it("the caller's abort ends such a call with the caller's reason", async () => {
    const server = await loopback(() => {});
    try {
      const api = createApiClient({
        apiKey: 'wf_key',
        baseUrl: server.baseUrl,
        timeoutMs: 60_000,
        fetch: signalless,
      });
      const controller = new AbortController();
      const reason = new Error('shutting down');
      const call = api.leave.getBalance(
        {
          employeeId: '00000000-0000-4000-8000-000000000001',
          leaveTypeId: '00000000-0000-4000-8000-000000000002',
        },
        { signal: controller.signal },
      );
      // Once the request has reached the service, so that the wait is for the answer.
      while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      controller.abort(reason);
      expect(await outcome(call)).toBe(reason);
    } finally {
      await server.close();
    }
  });
});
