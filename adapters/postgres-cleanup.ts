// The Postgres store's cleanup: past done ids, long-lapsed claims and ordering rows deleted in batches, now and on a timer.
import type { Logger } from '../src/logger.js';
import type { BoundPool } from './postgres-pool.js';
import { CLEANUP_BATCH } from './postgres-statements.js';

/** `cleanup` and the `close` that stops its timer, from `createPostgresCleanup`. */
export interface PostgresCleanup {
  /** Deletes a batch at a time until one comes back short; resolves with the dedupe rows deleted. One run at a time. */
  cleanup(): Promise<number>;
  /** Stops the periodic cleanup. */
  close(): void;
}

/**
 * The store's cleanup: the dedupe table's `statement`, then the ordering table's, each run until a batch comes back
 * short; every `intervalMs` (0: never) in the background, warning `logger` once per run of failures.
 * @example
 * const bound = createBoundPool({ pool, timeoutMs: 2000 });
 * const { cleanup, close } = createPostgresCleanup({
 *   pool: bound, statement: sql.cleanup, ordering: orderingSql.cleanup, intervalMs: 60_000, logger,
 * });
 */
export function createPostgresCleanup({
  pool: { run, explain },
  statement,
  ordering,
  intervalMs,
  logger,
}: {
  readonly pool: BoundPool;
  readonly statement: string;
  readonly ordering: string;
  readonly intervalMs: number;
  readonly logger: Logger;
}): PostgresCleanup {
  let cleaning: Promise<number> | undefined;
  const cleanup = (): Promise<number> => {
    cleaning ??= (async () => {
      let deleted = 0;
      try {
        for (;;) {
          const { rowCount } = await run(statement);
          deleted += rowCount ?? 0;
          if ((rowCount ?? 0) < CLEANUP_BATCH) break;
        }
        for (;;) {
          const { rowCount } = await run(ordering);
          if ((rowCount ?? 0) < CLEANUP_BATCH) return deleted;
        }
      } catch (error) {
        // A table migrate() never made is said with the fix.
        throw explain(error);
      }
    })().finally(() => {
      cleaning = undefined;
    });
    return cleaning;
  };
  let warned = false;
  const timer =
    intervalMs > 0
      ? setInterval(() => {
          cleanup().then(
            () => {
              warned = false;
            },
            (error: unknown) => {
              // Once per run of failures: the next interval tries again, and deliveries never wait on it.
              if (!warned) logger.warn({ err: error }, 'workforce-webhooks: Postgres store cleanup failed');
              warned = true;
            },
          );
        }, intervalMs)
      : undefined;
  timer?.unref();
  return { cleanup, close: () => clearInterval(timer) };
}
