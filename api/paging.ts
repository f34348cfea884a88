// Paged lists: the page as the service sent it, and an async iterator over every record of every page.
import { ApiError } from './errors.js';
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

// Empty pages in a row, each saying more follow, after which iteration stops with `invalid_response`: a count that
// keeps disagreeing with the pages would otherwise be asked for one page after another without end.
const MAX_EMPTY_PAGES_IN_A_ROW = 10;

/**
 * Every record from `params.pageNumber` (default 1) to the last page (`totalPages`), one request per page; an empty
 * page that says more follow does not end it.
 * @example
 * for await (const request of iteratePages((p) => api.leave.listRequests(p), { leaveStatus: 'Approved' }, 'GET /v1/leaverequest/list')) {}
 */
export async function* iteratePages<P extends { readonly pageNumber?: number }, T>(
  list: (params: P) => Promise<Page<T>>,
  params: P,
  endpoint: string,
): AsyncGenerator<T, void, undefined> {
  let empty = 0;
  for (let pageNumber = params.pageNumber ?? 1; ; pageNumber++) {
    const page = await list({ ...params, pageNumber });
    yield* page.data;
    // The page's own totalPages decides (spec: "number of pages"), not its length: stopping at an empty page that
    // says more follow would drop the records of the pages after it without a word.
    if (pageNumber >= page.totalPages) return;
    empty = page.data.length === 0 ? empty + 1 : 0;
    if (empty >= MAX_EMPTY_PAGES_IN_A_ROW)
      throw new ApiError(
        'invalid_response',
        `pages ${pageNumber - empty + 1} to ${pageNumber} were empty though totalPages is ${page.totalPages}; the pages and the count disagree, so iteration stops here rather than ask for the next page without end`,
        200,
        { endpoint, field: 'data.totalPages' },
      );
  }
}
