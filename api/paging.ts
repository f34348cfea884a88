// Paged lists: the page as the service sent it, and an async iterator over every record of every page.
import type { Page } from './records.js';

/**
 * The page from the envelope's `data`, with each record passed through `map` (date normalisation).
 * @example
 * toPage(data, normaliseLeaveRequest)
 */
export function toPage<T>(data: unknown, map: (record: never) => T): Page<T> {
  const page = data as Page<never>;
  if (typeof page !== 'object' || page === null || !Array.isArray(page.data)) {
    throw new TypeError('workforce-webhooks: the Workforce API sent a paged answer without a data array');
  }
  return {
    data: page.data.map(map),
    pageNumber: page.pageNumber,
    pageSize: page.pageSize,
    totalRecords: page.totalRecords,
    totalPages: page.totalPages,
  };
}

/**
 * Every record from `params.pageNumber` (default 1) to the last page, one request per page.
 * @example
 * for await (const request of iteratePages((p) => api.leave.listRequests(p), { leaveStatus: 'Approved' })) {}
 */
export async function* iteratePages<P extends { readonly pageNumber?: number }, T>(
  list: (params: P) => Promise<Page<T>>,
  params: P,
): AsyncGenerator<T, void, undefined> {
  for (let pageNumber = params.pageNumber ?? 1; ; pageNumber++) {
    const page = await list({ ...params, pageNumber });
    yield* page.data;
    if (page.data.length === 0 || pageNumber >= page.totalPages) return;
  }
}
