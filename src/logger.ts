// Logging is a hook: pino-shaped, warnings and errors to the console by default, once per kind of mistake.

/**
 * The logger shape the package calls (pino, bunyan-style `(obj, msg)`); pass `console` only through an adapter.
 * @example
 * createReceiver({ secret, logger: pino() });
 */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const noop = (): void => {};

/**
 * A logger that says nothing: what `logger: false` gives.
 * @example
 * createReceiver({ secret, logger: silentLogger });
 */
export const silentLogger: Logger = Object.freeze({ debug: noop, info: noop, warn: noop, error: noop });

/**
 * The user's logger with each method made safe to call anywhere: a method that throws (a transport down) loses its
 * line and nothing else, as log calls sit in catch blocks and background work where a throw would be unhandled.
 * @example
 * const logger = guardLogger(pino()); // what `createReceiver({ logger: pino() })` logs with
 */
export function guardLogger(logger: Logger): Logger {
  const guard =
    (level: keyof Logger) =>
    (obj: object, msg?: string): void => {
      try {
        // Called as a method (pino's need `this`), with the arguments as given.
        if (msg === undefined) logger[level](obj);
        else logger[level](obj, msg);
      } catch {
        // The line is lost; the delivery, the retry or the dead letter that logged it goes on.
      }
    };
  return Object.freeze({
    debug: guard('debug'),
    info: guard('info'),
    warn: guard('warn'),
    error: guard('error'),
  });
}

/** How often a repeated log line may be printed again: once a minute. */
export const REPEAT_INTERVAL_MS = 60_000;

/**
 * Returns a limiter keyed by kind: it answers the number of calls since the last time it said yes (this one
 * included) the first time, then at most once per `intervalMs`, and `0` in between.
 * @example
 * const due = createRepeatLimiter(Date.now); const count = due('signature_mismatch'); if (count > 0) log(count);
 */
export function createRepeatLimiter(
  now: () => number,
  intervalMs: number = REPEAT_INTERVAL_MS,
): (kind: string) => number {
  const kinds = new Map<string, { last: number; count: number }>();
  return (kind) => {
    const at = now();
    const seen = kinds.get(kind);
    if (seen === undefined) {
      kinds.set(kind, { last: at, count: 0 });
      return 1;
    }
    seen.count += 1;
    if (at - seen.last < intervalMs) return 0;
    const count = seen.count;
    seen.last = at;
    seen.count = 0;
    return count;
  };
}

/** Options of `createConsoleLogger`. */
export interface ConsoleLoggerOptions {
  /** Where lines go; `warn` and `error` write to stderr on Node, Bun and Deno. Default `globalThis.console`. */
  readonly console?: Pick<Console, 'warn' | 'error'>;
  /** The clock, in milliseconds like `Date.now`. */
  readonly now?: () => number;
  /** A line repeated within this long is counted, not printed. Default one minute. */
  readonly intervalMs?: number;
}

/**
 * The default logger: warnings and errors to the console, debug and info (the normal traffic) dropped, and a
 * line repeated within a minute counted rather than printed, so an outage or a failing handler cannot flood stderr.
 * @example
 * createReceiver({ secret, logger: createConsoleLogger() }); // what no `logger` option gives
 */
export function createConsoleLogger({
  console: out = globalThis.console,
  now = Date.now,
  intervalMs = REPEAT_INTERVAL_MS,
}: ConsoleLoggerOptions = {}): Logger {
  const due = createRepeatLimiter(now, intervalMs);
  const print =
    (write: (...args: unknown[]) => void) =>
    (obj: object, msg = 'workforce-webhooks'): void => {
      // A line said once per kind (`createWarnOnce`: one per apiVersion, per event type) is its own line: folded by
      // its message alone, a second kind within the minute would never be printed, as its kind is not said again.
      const { kind } = obj as { readonly kind?: unknown };
      const count = due(typeof kind === 'string' ? `${msg}\n${kind}` : msg);
      if (count === 0) return;
      // `kind` only keys warnOnce, and a field the message already quotes (a fix) is not printed twice.
      const fields: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(obj)) {
        if (key !== 'kind' && !(typeof value === 'string' && msg.includes(value))) fields[key] = value;
      }
      if (count > 1) fields.repeated = count;
      if (Object.keys(fields).length === 0) write(msg);
      else write(msg, fields);
    };
  return Object.freeze({
    debug: noop,
    info: noop,
    warn: print((...args) => out.warn(...args)),
    error: print((...args) => out.error(...args)),
  });
}

/**
 * Returns a function that logs a warning once per `kind` for the life of the returned function.
 * @example
 * const warnOnce = createWarnOnce(logger); warnOnce('raw_body_unavailable', { fix }, 'the body was parsed');
 */
export function createWarnOnce(
  logger: Logger,
): (kind: string, obj: object, msg: string, level?: 'warn' | 'error') => void {
  const seen = new Set<string>();
  return (kind, obj, msg, level = 'warn') => {
    if (seen.has(kind)) return;
    seen.add(kind);
    logger[level]({ ...obj, kind }, msg);
  };
}
