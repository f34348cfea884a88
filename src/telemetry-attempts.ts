// Each attempt of a job observed: started, run in its context, and ended once, whatever its handlers do.
import type { AttemptContext, JobProcessor, QueuedEvent } from './queue.js';
import type { Telemetry, TelemetryFault } from './telemetry.js';

/**
 * The processor with each attempt observed: started, run in its context, and ended once, on the handlers'
 * outcome or on the attempt's abort (a timeout or a shutdown ends it even when the handlers never settle).
 * `telemetry` is guarded (`guardTelemetry`: an `attempt` that throws runs the handlers unobserved); a throw of
 * the observer goes to `fault`, so the attempt's outcome is the handlers' alone.
 * @example
 * const process = observeAttempts(dispatcher.process, telemetry, fault);
 */
export function observeAttempts(
  process: JobProcessor,
  telemetry: Telemetry,
  fault: TelemetryFault,
): JobProcessor {
  if (telemetry.attempt === undefined) return process;
  const start = telemetry.attempt;
  return (job: QueuedEvent, ctx: AttemptContext): Promise<void> => {
    const observer = start(job, ctx.attempt);
    if (observer === undefined) return process(job, ctx);
    let ended = false;
    // Also an abort listener, where a throw would be an uncaught exception.
    const end = (failure: { readonly error: unknown } | undefined): void => {
      if (ended) return;
      ended = true;
      try {
        observer.end(failure);
      } catch (error) {
        fault('attempt.end', error);
      }
    };
    const { signal } = ctx;
    const aborted = (): void => end({ error: signal.reason });
    signal.addEventListener('abort', aborted, { once: true });
    // Never throws: a processor's synchronous throw is the attempt's failure, as a rejection would be. Runs the
    // handlers once: an observer that calls `run` again, or late (after it returned, so they were run without it),
    // gets the same attempt back.
    let running: Promise<void> | undefined;
    const run = (): Promise<void> => {
      if (running !== undefined) return running;
      try {
        running = process(job, ctx);
      } catch (error) {
        running = Promise.reject(error);
      }
      return running;
    };
    if (observer.run === undefined) run();
    else {
      try {
        observer.run(run);
      } catch (error) {
        fault('attempt.run', error);
      }
      // The observer threw (or returned) before calling `run`: the handlers run all the same, unobserved.
      if (running === undefined) run();
    }
    return running!.then(
      () => {
        signal.removeEventListener('abort', aborted);
        end(undefined);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', aborted);
        end({ error });
        throw error;
      },
    );
  };
}
