// Paged lists: the page as the service sent it, and an async iterator over every record of every page.
import type { Page } from './records.js';
import { integer, list, object, type Read } from './shape.js';

/**
 * Reads a page from the envelope's `data`, each record through `item` (dates and shape).
 * @example
 * await get('/v1/leavetype/list', query, options, pageOf(readLeaveType))
 */
export function pageOf<T>(item: Read<T>): Read<Page<T>> {
  return (value, field) => {
    const page = object(value, field);
    return {
      data: list(page.data, `${field}.data`, item),
      pageNumber: integer(page, 'pageNumber', field),
      pageSize: integer(page, 'pageSize', field),
      totalRecords: integer(page, 'totalRecords', field),
      totalPages: integer(page, 'totalPages', field),
    };
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
