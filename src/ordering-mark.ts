// An ordered event's place in its key's order (its mark), and the event a mark was made of.
import { instantOf, withoutLeapSecond } from './instant.js';
import type { WorkforceEvent } from './types.js';

/** The event that made another stale: the newest one of its key whose handlers all succeeded. */
export interface OrderingMark {
  readonly id: string;
  readonly occurredAt: string;
}

const FRACTION = /\.(\d+)/;

/**
 * The event's place in its key's order, as a string that compares like the events do: `occurredAt` as an instant
 * (to the nanosecond, whatever its offset; a leap second as the last nanosecond before it), then the event id;
 * undefined when `occurredAt` is not a date of a four-digit year (which an envelope's always is).
 * @example
 * markOf(older) < markOf(newer); // true
 */
export function markOf(event: Pick<WorkforceEvent, 'id' | 'occurredAt'>): string | undefined {
  const read = withoutLeapSecond(event.occurredAt);
  const ms = instantOf(read);
  if (!(ms >= -1e14 && ms < 1e15)) return undefined; // not a date, or past 15 digits (years -1199 and 33658)
  const below = (FRACTION.exec(read)?.[1] ?? '').slice(3, 9).padEnd(6, '0');
  // Joined, not a template: a template makes a chain of string pieces, and the watermark table keeps each mark for
  // the dedupe window (measured: more GC per ordered event). The 15 digits are those of 1e15 + ms past its leading
  // 1: a third of padStart's cost. Before 1970 (ms < 0, down to year 0000) a `-` and 1e15 + ms, also 15 digits: it
  // sorts before every digit, and a later instant has the larger 1e15 + ms; marks from 1970 on are as they were.
  const instant = ms >= 0 ? String(ms + 1e15).slice(1) : `-${ms + 1e15}`;
  return [instant, below, ' ', event.id, ' ', event.occurredAt].join('');
}

/**
 * The event a mark was made of.
 * @example
 * markedEvent(markOf(event)!); // { id: event.id, occurredAt: event.occurredAt }
 */
export function markedEvent(mark: string): OrderingMark {
  // The id has no space (a UUID); `occurredAt` may (RFC 3339 allows one for the `T`): it is all that follows.
  const first = mark.indexOf(' ');
  const second = mark.indexOf(' ', first + 1);
  return { id: mark.slice(first + 1, second), occurredAt: mark.slice(second + 1) };
}
