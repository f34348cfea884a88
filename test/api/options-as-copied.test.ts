// A key or base URL copied from elsewhere with a part the client adds itself is refused when the client is made,
// with the fix and without echoing the key, rather than failing every call with the service's 401 or 404.
import { describe, expect, it } from 'vitest';
import { createApiClient } from 'workforce-webhooks/api';
import { createMockService } from 'workforce-webhooks/testing';

/** What `createApiClient` threw, or undefined. */
function refusal(options: Parameters<typeof createApiClient>[0]): Error | undefined {
  try {
    createApiClient(options);
  } catch (error) {
    return error as Error;
  }
  return undefined;
}

describe('spec "Authentication": the header is `Authorization: Bearer <API_KEY>`, the key alone is the option', () => {
  it.each([
    ['the scheme in front, from a copied header', 'Bearer wf_live_SECRET', /apiKey starts with "Bearer "/],
    ['the scheme in lower case', 'bearer wf_live_SECRET', /apiKey starts with "Bearer "/],
    ['double quotes, kept by docker --env-file', '"wf_live_SECRET"', /apiKey is wrapped in quotes/],
    ['single quotes', "'wf_live_SECRET'", /apiKey is wrapped in quotes/],
  ])('an API key with %s', (_, apiKey, expected) => {
    const error = refusal({ apiKey, baseUrl: 'https://api.example.com' });
    expect(error).toBeInstanceOf(TypeError);
    expect(error?.message).toMatch(/^workforce-webhooks: createApiClient /);
    expect(error?.message).toMatch(expected);
    expect(error?.message).not.toContain('SECRET');
  });

  it('the key as the mock service issues it is taken, and reaches the service', async () => {
    const mock = await createMockService({ today: '2026-06-15' });
    try {
      const api = createApiClient({ apiKey: mock.apiKeys.full, baseUrl: mock.baseUrl });
      expect((await api.leave.listTypes()).totalRecords).toBe(5);
    } finally {
      await mock.close();
    }
  });
});

describe('spec "Endpoints": paths such as /v1/leaverequest/list are relative to {base_url}', () => {
  it.each([
    'https://api.example.com/v1',
    'https://api.example.com/v1/',
    'https://gateway.example.com/hr/v1',
    'https://api.example.com/V1',
  ])('a baseUrl ending in the version the paths carry, %s, is refused', (baseUrl) => {
    const error = refusal({ apiKey: 'wf_key', baseUrl });
    expect(error).toBeInstanceOf(TypeError);
    expect(error?.message).toMatch(
      /^workforce-webhooks: createApiClient baseUrl ends in \/v1, .*set baseUrl to the part before \/v1/,
    );
  });

  it.each(['https://api.example.com', 'https://api.example.com/api', 'https://api.example.com/v10'])(
    'a baseUrl %s is taken',
    (baseUrl) => {
      expect(refusal({ apiKey: 'wf_key', baseUrl })).toBeUndefined();
    },
  );
});
