// The mock's reading of the spec's two statements on the exceptions endpoints' permission: "View Attendance
// Exceptions, which Attendance: View includes" and Authentication rule 3's "all six need Attendance: View". A key
// holding only View Attendance Exceptions is refused there (the stricter reading); Attendance: View reaches both.
import { afterEach, describe, expect, it } from 'vitest';
import { createMockService, type MockService } from 'workforce-webhooks/testing';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

async function mockService(): Promise<MockService> {
  const mock = await createMockService({ today: '2026-06-15' });
  cleanup.push(() => mock.close());
  return mock;
}

const call = async (mock: MockService, key: string, path: string) => {
  const response = await fetch(`${mock.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: await response.json() };
};

describe('the exceptions endpoints and a key holding only View Attendance Exceptions', () => {
  it('refuses it on both, naming Attendance: View; a key with Attendance: View reaches both', async () => {
    const mock = await mockService();
    const key = 'wf_mock_exceptions_only';
    mock.state.apiKeys.push({
      key,
      organizationId: mock.organizationId,
      permissions: ['View Attendance Exceptions'],
    });
    const exception = mock.state.exceptions.find((e) =>
      mock.state.employees.some((p) => p.id === e.employeeId && p.organizationId === mock.organizationId),
    )!;

    for (const path of ['/v1/attendance/exceptions', `/v1/attendance/exceptions/${exception.id}`]) {
      expect(await call(mock, key, path)).toMatchObject({
        status: 403,
        body: {
          isSuccessful: false,
          code: 'forbidden',
          message: 'this key lacks the permission Attendance: View',
        },
      });
      expect(await call(mock, mock.apiKeys.attendance, path)).toMatchObject({
        status: 200,
        body: { isSuccessful: true },
      });
    }
  });
});
