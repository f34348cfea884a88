// The memory queue's dead letters: at most `max`, oldest dropped first, read a page at a time from the newest.
import {
  type DeadLetter,
  type DeadLetterPage,
  type DeadLetterQuery,
  deadLetterFilter,
  pageLimit,
} from './dead-letters.js';
import { ConfigurationError } from './errors.js';

// What a kept error holds: a string is cut past MAX_CHARS characters, an object keeps its first MAX_NAMES own
// properties, and one letter's error keeps at most MAX_ERRORS errors in all, down its `errors` and its cause chains
// (each at most MAX_CAUSES deep: a cause that loops ends there).
const MAX_CHARS = 8192;
const MAX_NAMES = 64;
const MAX_ERRORS = 32;
const MAX_CAUSES = 8;

const keptValue = (value: unknown): unknown =>
  typeof value === 'string' && value.length > MAX_CHARS
    ? `${value.slice(0, MAX_CHARS)}… (${value.length - MAX_CHARS} more characters)`
    : value;

// A value that refers to nothing else (a function's closure may hold anything).
const isPlain = (value: unknown): boolean =>
  value === null || (typeof value !== 'object' && typeof value !== 'function');

// An Error of this realm, or of another (a `vm` context), whose `instanceof Error` is false.
const isError = (value: object): boolean =>
  value instanceof Error || Object.prototype.toString.call(value) === '[object Error]';

// An Error with no own property, what the original has is copied onto it, and no stack trace captured: frames
// captured here would keep the objects of the calls that failed the job (the error among them) alive.
const bareError = (): Error => {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    const error = new Error();
    delete (error as { stack?: string }).stack;
    return error;
  } finally {
    Error.stackTraceLimit = limit;
  }
};

// A light copy of a failure, for a letter kept for hours: the same prototype (so `instanceof`, `name` and
// `errorClassOf` answer as for the original) with its own plain values (`message`, `stack`, `code`, `status`, a
// `HandlerFailure`'s `completed`; long strings cut), and its `cause` chain and `errors` made light in turn. Any other
// object it refers to (an HTTP client error's response and request, a few hundred KB each) is left out: 10 000
// letters must weigh what their events do. `onDeadLetter` has had the original. What cannot be read is kept as given.
const keptError = (error: unknown): unknown => light(error, { left: MAX_ERRORS }, 0);

function light(error: unknown, budget: { left: number }, causes: number): unknown {
  if (typeof error !== 'object' || error === null) return keptValue(error);
  budget.left--;
  try {
    const prototype: object | null = Object.getPrototypeOf(error);
    // An Error's copy is an Error too (of this realm, with the original's prototype): loggers and `errorClassOf`,
    // which look for an Error where `instanceof` cannot tell (one of another realm), still find one.
    const copy: object = isError(error)
      ? Object.setPrototypeOf(bareError(), prototype)
      : Object.create(prototype);
    const names = Object.getOwnPropertyNames(error).slice(0, MAX_NAMES);
    for (const name of names) {
      const descriptor = Object.getOwnPropertyDescriptor(error, name)!;
      let value: unknown;
      try {
        value = 'value' in descriptor ? descriptor.value : descriptor.get?.call(error);
      } catch {
        continue;
      }
      if (isPlain(value)) value = keptValue(value);
      else if (name === 'cause' && budget.left > 0 && causes < MAX_CAUSES)
        value = light(value, budget, causes + 1);
      else if (name === 'errors' && Array.isArray(value)) {
        const errors: unknown[] = [];
        for (const each of value) {
          if (budget.left <= 0) break;
          errors.push(light(each, budget, 0));
        }
        value = errors;
      } else if (Array.isArray(value) && value.length <= MAX_NAMES && value.every(isPlain))
        value = value.map(keptValue);
      else continue;
      Object.defineProperty(copy, name, {
        value,
        writable: true,
        enumerable: descriptor.enumerable ?? false,
        configurable: true,
      });
    }
    return copy;
  } catch {
    // A revoked Proxy, or one whose traps throw: nothing it holds can be reached through it anyway.
    return error;
  }
}

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

  /**
   * Keeps `given`, its error made light (a newer letter of the same event replaces the older); answers the id
   * dropped past `max`.
   */
  add(given: DeadLetter): string | undefined {
    const letter: DeadLetter = { ...given, error: keptError(given.error) };
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
