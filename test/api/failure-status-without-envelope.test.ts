// A failure status from something in front of the service (a gateway, a load balancer) is that status's failure
// whatever its body: HTML, or JSON of its own that is not the service's envelope.
import { describe, expect, it } from 'vitest';
import { ApiError, createApiClient } from 'workforce-webhooks/api';
import { loopback } from './loopback.js';

describe('a failure status without the service envelope', () => {
  it.each([
    [502, '{"message":"Bad gateway"}'],
    [504, '{"error":"upstream timed out","requestId":"abc"}'],
    [500, '[]'],
    [502, 'null'],
  ])('answered %i with JSON %s is http_<status>, not invalid_response', async (status, body) => {
    const server = await loopback((_req, res) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(body),
    );
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl, rateLimit: false });
      const error = await api.leave.listTypes().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code: `http_${status}`, status });
      // The gateway's own words may echo the request: not repeated.
      expect((error as ApiError).message).not.toContain('upstream');
      expect((error as ApiError).message).not.toContain('Bad gateway');
    } finally {
      await server.close();
    }
  });

  it('a success status with JSON that is not the envelope is still invalid_response', async () => {
    const server = await loopback((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"message":"hello"}'),
    );
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl, rateLimit: false });
      await expect(api.leave.listTypes()).rejects.toMatchObject({ code: 'invalid_response', status: 200 });
    } finally {
      await server.close();
    }
  });
});
