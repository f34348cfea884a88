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

      // Each run of an event (an attempt, on some instance) holds the key as its own: a retry waits for handlers of
      // an earlier attempt that outlived its time limit, and that attempt, settling late, leaves the retry's lease be.
      it("keeps a key for the owner's run that has it: the owner's next run waits while that lease is live", async () => {
        const { store } = await create();
        const keys = ordering(store);
        const key = id();
        expect(await keys.enter(key, 'event', 30_000, 'run-1')).toEqual({
          status: 'entered',
          watermark: undefined,
        });
        const busy = await keys.enter(key, 'event', 30_000, 'run-2');
        expect(busy.status === 'busy' && busy.retryInMs > 0 && busy.retryInMs <= 30_001).toBe(true);
        expect((await keys.enter(key, 'event', 30_000, 'run-1')).status).toBe('entered'); // its renewal
        expect(await keys.hold(key, 'event', 30_000, 'run-2')).toBe(false);
        expect(await keys.leave(key, 'event', undefined, DAY, 'run-2')).toBe(false);
        expect((await keys.enter(key, 'newer', 30_000, 'run-3')).status).toBe('busy');
        expect(await keys.leave(key, 'event', undefined, DAY, 'run-1')).toBe(true);
        expect((await keys.enter(key, 'event', 30_000, 'run-2')).status).toBe('entered');
      });

      it("gives a held key to the owner's next run, which keeps the first entry (the hold's maxWaitMs bound)", async () => {
        const { store, elapse } = await create();
        const keys = ordering(store);
        const key = id();
        await keys.enter(key, 'failing', 30_000, 'run-1');
        expect(await keys.hold(key, 'failing', lease * 3, 'run-1')).toBe(true);
        await elapse(lease * 2);
        expect((await keys.enter(key, 'newer', 30_000, 'run-3')).status).toBe('busy');
        // The retry takes the hold, and fails too: its hold still ends maxWaitMs after the first run entered.
        expect((await keys.enter(key, 'failing', 30_000, 'run-2')).status).toBe('entered');
        expect((await keys.enter(key, 'newer', 30_000, 'run-3')).status).toBe('busy');
        expect(await keys.hold(key, 'failing', lease * 3, 'run-1')).toBe(false);
        expect(await keys.hold(key, 'failing', lease * 3, 'run-2')).toBe(true);
        expect((await keys.enter(key, 'newer', 30_000, 'run-3')).status).toBe('busy');
        await elapse(lease * 2); // past the first entry's bound (3), not the retry's own (2 + 3)
        expect((await keys.enter(key, 'newer', 30_000, 'run-3')).status).toBe('entered');
      });

      it("gives a lapsed lease to the owner's next run; the lapsed run, settling late, leaves it be", async () => {
        const { store, elapse } = await create();
        const keys = ordering(store);
        const key = id();
        const late = mark(1);
        await keys.enter(key, 'event', lease, 'run-1');
        await elapse(lease * 2); // its renewals stopped (handlers far past their time limit, or a dead process)
        expect((await keys.enter(key, 'event', 30_000, 'run-2')).status).toBe('entered');
        // The first run's handlers settle: failed, its hold (of 1 ms) would free the key; succeeded, its leave would.
        expect(await keys.hold(key, 'event', 1, 'run-1')).toBe(false);
        expect(await keys.leave(key, 'event', late, DAY, 'run-1')).toBe(false);
        expect(await keys.watermark(key)).toBe(late); // its handlers all succeeded: the watermark moves as ever
        await elapse(lease);
        const busy = await keys.enter(key, 'newer', 30_000, 'run-3');
        expect(busy.status === 'busy' && busy.retryInMs > lease).toBe(true);
        expect(await keys.leave(key, 'event', late, DAY, 'run-2')).toBe(true);
        expect(await keys.enter(key, 'newer', 30_000, 'run-3')).toEqual({
          status: 'entered',
          watermark: late,
        });
      });

      it('gives the key up to a leave without a run (a dead letter), whatever run held it last', async () => {
        const { store } = await create();
        const keys = ordering(store);
        const [held, running] = [id(), id()];
        await keys.enter(held, 'dead', 30_000, 'run-1');
        expect(await keys.hold(held, 'dead', DAY, 'run-1')).toBe(true);
        expect((await keys.enter(held, 'newer', 30_000, 'run-2')).status).toBe('busy');
        expect(await keys.leave(held, 'other', undefined, DAY)).toBe(false);
        expect(await keys.leave(held, 'dead', undefined, DAY)).toBe(true);
        expect((await keys.enter(held, 'newer', 30_000, 'run-2')).status).toBe('entered');
        await keys.enter(running, 'dead', 30_000, 'run-1');
        expect(await keys.leave(running, 'dead', undefined, DAY)).toBe(true);
        expect((await keys.enter(running, 'newer', 30_000, 'run-2')).status).toBe('entered');
      });

      // `renew` only extends the lease a run still has: a renewal that arrives late (after its run left or held the
      // key, or after another event took the lapsed key) never takes the key back.
      const renewOf = (keys: OrderingStore) => (key: string, owner: string, run: string, leaseMs: number) =>
        keys.renew(key, owner, run, leaseMs);

      it("renews its run's lease past its first end, and its lapsed lease while nobody took the key", async () => {
        const { store, elapse } = await create();
        const keys = ordering(store);
        const renew = renewOf(keys);
        const key = id();
        await keys.enter(key, 'event', lease, 'run-1');
        await elapse(lease / 2);
        expect(await renew(key, 'event', 'run-1', lease * 4)).toBe(true);
        await elapse(lease);
        expect((await keys.enter(key, 'newer', 30_000, 'run-2')).status).toBe('busy');
        await elapse(lease * 4); // its renewals stopped a while (a busy event loop): lapsed, but nobody took it
        expect(await renew(key, 'event', 'run-1', 30_000)).toBe(true);
        expect((await keys.enter(key, 'newer', 30_000, 'run-2')).status).toBe('busy');
        expect(await keys.leave(key, 'event', undefined, DAY, 'run-1')).toBe(true);
      });

      it('renews no free key, hold, or lease of another run or owner, and takes none of them', async () => {
        const { store } = await create();
        const keys = ordering(store);
        const renew = renewOf(keys);
        const key = id();
        expect(await renew(key, 'event', 'run-1', 30_000)).toBe(false); // never entered
        expect((await keys.enter(key, 'newer', 30_000, 'run-3')).status).toBe('entered');
        expect(await keys.leave(key, 'newer', undefined, DAY, 'run-3')).toBe(true);
        await keys.enter(key, 'event', 30_000, 'run-1');
        expect(await renew(key, 'event', 'run-2', 30_000)).toBe(false); // another run of the owner
        expect(await renew(key, 'other', 'run-1', 30_000)).toBe(false); // another owner
        expect(await keys.hold(key, 'event', DAY, 'run-1')).toBe(true);
        expect(await renew(key, 'event', 'run-1', 30_000)).toBe(false); // its own hold, after the run failed
        expect((await keys.enter(key, 'event', 30_000, 'run-2')).status).toBe('entered'); // the retry takes it
        expect(await keys.leave(key, 'event', undefined, DAY, 'run-2')).toBe(true);
        expect(await renew(key, 'event', 'run-2', 30_000)).toBe(false); // a free key, after the run left
        expect((await keys.enter(key, 'newer', 30_000, 'run-3')).status).toBe('entered');
      });

      it('renews no lease that lapsed and was taken by another event, even once that event gave the key up', async () => {
        const { store, elapse } = await create();
        const keys = ordering(store);
        const renew = renewOf(keys);
        const key = id();
        await keys.enter(key, 'older', lease, 'run-1');
        await elapse(lease * 2);
        expect((await keys.enter(key, 'newer', 30_000, 'run-2')).status).toBe('entered');
        expect(await renew(key, 'older', 'run-1', 30_000)).toBe(false);
        expect(await keys.leave(key, 'newer', mark(2), DAY, 'run-2')).toBe(true);
        expect(await renew(key, 'older', 'run-1', 30_000)).toBe(false);
        expect((await keys.enter(key, 'newest', 30_000, 'run-3')).status).toBe('entered');
      });

      it('takes record keys with braces (a closing one first, an opening one alone) as any other', async () => {
        const { store } = await create();
        const keys = ordering(store);
        for (const key of [`}${id()}`, `{${id()}`, `${id()}}{x}`]) {
          const done = mark(3);
          expect((await keys.enter(key, 'event', 30_000, 'run-1')).status).toBe('entered');
          expect((await keys.enter(key, 'newer', 30_000, 'run-2')).status).toBe('busy');
          expect(await renewOf(keys)(key, 'event', 'run-1', 30_000)).toBe(true);
          expect(await keys.hold(key, 'event', 30_000, 'run-1')).toBe(true);
          expect(await keys.leave(key, 'event', done, DAY)).toBe(true);
          expect(await keys.watermark(key)).toBe(done);
          expect(await keys.enter(key, 'newer', 30_000, 'run-2')).toEqual({
            status: 'entered',
            watermark: done,
          });
          expect(await store.claim(id(), 30_000, key)).toEqual({
            status: 'claimed',
            token: expect.any(String),
            watermark: done,
          });
        }
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
