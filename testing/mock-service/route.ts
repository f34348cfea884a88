// The shape of one mock API endpoint: its path, the permission it needs, and what it answers.
import type { QueryReader } from './query.js';
import type { MockState, Permission } from './state.js';

/** What an endpoint is given: the data, the caller's organisation, the query, the path's `{id}` and today. */
export interface RouteContext {
  readonly state: MockState;
  readonly organizationId: string;
  readonly query: QueryReader;
  readonly id: string | undefined;
  /** `YYYY-MM-DD`, the mock's today (balances and holidays use its year). */
  readonly today: string;
}

/** One GET endpoint; `pattern` captures `{id}` when the path has one. */
export interface Route {
  readonly pattern: RegExp;
  readonly permission: Permission;
  handle(ctx: RouteContext): unknown;
}
