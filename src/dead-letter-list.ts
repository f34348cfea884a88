// The memory queue's dead letters: at most `max`, oldest dropped first, read a page at a time from the newest.
import {
  type DeadLetter,
  type DeadLetterPage,
  type DeadLetterQuery,
  deadLetterFilter,
  pageLimit,
} from './dead-letters.js';
import { ConfigurationError } from './errors.js';

interface Entry {
  /** Rises with every letter added: the cursor of a page is the sequence number of its last (oldest) letter. */
  readonly seq: number;
  readonly letter: DeadLetter;
  removed: boolean;
}

/**
 * Dead letters in the order they were added, by event id, with a cursor that stays valid while letters come
 * and go (a page never repeats or skips one because a newer letter arrived or another was replayed).
 * @example
 * const list = new DeadLetterList(10_000); list.add(letter); list.page({ limit: 50 });
 */
export class DeadLetterList {
  readonly #max: number;
  // Oldest first; a taken letter leaves a hole (removed) until the array is compacted.
  #entries: Entry[] = [];
  #holes = 0;
  // No live entry sits before this index: the oldest is found without walking past the letters dropped before it
  // (at `max`, every letter added drops one, and each leaves a hole at the front).
  #front = 0;
  readonly #byId = new Map<string, Entry>();
  #seq = 0;

  constructor(max: number) {
    this.#max = max;
  }

  get size(): number {
    return this.#byId.size;
  }

  /** Keeps `letter` (a newer letter of the same event replaces the older); answers the id dropped past `max`. */
  add(letter: DeadLetter): string | undefined {
    this.take(letter.event.id);
    let dropped: string | undefined;
    if (this.#byId.size >= this.#max) {
      while (this.#entries[this.#front]?.removed) this.#front++;
      const oldest = this.#entries[this.#front];
      if (oldest !== undefined) {
        dropped = oldest.letter.event.id;
        this.take(dropped);
      }
    }
    const entry: Entry = { seq: ++this.#seq, letter, removed: false };
    this.#entries.push(entry);
    this.#byId.set(letter.event.id, entry);
    return dropped;
  }

  get(eventId: string): DeadLetter | undefined {
    return this.#byId.get(eventId)?.letter;
  }

  /** Removes and answers the letter of `eventId`. */
  take(eventId: string): DeadLetter | undefined {
    const entry = this.#byId.get(eventId);
    if (entry === undefined) return undefined;
    this.#byId.delete(eventId);
    entry.removed = true;
    // Holes are dropped once they are half the array: a page walks past at most as many holes as letters.
    if (++this.#holes > 64 && this.#holes * 2 > this.#entries.length) {
      this.#entries = this.#entries.filter((each) => !each.removed);
      this.#holes = 0;
      this.#front = 0;
    }
    return entry.letter;
  }

  page(query: DeadLetterQuery = {}): DeadLetterPage {
    const limit = pageLimit(query);
    const { since, until, type } = deadLetterFilter(query);
    const entries = this.#entries;
    let index = entries.length - 1;
    if (query.cursor !== undefined) {
      const before = Number(query.cursor);
      // A cursor is the sequence number of a letter this list added: from 1 to the last one given. Any other
      // (a forged one past the last would otherwise read the first page again) is refused.
      if (!/^\d{1,15}$/.test(query.cursor) || before < 1 || before > this.#seq)
        throw new ConfigurationError('deadLetters cursor is not one this queue gave');
      // The newest entry older than the cursor: entries are in rising `seq`, so a binary search finds it.
      let low = 0;
      let high = entries.length;
      while (low < high) {
        const mid = (low + high) >>> 1;
        if (entries[mid]!.seq < before) low = mid + 1;
        else high = mid;
      }
      index = low - 1;
    }
    const items: DeadLetter[] = [];
    let last: Entry | undefined;
    for (; index >= 0; index--) {
      const entry = entries[index]!;
      if (entry.removed) continue;
      const { failedAt, event } = entry.letter;
      if (failedAt < since || failedAt >= until || !type(event.type)) continue;
      if (items.length === limit) return { items, cursor: String(last!.seq) };
      items.push(entry.letter);
      last = entry;
    }
    return { items, cursor: undefined };
  }
}
