// Paged lists: the page as the service sent it, and an async iterator over every record of every page.
import type { Page } from './records.js';
import { integer, list, object, type Read, ShapeError } from './shape.js';

/**
 * Reads a page from the envelope's `data`, each record through `item` (dates and shape); the page must be the one
 * asked for, `pageNumber` (spec: `pageNumber` is the "page returned"), or a server that ignores `PageNumber`
 * would have every page read as the next one.
 * @example
 * await get('/v1/leavetype/list', query, options, pageOf(readLeaveType, params?.pageNumber))
 */
export function pageOf<T>(item: Read<T>, pageNumber = 1): Read<Page<T>> {
  return (value, field) => {
    const page = object(value, field);
    const returned = integer(page, 'pageNumber', field);
    if (returned !== pageNumber)
      throw new ShapeError(`${field}.pageNumber`, `is ${returned}, not ${pageNumber}, the page asked for`);
    return {
      data: list(page.data, `${field}.data`, item),
      pageNumber: returned,
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
