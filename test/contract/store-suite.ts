// The dedupe store contract (DESIGN "Dedupe"): every store runs these same cases.
import { describe, expect, it } from 'vitest';
import type { DedupeStore, OrderingStore } from 'workforce-webhooks';
import { markOf } from '../../src/ordering-mark.js';

/** A store under test and a way to let time pass for it (an injected clock, or real milliseconds). */
export interface StoreFixture {
  readonly store: DedupeStore;
  /** Lets at least `ms` milliseconds pass as far as the store's leases and TTLs are concerned. */
  elapse(ms: number): Promise<void>;
}

const DAY = 24 * 60 * 60 * 1000;

/**
 * Runs the store contract against the stores `create` makes (one per test).
 * @example
 * runStoreContract('memory', async () => ({ store: createMemoryStore(), elapse: ... }));
 */
export function runStoreContract(name: string, create: () => Promise<StoreFixture>): void {
  // Short leases (real Redis time) with generous margins: only order matters, never speed.
  const lease = 150;
  const id = (): string => crypto.randomUUID();

  describe(`store contract: ${name}`, () => {
    it('claims a new id once; a second claim sees it in progress', async () => {
      const { store } = await create();
      const event = id();
      const first = await store.claim(event, 30_000);
      expect(first.status).toBe('claimed');
      expect(first.status === 'claimed' && first.token.length > 0).toBe(true);
      expect(await store.claim(event, 30_000)).toEqual({ status: 'in_progress' });
      expect((await store.claim(id(), 30_000)).status).toBe('claimed');
    });

    it('marks a claimed id done only for the token that owns it', async () => {
      const { store } = await create();
      const event = id();
      const claim = await store.claim(event, 30_000);
      if (claim.status !== 'claimed') throw new Error('expected a claim');
      expect(await store.complete(event, `${claim.token}x`, DAY)).toBe(false);
      expect(await store.claim(event, 30_000)).toEqual({ status: 'in_progress' });
      expect(await store.complete(event, claim.token, DAY)).toBe(true);
      expect(await store.claim(event, 30_000)).toEqual({ status: 'done' });
      // Done is final: the old token can neither renew, release nor complete it again.
      expect(await store.renew(event, claim.token, 30_000)).toBe(false);
      expect(await store.release(event, claim.token)).toBe(false);
      expect(await store.claim(event, 30_000)).toEqual({ status: 'done' });
    });

    it('releases a claim for its owner only, so a later delivery can take it', async () => {
      const { store } = await create();
      const event = id();
      const claim = await store.claim(event, 30_000);
      if (claim.status !== 'claimed') throw new Error('expected a claim');
      expect(await store.release(event, 'not-the-token')).toBe(false);
      expect(await store.claim(event, 30_000)).toEqual({ status: 'in_progress' });
      expect(await store.release(event, claim.token)).toBe(true);
      const again = await store.claim(event, 30_000);
      expect(again.status).toBe('claimed');
      expect(again.status === 'claimed' && again.token).not.toBe(claim.token);
      expect(await store.release(event, claim.token)).toBe(false);
    });

    it('lets an expired lease be taken over, and the old owner can no longer act', async () => {
      const { store, elapse } = await create();
      const event = id();
      const old = await store.claim(event, lease);
      if (old.status !== 'claimed') throw new Error('expected a claim');
      await elapse(lease * 2);
      const taken = await store.claim(event, 30_000);
      if (taken.status !== 'claimed') throw new Error('expected the lapsed claim to be taken over');
      expect(await store.complete(event, old.token, DAY)).toBe(false);
      expect(await store.renew(event, old.token, 30_000)).toBe(false);
      expect(await store.release(event, old.token)).toBe(false);
      expect(await store.complete(event, taken.token, DAY)).toBe(true);
      expect(await store.claim(event, 30_000)).toEqual({ status: 'done' });
    });

    it("renews its owner's lapsed lease while nobody took the id, and then holds it", async () => {
      const { store, elapse } = await create();
      const event = id();
      const claim = await store.claim(event, lease);
      if (claim.status !== 'claimed') throw new Error('expected a claim');
      await elapse(lease * 2);
      expect(await store.renew(event, claim.token, 30_000)).toBe(true);
      expect(await store.claim(event, 30_000)).toEqual({ status: 'in_progress' });
      expect(await store.renew(event, 'not-the-token', 30_000)).toBe(false);
      expect(await store.complete(event, claim.token, DAY)).toBe(true);
      expect(await store.claim(event, 30_000)).toEqual({ status: 'done' });
    });

    it("marks its owner's lapsed lease done while nobody took the id (a done mark held up past the lease)", async () => {
      const { store, elapse } = await create();
      const event = id();
      const claim = await store.claim(event, lease);
      if (claim.status !== 'claimed') throw new Error('expected a claim');
      await elapse(lease * 2);
      expect(await store.complete(event, claim.token, DAY)).toBe(true);
      expect(await store.claim(event, 30_000)).toEqual({ status: 'done' });
      expect(await store.complete(event, claim.token, DAY)).toBe(false);
    });

    it('keeps a renewed claim past its first lease', async () => {
      const { store, elapse } = await create();
      const event = id();
      const claim = await store.claim(event, lease * 4);
      if (claim.status !== 'claimed') throw new Error('expected a claim');
      await elapse(lease * 2);
      expect(await store.renew(event, claim.token, lease * 4)).toBe(true);
      await elapse(lease * 3); // past the first lease (4), within the renewed one (2 + 4)
      expect(await store.claim(event, 30_000)).toEqual({ status: 'in_progress' });
      expect(await store.renew(event, 'not-the-token', 30_000)).toBe(false);
      expect(await store.complete(event, claim.token, DAY)).toBe(true);
    });

    it('forgets a done id after its TTL', async () => {
      const { store, elapse } = await create();
      const event = id();
      const claim = await store.claim(event, 30_000);
      if (claim.status !== 'claimed') throw new Error('expected a claim');
      expect(await store.complete(event, claim.token, lease)).toBe(true);
      expect(await store.claim(event, 30_000)).toEqual({ status: 'done' });
      await elapse(lease * 2);
      expect((await store.claim(event, 30_000)).status).toBe('claimed');
    });

    it('gives exactly one of many concurrent claims of one id', async () => {
      const { store } = await create();
      const event = id();
      const results = await Promise.all(Array.from({ length: 50 }, () => store.claim(event, 30_000)));
      expect(results.filter((r) => r.status === 'claimed')).toHaveLength(1);
      expect(results.filter((r) => r.status === 'in_progress')).toHaveLength(49);
    });

    it('keeps ids apart', async () => {
      const { store } = await create();
      const ids = Array.from({ length: 20 }, id);
      const claims = await Promise.all(ids.map((each) => store.claim(each, 30_000)));
      expect(claims.every((c) => c.status === 'claimed')).toBe(true);
      await Promise.all(
        ids.map((each, i) => {
          const claim = claims[i]!;
          return i % 2 === 0 && claim.status === 'claimed'
            ? store.complete(each, claim.token, DAY)
            : undefined;
        }),
      );
      const after = await Promise.all(ids.map((each) => store.claim(each, 30_000)));
      expect(after.map((c) => c.status)).toEqual(ids.map((_, i) => (i % 2 === 0 ? 'done' : 'in_progress')));
    });

    describe('ordering (spec rule 4): the per-key lease and watermark', () => {
      const ordering = (store: DedupeStore): OrderingStore => {
        if (store.ordering === undefined) throw new Error('the store has no ordering');
        return store.ordering;
      };
      const mark = (second: number, eventId = id()): string =>
        markOf({ id: eventId, occurredAt: `2026-11-02T08:00:${String(second).padStart(2, '0')}.000001Z` })!;

      it('gives a key to one owner at a time; its owner renews it, another waits for it', async () => {
        const { store } = await create();
        const keys = ordering(store);
        const key = id();
        expect(await keys.enter(key, 'a', 30_000)).toEqual({ status: 'entered', watermark: undefined });
        const busy = await keys.enter(key, 'b', 30_000);
        expect(busy.status).toBe('busy');
        expect(busy.status === 'busy' && busy.retryInMs > 0 && busy.retryInMs <= 30_001).toBe(true);
        expect((await keys.enter(key, 'a', 30_000)).status).toBe('entered');
        expect((await keys.enter(id(), 'b', 30_000)).status).toBe('entered');
        expect(await keys.leave(key, 'b', undefined, DAY)).toBe(false);
        expect(await keys.leave(key, 'a', undefined, DAY)).toBe(true);
        expect((await keys.enter(key, 'b', 30_000)).status).toBe('entered');
      });

      it('takes a record key of any length (4 000 characters here) as any other, one owner at a time', async () => {
        const { store } = await create();
        const keys = ordering(store);
        const key = `${id()}:${'x'.repeat(4_000)}`;
        const other = `${key.slice(0, -1)}y`;
        expect((await keys.enter(key, 'a', 30_000)).status).toBe('entered');
        expect((await keys.enter(key, 'b', 30_000)).status).toBe('busy');
        expect((await keys.enter(other, 'b', 30_000)).status).toBe('entered');
        expect(await keys.hold(key, 'a', 30_000)).toBe(true);
        const newer = mark(2);
        expect(await keys.leave(key, 'a', newer, DAY)).toBe(true);
        expect(await keys.watermark(key)).toBe(newer);
        expect(await keys.watermark(other)).toBeUndefined();
        expect(await store.claim(id(), 30_000, key)).toEqual({
          status: 'claimed',
          token: expect.any(String),
          watermark: newer,
        });
      });

      it('lets a key whose lease lapsed (a crashed owner) be taken', async () => {
        const { store, elapse } = await create();
        const keys = ordering(store);
        const key = id();
        await keys.enter(key, 'crashed', lease);
        await elapse(lease * 2);
        expect((await keys.enter(key, 'next', 30_000)).status).toBe('entered');
        expect(await keys.leave(key, 'crashed', mark(1), DAY)).toBe(false);
      });

      it('moves the watermark only forward, and hands it out with the key and with a claim', async () => {
        const { store } = await create();
        const keys = ordering(store);
        const key = id();
        const [older, newer] = [mark(1), mark(2)];
        await keys.enter(key, 'a', 30_000);
        await keys.leave(key, 'a', newer, DAY);
        expect(await keys.watermark(key)).toBe(newer);
        await keys.enter(key, 'b', 30_000);
        await keys.leave(key, 'b', older, DAY);
        expect(await keys.watermark(key)).toBe(newer);
        expect(await keys.enter(key, 'c', 30_000)).toEqual({ status: 'entered', watermark: newer });
        const claim = await store.claim(id(), 30_000, key);
        expect(claim).toEqual({ status: 'claimed', token: expect.any(String), watermark: newer });
        const none = await store.claim(id(), 30_000, id());
        expect(none.status === 'claimed' && none.watermark).toBeUndefined();
      });

      it('breaks ties of occurredAt by event id', async () => {
        const { store } = await create();
        const keys = ordering(store);
        const key = id();
        const first = mark(3, '00000000-0000-4000-8000-000000000001');
        const second = mark(3, '00000000-0000-4000-8000-000000000002');
        await keys.leave(key, 'x', second, DAY);
        await keys.leave(key, 'x', first, DAY);
        expect(await keys.watermark(key)).toBe(second);
      });

      it('keeps a failing owner on hold only until maxWaitMs after it first entered', async () => {
        const { store, elapse } = await create();
        const keys = ordering(store);
        const key = id();
        await keys.enter(key, 'failing', 30_000);
        expect(await keys.hold(key, 'failing', lease)).toBe(true);
        expect(await keys.hold(key, 'other', lease)).toBe(false);
        expect((await keys.enter(key, 'newer', 30_000)).status).toBe('busy');
        await elapse(lease * 2);
        expect((await keys.enter(key, 'newer', 30_000)).status).toBe('entered');
      });

      it('keeps the first entry of an owner retried after its hold lapsed; another owner starts its own', async () => {
        const { store, elapse } = await create();
        const keys = ordering(store);
        const key = id();
        await keys.enter(key, 'failing', 30_000);
        expect(await keys.hold(key, 'failing', lease)).toBe(true);
        const busy = await keys.enter(key, 'newer', 30_000);
        expect(busy.status === 'busy' && busy.retryInMs > 0 && busy.retryInMs <= lease + 1).toBe(true);
        // Its retry comes after the hold lapsed (a backoff longer than maxWaitMs), and fails again.
        await elapse(lease * 2);
        expect((await keys.enter(key, 'failing', 30_000)).status).toBe('entered');
        expect(await keys.hold(key, 'failing', lease)).toBe(true);
        // It first ran more than maxWaitMs ago: a newer event goes ahead at once, and holds the key from its own
        // first entry when it fails.
        expect((await keys.enter(key, 'newer', 30_000)).status).toBe('entered');
        expect(await keys.hold(key, 'failing', lease)).toBe(false);
        expect(await keys.hold(key, 'newer', lease)).toBe(true);
        expect((await keys.enter(key, 'newest', 30_000)).status).toBe('busy');
        expect(await keys.leave(key, 'failing', undefined, DAY)).toBe(false);
        expect(await keys.leave(key, 'newer', undefined, DAY)).toBe(true);
        expect((await keys.enter(key, 'newest', 30_000)).status).toBe('entered');
      });

      it('forgets a watermark after its TTL', async () => {
        const { store, elapse } = await create();
        const keys = ordering(store);
        const key = id();
        await keys.leave(key, 'a', mark(1), lease);
        expect(await keys.watermark(key)).toBeDefined();
        await elapse(lease * 2);
        expect(await keys.watermark(key)).toBeUndefined();
      });
    });
  });
}
