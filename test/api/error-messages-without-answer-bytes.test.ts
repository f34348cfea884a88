// An ApiError's message is logged as is: it names the answer's status, type and size, never the answer's bytes,
// and a base URL on a port fetch refuses is refused when the client is made, with the fix.
import { describe, expect, it } from 'vitest';
import { ApiError, createApiClient } from 'workforce-webhooks/api';
import { loopback } from './loopback.js';

const MARKER = 'Bearer-wf_leaked_token_123';

describe('a non-JSON answer', () => {
  it.each([
    [502, 'text/html; charset=utf-8', 'http_502'],
    [200, 'text/html', 'invalid_response'],
  ])('answered %i is reported by status, type and size, without its body', async (status, type, code) => {
    // A proxy's error page that reflects the request's headers, a control character among them.
    const page = `<html>\u001b[31mBad gateway</h1><pre>authorization: ${MARKER}</pre></html>`;
    const server = await loopback((_req, res) => res.writeHead(status, { 'content-type': type }).end(page));
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl, rateLimit: false });
      const error = await api.leave.listTypes().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code, status });
      const { message } = error as ApiError;
      expect(message).not.toContain(MARKER);
      expect(message).not.toContain('Bad gateway');
      expect(message).not.toContain('\u001b');
      expect(message).toContain(`(text/html, ${Buffer.byteLength(page)} bytes)`);
    } finally {
      await server.close();
    }
  });

  it('with a content type that is not a media type repeats none of it', async () => {
    const server = await loopback((_req, res) =>
      res.writeHead(502, { 'content-type': `text/html; ${MARKER}`.replace('; ', ' ') }).end('oops'),
    );
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl, rateLimit: false });
      const error = (await api.leave.listTypes().catch((e: unknown) => e)) as ApiError;
      expect(error.message).toContain('(an unreadable content type, 4 bytes)');
      expect(error.message).not.toContain(MARKER);
    } finally {
      await server.close();
    }
  });
});

describe('a rate-limited answer', () => {
  it('repeats a Retry-After that is not a number or a date as "unreadable"', async () => {
    const server = await loopback((_req, res) =>
      res
        .writeHead(429, { 'retry-after': `soon; ${MARKER}="x"`, 'content-type': 'application/json' })
        .end('{}'),
    );
    try {
      const api = createApiClient({
        apiKey: 'wf_key',
        baseUrl: server.baseUrl,
        rateLimit: false,
        maxRetries: 0,
      });
      const error = (await api.leave.listTypes().catch((e: unknown) => e)) as ApiError;
      expect(error).toMatchObject({ code: 'rate_limited' });
      expect(error.message).toContain('Retry-After: unreadable');
      expect(error.message).not.toContain(MARKER);
    } finally {
      await server.close();
    }
  });
});

describe('a baseUrl on a port fetch refuses', () => {
  it.each(['http://127.0.0.1:6666', 'https://api.example.com:10080/api'])(
    '%s is refused when the client is made, naming the port and the fix',
    (baseUrl) => {
      const port = new URL(baseUrl).port;
      expect(() => createApiClient({ apiKey: 'wf_key', baseUrl })).toThrow(
        new RegExp(`port ${port} is one fetch refuses to connect to .*on another port`),
      );
    },
  );

  it('while the default ports and ordinary ones are taken', () => {
    for (const baseUrl of ['http://127.0.0.1', 'https://api.example.com', 'http://127.0.0.1:4010'])
      expect(() => createApiClient({ apiKey: 'wf_key', baseUrl })).not.toThrow();
  });
});
