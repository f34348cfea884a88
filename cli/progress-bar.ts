// The progress of `dead-letters replay|discard` on standard error: a bar on a terminal, a line now and then elsewhere.
import cliProgress from 'cli-progress';
import type { BulkProgress } from '../src/dead-letter-bulk.js';
import type { CliIo } from './io.js';

/**
 * A progress bar for a bulk action over `total` dead letters: `onProgress` feeds it, `bulk` is the last progress,
 * `stop` ends it (again is a no-op). cli-progress draws the bar on a terminal; elsewhere (a log, a pipe) it writes a
 * line every few seconds.
 * @example
 * const { onProgress, stop } = progressBar('replay', 120, io);
 */
export function progressBar(
  action: 'replay' | 'discard',
  total: number,
  io: CliIo,
): { bulk: () => BulkProgress; onProgress: (progress: BulkProgress) => void; stop: () => void } {
  const terminal = io.interactive === true && process.stderr.isTTY === true;
  const stream = terminal ? process.stderr : { isTTY: false, write: (text: string) => io.stderr(text) };
  const bar = new cliProgress.SingleBar(
    {
      stream: stream as NodeJS.WritableStream,
      format: `${action === 'replay' ? 'replaying ' : 'discarding'} [{bar}] {value}/{total} | failed {failed} | {eta_formatted} left`,
      noTTYOutput: !terminal,
      notTTYSchedule: 2000,
      hideCursor: terminal,
    },
    cliProgress.Presets.shades_classic,
  );
  let last: BulkProgress = { done: 0, succeeded: 0, failed: 0, skipped: 0 };
  let stopped = false;
  // The bar hides the terminal's cursor: whoever stops the command (Ctrl-C included) calls `stop`, which shows it.
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    bar.stop();
  };
  bar.start(total, 0, { failed: 0 });
  return {
    bulk: () => last,
    onProgress: (progress) => {
      last = progress;
      // Letters that failed again or arrived meanwhile can make the run longer than the count read before it.
      if (progress.done > bar.getTotal()) bar.setTotal(progress.done);
      bar.update(progress.done, { failed: progress.failed });
    },
    stop,
  };
}
