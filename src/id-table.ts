// The memory store's table: the ids of the last `max` claims in a ring of slots, found through a hash index.
//
// A slot is 32 bytes of one ArrayBuffer: the id, its hash, the claim token (0 once done) and the expiry. An id
// that is a lower-case uuid (every event id the service sends) is kept as four 32-bit words and its string is not
// retained; any other id is kept as the string itself, beside the slot. So the table holds no object per id: the
// garbage collector has nothing to copy or mark as it fills, and an id costs about 50 bytes, not a Map entry, an
// entry object and the id string (about 200).
//
// The ring gives the order: claim n takes slot n mod max, and forgets what that slot held, the id claimed max
// claims ago. The index is open addressing with linear probing, at most half full, each entry the full hash and
// the slot, so a probe reads no slot until the hashes match, and a removal shifts entries back instead of leaving
// tombstones. Ids are signed by the sender, so nobody can choose them to collide.

const FREE = 0;
const UUID_KEY = 1;
const STRING_KEY = 2;

// Int32 fields of a slot: the uuid's words at 0–3, then the hash and the token; the expiry is the float64 at 24.
const STRIDE = 8;
const HASH = 4;
const TOKEN = 5;
const EXPIRES = 3; // in float64s

/** The most slots a table holds. */
export const MAX_SLOTS: number = 2 ** 24;
const FIRST_CAPACITY = 1024;

// Lower-case hex digit values; -1 for anything else (an upper-case uuid is kept as a string, as it was sent).
const HEX = new Int8Array(128).fill(-1);
for (let c = 48; c <= 57; c++) HEX[c] = c - 48;
for (let c = 97; c <= 102; c++) HEX[c] = c - 87;

function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * A fixed-order table of ids: `find` an id, then `insert` it (into the next slot of the ring) if it was absent.
 * Not safe across an await between the two: they share the looked-up id's parsed form.
 * @example
 * const table = new IdTable(100_000); if (table.find(id) === -1) table.insert(token, expires);
 */
export class IdTable {
  readonly #max: number;
  #capacity: number;
  #ints: Int32Array;
  #floats: Float64Array;
  #kinds: Uint8Array;
  readonly #strings = new Map<number, string>();
  // Pairs of (hash, slot + 1); slot + 1 of 0 is a free entry.
  #index: Int32Array;
  #mask: number;
  #cursor = 0;
  // The id of the last `find`, and its parsed form.
  #string: string | undefined;
  readonly #words = new Int32Array(4);
  #kind = FREE;
  #hash = 0;

  constructor(max: number) {
    this.#max = max;
    this.#capacity = Math.min(max, FIRST_CAPACITY);
    const buffer = new ArrayBuffer(this.#capacity * STRIDE * 4);
    this.#ints = new Int32Array(buffer);
    this.#floats = new Float64Array(buffer);
    this.#kinds = new Uint8Array(this.#capacity);
    const entries = indexSize(this.#capacity);
    this.#index = new Int32Array(entries * 2);
    this.#mask = entries - 1;
  }

  /** The slot holding `id`, or -1. */
  find(id: string): number {
    // A queued delivery's claim and done mark look up the same id back to back: parse and hash it once.
    if (id !== this.#string) {
      this.#string = id;
      const words = this.#words;
      if (parseUuid(id, words)) {
        this.#kind = UUID_KEY;
        this.#hash = mix(mix(mix(mix(words[0]!) ^ words[1]!) ^ words[2]!) ^ words[3]!);
      } else {
        this.#kind = STRING_KEY;
        this.#hash = hashString(id);
      }
    }
    const hash = this.#hash;
    const index = this.#index;
    const mask = this.#mask;
    for (let at = hash & mask; ; at = (at + 1) & mask) {
      const slot = index[2 * at + 1]! - 1;
      if (slot === -1) return -1;
      if (index[2 * at] === hash && this.#holds(slot, id)) return slot;
    }
  }

  #holds(slot: number, id: string): boolean {
    const kind = this.#kinds[slot];
    if (kind !== this.#kind) return false;
    if (kind === STRING_KEY) return this.#strings.get(slot) === id;
    const ints = this.#ints;
    const words = this.#words;
    const base = slot * STRIDE;
    return (
      ints[base] === words[0] &&
      ints[base + 1] === words[1] &&
      ints[base + 2] === words[2] &&
      ints[base + 3] === words[3]
    );
  }

  /**
   * Puts the id of the last `find` (which must have answered -1) in the next slot of the ring, forgetting the id
   * that slot held.
   */
  insert(token: number, expires: number): void {
    const slot = this.#cursor;
    if (slot === this.#capacity) this.#grow();
    if (this.#kinds[slot] !== FREE) this.remove(slot);
    this.#cursor = slot + 1 === this.#max ? 0 : slot + 1;
    const kind = this.#kind;
    this.#kinds[slot] = kind;
    const ints = this.#ints;
    const base = slot * STRIDE;
    if (kind === UUID_KEY) {
      const words = this.#words;
      ints[base] = words[0]!;
      ints[base + 1] = words[1]!;
      ints[base + 2] = words[2]!;
      ints[base + 3] = words[3]!;
    } else this.#strings.set(slot, this.#string!);
    ints[base + HASH] = this.#hash;
    ints[base + TOKEN] = token;
    this.#floats[slot * (STRIDE / 2) + EXPIRES] = expires;
    this.#link(slot, this.#hash);
  }

  /** Forgets the id in `slot`. */
  remove(slot: number): void {
    const index = this.#index;
    const mask = this.#mask;
    let hole = this.#ints[slot * STRIDE + HASH]! & mask;
    while (index[2 * hole + 1] !== slot + 1) hole = (hole + 1) & mask;
    // Backward shift: an entry further on moves into the hole unless the hole lies before its home position.
    for (let at = (hole + 1) & mask; index[2 * at + 1] !== 0; at = (at + 1) & mask) {
      const home = index[2 * at]! & mask;
      if (((at - home) & mask) >= ((at - hole) & mask)) {
        index[2 * hole] = index[2 * at]!;
        index[2 * hole + 1] = index[2 * at + 1]!;
        hole = at;
      }
    }
    index[2 * hole] = 0;
    index[2 * hole + 1] = 0;
    if (this.#kinds[slot] === STRING_KEY) this.#strings.delete(slot);
    this.#kinds[slot] = FREE;
  }

  /** The claim token in `slot`, 0 once the id is done. */
  token(slot: number): number {
    return this.#ints[slot * STRIDE + TOKEN]!;
  }

  /** When `slot`'s lease or done mark ends (ms, inclusive). */
  expires(slot: number): number {
    return this.#floats[slot * (STRIDE / 2) + EXPIRES]!;
  }

  /** Sets `slot`'s token (0: done) and expiry. */
  set(slot: number, token: number, expires: number): void {
    this.#ints[slot * STRIDE + TOKEN] = token;
    this.#floats[slot * (STRIDE / 2) + EXPIRES] = expires;
  }

  #link(slot: number, hash: number): void {
    const index = this.#index;
    const mask = this.#mask;
    let at = hash & mask;
    while (index[2 * at + 1] !== 0) at = (at + 1) & mask;
    index[2 * at] = hash;
    index[2 * at + 1] = slot + 1;
  }

  // The first lap of the ring fills slots in order, so the table grows as it fills instead of holding `max`
  // slots from the start; the index is rebuilt when it would pass half full.
  #grow(): void {
    const capacity = Math.min(this.#max, this.#capacity * 2);
    const buffer = new ArrayBuffer(capacity * STRIDE * 4);
    new Int32Array(buffer).set(this.#ints);
    this.#ints = new Int32Array(buffer);
    this.#floats = new Float64Array(buffer);
    const kinds = new Uint8Array(capacity);
    kinds.set(this.#kinds);
    this.#kinds = kinds;
    const entries = indexSize(capacity);
    if (entries * 2 > this.#index.length) {
      this.#index = new Int32Array(entries * 2);
      this.#mask = entries - 1;
      for (let slot = 0; slot < this.#capacity; slot++) {
        if (kinds[slot] !== FREE) this.#link(slot, this.#ints[slot * STRIDE + HASH]!);
      }
    }
    this.#capacity = capacity;
  }
}

// Index entries for `slots`: a power of two at least twice as many.
function indexSize(slots: number): number {
  let size = 16;
  while (size < slots * 2) size *= 2;
  return size;
}

// A lower-case, hyphenated uuid into four 32-bit words; false for anything else.
function parseUuid(id: string, words: Int32Array): boolean {
  if (id.length !== 36) return false;
  let word = 0;
  let digits = 0;
  let value = 0;
  for (let i = 0; i < 36; i++) {
    const c = id.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 45) return false;
      continue;
    }
    const digit = c < 128 ? HEX[c]! : -1;
    if (digit === -1) return false;
    value = (value << 4) | digit;
    if (++digits === 8) {
      words[word++] = value;
      digits = 0;
      value = 0;
    }
  }
  return true;
}

// FNV-1a over the UTF-16 code units, then mixed.
function hashString(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return mix(h);
}
