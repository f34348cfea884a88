// The memory store's packed table against a plain model of its rules, over long random runs of every operation.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from 'workforce-webhooks';

// The rules, written plainly: the last `max` claims in a ring, a lease or done mark live up to its last ms.
class Model {
  readonly #slots: ({ id: string; token: string | undefined; expires: number } | undefined)[];
  readonly #byId = new Map<string, number>();
  #cursor = 0;

  constructor(readonly max: number) {
    this.#slots = Array.from({ length: max }, () => undefined);
  }

  #live(id: string, at: number, token?: string): number | undefined {
    const slot = this.#byId.get(id);
    if (slot === undefined) return undefined;
    const entry = this.#slots[slot]!;
    if (entry.expires < at) return undefined;
    if (token !== undefined && entry.token !== token) return undefined;
    return slot;
  }

  #forget(slot: number): void {
    const entry = this.#slots[slot];
    if (entry === undefined) return;
    this.#byId.delete(entry.id);
    this.#slots[slot] = undefined;
  }

  claim(id: string, at: number, leaseMs: number, token: string): string {
    const found = this.#byId.get(id);
    if (found !== undefined) {
      const entry = this.#slots[found]!;
      if (entry.expires >= at) return entry.token === undefined ? 'done' : 'in_progress';
      this.#forget(found);
    }
    const slot = this.#cursor;
    this.#forget(slot);
    this.#slots[slot] = { id, token, expires: at + leaseMs };
    this.#byId.set(id, slot);
    this.#cursor = (slot + 1) % this.max;
    return 'claimed';
  }

  complete(id: string, token: string, at: number, ttlMs: number): boolean {
    const slot = this.#live(id, at, token);
    if (slot === undefined) return false;
    this.#slots[slot] = { id, token: undefined, expires: at + ttlMs };
    return true;
  }

  renew(id: string, token: string, at: number, leaseMs: number): boolean {
    const slot = this.#live(id, at, token);
    if (slot === undefined) return false;
    this.#slots[slot]!.expires = at + leaseMs;
    return true;
  }

  release(id: string, token: string, at: number): boolean {
    const slot = this.#live(id, at, token);
    if (slot === undefined) return false;
    this.#forget(slot);
    return true;
  }
}

// A small seeded generator, so a failing run can be replayed.
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

// Lower-case uuids (packed), the same upper-cased (kept as strings, distinct ids), and other strings.
function idPool(size: number): string[] {
  const ids: string[] = [];
  for (let i = 0; i < size; i++) {
    const uuid = randomUUID();
    ids.push(uuid);
    if (i % 5 === 0) ids.push(uuid.toUpperCase());
    if (i % 7 === 0) ids.push(`evt-${i}`, `${uuid}x`, '');
  }
  return ids;
}

async function compareRun(max: number, operations: number, seed: number): Promise<number> {
  const next = random(seed);
  let clock = 1_000_000;
  const store = createMemoryStore({ max, now: () => clock });
  const model = new Model(max);
  const ids = idPool(Math.max(8, Math.floor(max * 1.5)));
  const tokens = new Map<string, string>();
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  let checked = 0;
  for (let op = 0; op < operations; op++) {
    const id = pick(ids);
    const kind = next();
    if (next() < 0.2) clock += Math.floor(next() * 40);
    const at = clock;
    if (kind < 0.5) {
      const claim = await store.claim(id, 30);
      const token = claim.status === 'claimed' ? claim.token : '';
      expect([op, claim.status]).toEqual([op, model.claim(id, at, 30, token)]);
      if (claim.status === 'claimed') tokens.set(id, claim.token);
    } else {
      // The live token most of the time, else a stale or forged one.
      const token = next() < 0.8 ? (tokens.get(id) ?? '1') : pick(['0', '01', '1x', `${op}`, '']);
      if (kind < 0.75) {
        expect([op, await store.complete(id, token, 50)]).toEqual([op, model.complete(id, token, at, 50)]);
      } else if (kind < 0.9) {
        expect([op, await store.renew(id, token, 30)]).toEqual([op, model.renew(id, token, at, 30)]);
      } else {
        expect([op, await store.release(id, token)]).toEqual([op, model.release(id, token, at)]);
      }
    }
    checked++;
  }
  return checked;
}

describe('memory store table', () => {
  it('answers as the model does in a tiny table, where every probe collides', async () => {
    expect(await compareRun(7, 20_000, 1)).toBe(20_000);
  });

  it('answers as the model does while it grows past its first slots and wraps around', async () => {
    expect(await compareRun(3000, 30_000, 2)).toBe(30_000);
  });

  it('tells apart ids one character apart, and a uuid from its upper-case form', async () => {
    const store = createMemoryStore();
    const id = '0b5e8a52-6f7d-4a43-9b0e-4d3c2b1a0f9e';
    const near = '0b5e8a52-6f7d-4a43-9b0e-4d3c2b1a0f9f';
    expect((await store.claim(id, 30_000)).status).toBe('claimed');
    expect((await store.claim(near, 30_000)).status).toBe('claimed');
    expect((await store.claim(id.toUpperCase(), 30_000)).status).toBe('claimed');
    expect((await store.claim(id, 30_000)).status).toBe('in_progress');
    expect((await store.claim(id.toUpperCase(), 30_000)).status).toBe('in_progress');
  });
});
