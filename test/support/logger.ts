// A logger that records what the package says, to assert on logs without printing them.
import type { Logger } from 'workforce-webhooks';

export interface LogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly obj: Record<string, unknown>;
  readonly msg: string | undefined;
}

/**
 * A pino-shaped logger keeping every line in `lines`.
 * @example
 * const logger = recordingLogger(); createReceiver({ secret, logger }); logger.lines.filter((l) => l.level === 'error');
 */
export function recordingLogger(): Logger & { readonly lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at =
    (level: LogLine['level']) =>
    (obj: object, msg?: string): void => {
      lines.push({ level, obj: obj as Record<string, unknown>, msg });
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
