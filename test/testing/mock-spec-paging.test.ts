// Spec "Response envelope": PageNumber is the "page to return", with no upper bound. A page past the last is an empty
// page, whatever its number, as the client may ask for any page from 1 on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, createApiClient } from 'workforce-webhooks/api';
import { createMockService, type MockService } from 'workforce-webhooks/testing';

let mock: MockService;
let api: ApiClient;

beforeAll(async () => {
  mock = await createMockService({ today: '2026-06-15' });
  api = createApiClient({ apiKey: mock.apiKeys.full, baseUrl: mock.baseUrl });
});
afterAll(() => mock.close());

describe('spec "Response envelope": a page past the last, on the mock read API', () => {
  it.each([10_000, 10_001, 2 ** 40])(
    'page %i is an empty page with the counts, not a refusal',
    async (pageNumber) => {
      const page = await api.leave.listTypes({ pageNumber });
      expect(page).toEqual({ data: [], pageNumber, pageSize: 25, totalRecords: 5, totalPages: 1 });
    },
  );

  it('of the exceptions list, with its own default size', async () => {
    const page = await api.attendance.listExceptions({ pageNumber: 50_000 });
    expect(page).toMatchObject({ data: [], pageNumber: 50_000, pageSize: 20, totalPages: 2 });
  });

  it('page 0 is still refused, in the failure envelope', async () => {
    const response = await fetch(`${mock.baseUrl}/v1/leavetype/list?PageNumber=0`, {
      headers: { authorization: `Bearer ${mock.apiKeys.full}` },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ isSuccessful: false, code: 'invalid_parameter' });
  });
});
