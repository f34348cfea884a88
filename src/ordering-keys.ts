// Which record an event is about: the default keys (`leave.*` by `data.leaveRequestId`) and the user's rules.
import type {
  EventDataMap,
  EventOf,
  EventPattern,
  TypesOf,
  UnknownEventType,
  WorkforceEvent,
} from './types.js';

/** Which record an event is about; undefined: the event is not ordered. */
export type OrderingKey = (event: WorkforceEvent) => string | undefined;

/** Per event type (or `prefix.*`) of the map, how to read the record key from a typed event. */
export type OrderingKeyRules<M = EventDataMap> = {
  readonly [P in Exclude<EventPattern<M>, UnknownEventType>]?: (
    event: EventOf<M, TypesOf<M, P>>,
  ) => string | undefined;
};

/**
 * A key read from an event: a non-empty string, else undefined (the event is not ordered).
 * @example
 * asKey(event.data.leaveRequestId); // 'lr_123', or undefined for '' or a number
 */
export const asKey = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/**
 * The record keys of the event types whose payload the spec documents (`leave.*` by `data.leaveRequestId`),
 * extended or overridden by `rules`; an exact type wins over a `prefix.*`, a longer prefix over a shorter.
 * @example
 * createReceiver({ secret, ordering: { key: byDefaultKeys({ 'employee.*': (e) => String(e.data.employeeId) }) } });
 */
export function byDefaultKeys<M = EventDataMap>(rules: OrderingKeyRules<M> = {}): OrderingKey {
  const all: Record<string, ((event: never) => unknown) | undefined> = {
    'leave.*': (event: WorkforceEvent) => event.data.leaveRequestId,
    ...(rules as Record<string, (event: never) => unknown>),
  };
  // The rule of each type seen, found once.
  const found = new Map<string, ((event: WorkforceEvent) => unknown) | undefined>();
  const ruleOf = (type: string): ((event: WorkforceEvent) => unknown) | undefined => {
    if (Object.hasOwn(all, type)) return all[type] as (event: WorkforceEvent) => unknown;
    for (let end = type.lastIndexOf('.'); end > 0; end = type.lastIndexOf('.', end - 1)) {
      const pattern = `${type.slice(0, end)}.*`;
      if (Object.hasOwn(all, pattern)) return all[pattern] as (event: WorkforceEvent) => unknown;
    }
    return undefined;
  };
  return (event) => {
    let rule = found.get(event.type);
    if (rule === undefined && !found.has(event.type)) {
      rule = ruleOf(event.type);
      found.set(event.type, rule);
    }
    return rule === undefined ? undefined : asKey(rule(event));
  };
}
