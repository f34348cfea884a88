// Whether `--redis` is a read-only replica: BullMQ's writes there fail, and a replay or discard can do nothing.
import { ADMIN_TIMEOUT_MS } from '../adapters/bullmq-admin.js';
import { openRedis, quitWithin } from '../adapters/bullmq-connections.js';
import { withDeadline } from '../src/deadline.js';
import { UsageError } from './io.js';

/**
 * Rejects with a `UsageError` naming the primary when the Redis at `redis` is a replica, and with `queue_unavailable`
 * when it leaves the question unanswered for `ADMIN_TIMEOUT_MS`; any other failure is left to the queue's calls.
 * @example
 * await refuseReplica('redis://127.0.0.1:6379');
 */
export async function refuseReplica(redis: string): Promise<void> {
  const client = openRedis(redis, { enableOfflineQueue: true, maxRetriesPerRequest: 1, lazyConnect: true });
  let role: unknown;
  try {
    role = await withDeadline(() => client.call('ROLE'), ADMIN_TIMEOUT_MS, 'queue_unavailable');
  } catch (error) {
    // Silent past the deadline: said as the queue says it. Refused (no server, a login, an ACL without ROLE): the
    // queue's own calls say why, or do their work on a primary.
    if ((error as { code?: unknown }).code === 'queue_unavailable') throw error;
    return;
  } finally {
    await quitWithin(client, 1000);
  }
  if (!Array.isArray(role) || (role[0] !== 'slave' && role[0] !== 'replica')) return;
  const [, host, port] = role as [string, unknown, unknown];
  throw new UsageError(
    `Redis at --redis is a read-only replica of ${String(host)}:${String(port)}: give --redis the primary's URL (the one the app's createBullmqQueue uses)`,
  );
}
