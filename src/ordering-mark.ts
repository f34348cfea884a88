// An ordered event's place in its key's order (its mark), and the event a mark was made of.
import { instantOf } from './instant.js';
import type { WorkforceEvent } from './types.js';

/** The event that made another stale: the newest one of its key whose handlers all succeeded. */
export interface OrderingMark {
  readonly id: string;
  readonly occurredAt: string;
}

const FRACTION = /\.(\d+)/;

/**
 * The event's place in its key's order, as a string that compares like the events do: `occurredAt` as an instant
 * (to the nanosecond, whatever its offset), then the event id; undefined when `occurredAt` is not a date from 1970 on
 * (an envelope's four-digit years always fit).
 * @example
 * markOf(older) < markOf(newer); // true
 */
export function markOf(event: Pick<WorkforceEvent, 'id' | 'occurredAt'>): string | undefined {
  const ms = instantOf(event.occurredAt);
  if (!(ms >= 0 && ms < 1e15)) return undefined; // not a date, before 1970, or past 15 digits (year 33658)
  const below = (FRACTION.exec(event.occurredAt)?.[1] ?? '').slice(3, 9).padEnd(6, '0');
  // Joined, not a template: a template makes a chain of string pieces, and the watermark table keeps each mark for
  // the dedupe window (measured: more GC per ordered event). The 15 digits are those of 1e15 + ms past its leading
  // 1: a third of padStart's cost.
  return [String(ms + 1e15).slice(1), below, ' ', event.id, ' ', event.occurredAt].join('');
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
