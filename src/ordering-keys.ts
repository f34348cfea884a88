// Which record an event is about: the default keys (`leave.*` by `data.leaveRequestId`) and the user's rules.
import { ConfigurationError } from './errors.js';
import { EVENT_PATTERN } from './registry.js';
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
  readonly [P in Exclude<EventPattern<M>, UnknownEventType | '*'>]?: (
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
 * A rule that is not a function, or a name that is not a type or `prefix.*`, throws a `ConfigurationError` here.
 * @example
 * // A missing id is undefined (not ordered): never String() it, 'undefined' would be one key for them all.
 * const key = byDefaultKeys({ 'employee.*': (e) => e.data.employeeId as string | undefined });
 */
export function byDefaultKeys<M = EventDataMap>(rules: OrderingKeyRules<M> = {}): OrderingKey {
  checkRules(rules);
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

const RULES_SHAPE =
  "byDefaultKeys takes rules by event type or prefix, each a function of the event: byDefaultKeys({ 'employee.*': (event) => event.data.employeeId })";

// Checked once, at creation: from JavaScript a rule that is not a function would fail every attempt of its type
// until dead-lettered, and a name no event type can match ('*', 'employee.') would leave its events unordered.
function checkRules(rules: unknown): void {
  if (typeof rules !== 'object' || rules === null || Array.isArray(rules))
    throw new ConfigurationError(RULES_SHAPE);
  // An event where the rules go: `key: byDefaultKeys` given, the factory rather than its result.
  const { type, data } = rules as { readonly type?: unknown; readonly data?: unknown };
  if (typeof type === 'string' && typeof data === 'object')
    throw new ConfigurationError(
      'ordering.key is byDefaultKeys itself, which takes rules, not an event: call it, ordering: { key: byDefaultKeys() }',
    );
  for (const [name, rule] of Object.entries(rules)) {
    if (name === '*')
      throw new ConfigurationError(
        "byDefaultKeys has no '*' rule: for a key of every event, give ordering.key a function of your own, ordering: { key: (event) => ... }",
      );
    if (!EVENT_PATTERN.test(name))
      throw new ConfigurationError(`byDefaultKeys: "${name}" is not an event type or a "prefix.*" pattern`);
    if (rule !== undefined && typeof rule !== 'function')
      throw new ConfigurationError(
        `byDefaultKeys: the rule of '${name}' must be a function of the event, such as (event) => event.data.employeeId, or undefined for none`,
      );
  }
}
