// Why a Postgres store call found no connection of the user's pg pool in time, said once each with the fix.
import type { Pool } from 'pg';
import type { Logger } from '../src/logger.js';

/**
 * What says, once each, why a store call found no connection of a `pg.Pool` in time, with the fix: every connection
 * held by the store's own transactions (a pool no larger than the events that run at once), or a pool with no
 * `connectionTimeoutMillis` (a silent host keeps its connects for minutes); undefined for a pool-like object.
 * @example
 * const late = poolDiagnosis(pool, logger, () => held); // called when a call waited past its deadline
 */
export function poolDiagnosis(pool: Pool, logger: Logger, held: () => number): (() => void) | undefined {
  // pg's Pool keeps its options there (`max` filled in); a pool-like object without them is left alone.
  const { options } = pool as { options?: { connectionTimeoutMillis?: unknown; max?: unknown } };
  if (options === undefined) return undefined;
  const max = typeof options.max === 'number' ? options.max : 10;
  const bound = options.connectionTimeoutMillis;
  // A host that drops packets (a firewall, a failover) leaves pg's connects to it waiting for the operating system's
  // connect timeout (about 2 minutes on Linux), or for ever once accepted, each holding a place of the pool: the
  // store's deadline answers 503 meanwhile, but the pool serves nothing till they give up, Postgres back or not.
  let toldConnects = typeof bound === 'number' && bound > 0;
  // Handlers' transactions holding every connection: the claims and the lease renewals of the running events wait
  // for one, and a lease that cannot be renewed stops its handlers, which looks like a store outage and is not.
  let toldFull = false;
  return () => {
    if (held() >= max) {
      if (toldFull) return;
      toldFull = true;
      logger.warn(
        { max },
        `workforce-webhooks: every connection of the pg pool (max ${max}) is held by a running handler's ctx.transaction(), so the store's claims and lease renewals wait for one and fail; give the pool more connections than the events that run at once (the queue's concurrency, or in inline mode the deliveries in flight): new pg.Pool({ ..., max: ${max * 2} })`,
      );
      return;
    }
    if (toldConnects) return;
    toldConnects = true;
    logger.warn(
      {},
      'workforce-webhooks: a Postgres store call got no answer in time, and the pg pool has no connectionTimeoutMillis: a host that stops answering (a firewall, a failover) then holds its connects, and every call waiting on them, for minutes, so deliveries get 503 long after Postgres is back; give the pool connectionTimeoutMillis (new pg.Pool({ ..., connectionTimeoutMillis: 5000 }))',
    );
  };
}
