// The handler registry: exact types, `prefix.*` wildcards and catch-alls, matched once per type and cached.
import { ConfigurationError } from './errors.js';
import type { ErrorHandler, Handler } from './types.js';

/** One registered handler; `index` is its stable position, used to remember which handlers already ran. */
export interface RegisteredHandler {
  readonly index: number;
  readonly handler: Handler;
}

/** The registry behind `receiver.on`, `onAny` and `onError`. */
export interface Registry {
  add(patterns: string | readonly string[] | null, handler: Handler): void;
  addErrorHandler(handler: ErrorHandler): void;
  /** Handlers for `type`, in registration order. */
  match(type: string): readonly RegisteredHandler[];
  readonly errorHandlers: readonly ErrorHandler[];
}

type Rule = { readonly exact?: string; readonly prefix?: string; readonly entry: RegisteredHandler };

/**
 * The shape of an event type (`leave.approved`) or a `prefix.*` pattern (`leave.*`), as `on()` takes them.
 * @example
 * EVENT_PATTERN.test('leave.*'); // true; '*' and 'leave.' are not
 */
export const EVENT_PATTERN: RegExp = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*(\.\*)?$/;
const ON_SHAPE =
  'on() takes an event type, a `prefix.*` pattern or an array of them first, then the handler: on("leave.approved", handler)';

/**
 * A new empty registry.
 * @example
 * const registry = createRegistry(); registry.add('leave.*', handler); registry.match('leave.approved');
 */
export function createRegistry(): Registry {
  const rules: Rule[] = [];
  const errorHandlers: ErrorHandler[] = [];
  // Matching is per type, not per delivery: a handful of types, cached until the next registration.
  const cache = new Map<string, readonly RegisteredHandler[]>();

  return {
    errorHandlers,
    add(patterns, handler) {
      // From JavaScript: the arguments swapped, or an object where a type goes, answered with the call to write
      // rather than a TypeError from inside this module.
      if (typeof patterns === 'function' && typeof handler !== 'function')
        throw new ConfigurationError(ON_SHAPE);
      if (typeof handler !== 'function') throw new ConfigurationError('a handler must be a function');
      const list =
        patterns === null
          ? [null]
          : typeof patterns === 'string'
            ? [patterns]
            : Array.isArray(patterns)
              ? patterns
              : undefined;
      if (list === undefined) throw new ConfigurationError(ON_SHAPE);
      const entry = { index: rules.length, handler };
      if (list.length === 0) throw new ConfigurationError('on() needs at least one event type');
      // Every pattern checked before any is added: an invalid one registers nothing, not the patterns before it.
      const added = list.map((pattern) => rule(pattern, entry));
      rules.push(...added);
      cache.clear();
    },
    addErrorHandler(handler) {
      if (typeof handler !== 'function') throw new ConfigurationError('an error handler must be a function');
      errorHandlers.push(handler);
    },
    match(type) {
      let found = cache.get(type);
      if (found === undefined) {
        // One function runs once per event however its patterns overlap (on('leave.approved', h) then
        // on('leave.*', h)), as one on([...], h) does: its first registration, whose index the retries count by.
        const seen = new Set<Handler>();
        const list: RegisteredHandler[] = [];
        for (const { exact, prefix, entry } of rules) {
          const hit = exact !== undefined ? exact === type : prefix === undefined || type.startsWith(prefix);
          if (hit && !seen.has(entry.handler)) {
            seen.add(entry.handler);
            list.push(entry);
          }
        }
        found = list;
        cache.set(type, found);
      }
      return found;
    },
  };
}

function rule(pattern: string | null, entry: RegisteredHandler): Rule {
  if (pattern === null || pattern === '*') return { entry };
  if (typeof pattern !== 'string' || !EVENT_PATTERN.test(pattern)) {
    throw new ConfigurationError(`"${String(pattern)}" is not an event type or a "prefix.*" pattern`);
  }
  return pattern.endsWith('.*') ? { prefix: pattern.slice(0, -1), entry } : { exact: pattern, entry };
}
