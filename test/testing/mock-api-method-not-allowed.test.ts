// The mock read API answers a method other than GET with 405 and the Allow header RFC 9110 requires.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMockService, type MockService } from 'workforce-webhooks/testing';

let mock: MockService;
beforeEach(async () => {
  mock = await createMockService({ today: '2026-06-15' });
});
afterEach(() => mock.close());

describe('spec "Endpoints": every endpoint uses GET', () => {
  it.each(['POST', 'PUT', 'DELETE', 'PATCH'])(
    '%s is 405 with Allow: GET, in the envelope',
    async (method) => {
      const response = await fetch(`${mock.baseUrl}/v1/leavetype/list`, {
        method,
        headers: { authorization: `Bearer ${mock.apiKeys.full}` },
      });
      expect(response.status).toBe(405);
      // RFC 9110 section 15.5.6: "The origin server MUST generate an Allow header field in a 405 response".
      expect(response.headers.get('allow')).toBe('GET');
      expect(await response.json()).toMatchObject({ isSuccessful: false, code: 'method_not_allowed' });
    },
  );
});
