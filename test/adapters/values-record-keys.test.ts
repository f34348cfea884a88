// Record keys that are different strings are different records on every store (spec rule 4): lone surrogates, which
// have no UTF-8 form, keys shaped like a store's own hashed form of another key, separators, a megabyte.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMemoryStore, type DedupeStore, type OrderingStore } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createRedisStore } from 'workforce-webhooks/redis';
import { markOf } from '../../src/ordering-mark.js';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';

const DAY = 24 * 60 * 60 * 1000;
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const long = `${'x'.repeat(700)}-leave-request`;
const withNul = 'employee:ann\u0000smith';
const megabyte = 'k'.repeat(1024 * 1024);

// Pairs of different keys: each must be its own record. Several pairs encode to the same UTF-8 bytes (a lone
// surrogate becomes U+FFFD), or spell the hashed form a store keeps of the other key.
const pairs: readonly (readonly [string, string])[] = [
  ['\uD800', '\uD801'],
  ['\uD800', '\uFFFD'],
  ['lr-\uDC00', 'lr-\uDC01'],
  ['\uD83D}', '\uD83E}'],
  [`${'\uD800'.repeat(700)}`, `${'\uD801'.repeat(700)}`],
  [long, `sha256:${sha256(long)}`],
  [withNul, `sha256:${sha256(withNul)}`],
  ['__proto__', 'constructor'],
  ['lease:{a}', 'mark:{a}'],
  ['a:b', 'a'],
  [megabyte, `${megabyte.slice(0, -1)}j`],
];

const stores: readonly (readonly [string, boolean, () => Promise<DedupeStore>])[] = [
  ['memory', true, async () => createMemoryStore()],
  [
    'redis',
    Boolean(redisUrl),
    async () => createRedisStore({ client: connectRedis(), prefix: `${uniqueName('values-keys')}:` }),
  ],
  [
    'postgres',
    Boolean(postgresUrl),
    async () => {
      const store = createPostgresStore({
        pool: connectPostgres(),
        table: uniqueTable('values_keys'),
        cleanupIntervalMs: 0,
      });
      await store.migrate();
      return store;
    },
  ],
];

const orderingOf = (store: DedupeStore): OrderingStore => {
  if (store.ordering === undefined) throw new Error('the store has no ordering');
  return store.ordering;
};

const label = (key: string): string =>
  JSON.stringify(key.length > 40 ? `${key.slice(0, 12)}…(${key.length})` : key);

for (const [name, available, create] of stores) {
  describe.skipIf(!available)(`record keys on the ${name} store`, () => {
    it.each(pairs.map(([a, b]) => [label(a), label(b), a, b] as const))(
      'keeps %s and %s apart: neither lease nor watermark of one reaches the other',
      async (_a, _b, first, second) => {
        const store = await create();
        const keys = orderingOf(store);
        const newer = markOf({ id: crypto.randomUUID(), occurredAt: '2026-11-24T10:00:05.000001Z' })!;
        expect(await keys.enter(first, 'first-event', 30_000, 'run-1')).toEqual({
          status: 'entered',
          watermark: undefined,
        });
        // Another record's event is not kept waiting behind the first one's lease.
        expect(await keys.enter(second, 'second-event', 30_000, 'run-2')).toEqual({
          status: 'entered',
          watermark: undefined,
        });
        // The second record's newer event, done, moves its own watermark only.
        expect(await keys.leave(second, 'second-event', newer, DAY, 'run-2')).toBe(true);
        expect(await keys.watermark(second)).toBe(newer);
        expect(await keys.watermark(first)).toBeUndefined();
        const claim = await store.claim(crypto.randomUUID(), 30_000, first);
        expect(claim.status === 'claimed' && claim.watermark).toBeUndefined();
        // The first record's lease is still its own event's.
        expect((await keys.enter(first, 'third-event', 30_000, 'run-3')).status).toBe('busy');
        expect(await keys.leave(first, 'first-event', undefined, DAY, 'run-1')).toBe(true);
      },
      120_000,
    );
  });
}
