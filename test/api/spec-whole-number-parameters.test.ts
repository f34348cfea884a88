// Spec "Endpoints": PageNumber and PageSize are integers. A number too large to be written as one (String(1e21) is
// "1e+21") is refused before any request, like any other parameter the spec does not allow.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, createApiClient, InvalidParameterError } from 'workforce-webhooks/api';
import { createMockService, type MockService } from 'workforce-webhooks/testing';

let mock: MockService;
let api: ApiClient;
const sent: URL[] = [];

beforeAll(async () => {
  mock = await createMockService({ today: '2026-06-15' });
  const recording: typeof fetch = (input, init) => {
    sent.push(new URL(String(input)));
    return fetch(input, init);
  };
  api = createApiClient({ apiKey: mock.apiKeys.full, baseUrl: mock.baseUrl, fetch: recording });
});
afterAll(() => mock.close());

describe('spec "Endpoints": integer parameters go out as integers', () => {
  it.each([
    ['PageNumber 1e21', () => api.leave.listRequests({ pageNumber: 1e21 }), 'PageNumber'],
    ['PageSize 2^53', () => api.attendance.listRecords({ pageSize: 2 ** 53 }), 'PageSize'],
    [
      'PageNumber 1e300 of an iteration',
      () => api.leave.iterateTypes({ pageNumber: 1e300 }).next(),
      'PageNumber',
    ],
  ])('%s is refused before any request', async (_, call, parameter) => {
    sent.length = 0;
    const error = await call().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidParameterError);
    expect(error).toMatchObject({ parameter });
    expect((error as Error).message).toMatch(/is not a whole number from 1 to 9007199254740991$/);
    expect(sent).toEqual([]);
  });

  it('a whole number within range is sent as written', async () => {
    sent.length = 0;
    const page = await api.leave.listTypes({ pageNumber: 9_000 });
    expect(page).toMatchObject({ pageNumber: 9_000, data: [] });
    expect(sent.map((url) => url.searchParams.get('PageNumber'))).toEqual(['9000']);
  });
});
