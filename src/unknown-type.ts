// The explicit escape hatch past `on()`'s check, for event types the spec has not named yet.
import type { UnknownEventType } from './types.js';

/**
 * Marks an event type (or `prefix.*`) that `EventDataMap` does not name, so `on()` accepts it on purpose; its
 * handler gets `data: Record<string, unknown>`. To type its payload instead, add it to the map.
 * @example
 * receiver.on(unknownType('benefits.enrolled'), (event) => audit(event.type, event.data));
 */
export function unknownType<const T extends string>(type: T): UnknownEventType<T> {
  // Only a type-level mark: at run time it is the string itself, checked by the registry like any pattern.
  return type as UnknownEventType<T>;
}
