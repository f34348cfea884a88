// Logging is a hook: pino-shaped, silent by default, and one warning per kind of misconfiguration.

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
 * A logger that says nothing: the default.
 * @example
 * createReceiver({ secret, logger: silentLogger });
 */
export const silentLogger: Logger = Object.freeze({ debug: noop, info: noop, warn: noop, error: noop });

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
