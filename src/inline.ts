// Inline mode: run the handlers before answering, or answer 202 at the deadline and let the queue own the rest.
import { type Attempt, startAttempt } from './attempt.js';
import type { Claims } from './claims.js';
import type { DeadLetter, JobProcessor, QueuedEvent } from './queue.js';
import { HandlerFailure } from './queue.js';
import { answers, type WebhookResponse, withBackground } from './responses.js';

/** What `createInlineRunner` needs. */
export interface InlineRunnerOptions {
  readonly process: JobProcessor;
  readonly claims: Claims;
  readonly ackDeadlineMs: number;
  readonly handlerTimeoutMs: number;
  /** Queues a run that failed after its 202, with the handlers that succeeded; resolves with the queue's answer. */
  readonly handOver: (job: QueuedEvent, token: string) => WebhookResponse | Promise<WebhookResponse>;
  readonly deadLetter: (letter: DeadLetter) => Promise<void>;
}

/** Runs claimed events inline, and tracks the runs so `close` can wait for them. */
export interface InlineRunner {
  run(job: QueuedEvent, token: string): Promise<WebhookResponse>;
  /** Waits up to `timeoutMs` for runs in flight, then aborts what is left with `reason`. */
  close(timeoutMs: number, reason: unknown): Promise<void>;
}

type Outcome = { readonly ok: true } | { readonly ok: false; readonly error: unknown };
const OK: Outcome = { ok: true };
const DEADLINE = Symbol('deadline');

/**
 * The inline runner: 200 when the handlers succeed, 500 when one fails (the sender retries), 202 past
 * `ackDeadlineMs` (under the sender's 10 s), after which a failure goes to the queue for its remaining attempts.
 * @example
 * const inline = createInlineRunner({ process, claims, ackDeadlineMs: 8000, handlerTimeoutMs: 30_000, handOver, deadLetter });
 */
export function createInlineRunner(options: InlineRunnerOptions): InlineRunner {
  const { process, claims, ackDeadlineMs, handlerTimeoutMs, handOver, deadLetter } = options;
  const runs = new Set<{ readonly attempt: Attempt; readonly outcome: Promise<Outcome> }>();

  const finishLate = async (job: QueuedEvent, token: string, outcome: Outcome): Promise<void> => {
    if (outcome.ok) return claims.complete(job.event.id, token);
    const completed = outcome.error instanceof HandlerFailure ? outcome.error.completed : [];
    const handedOver = await handOver({ ...job, attemptsMade: 1, completed }, token);
    // The sender already has its 202: an event the queue cannot take is announced, never dropped silently.
    if (handedOver.status !== 202) {
      await deadLetter({
        event: job.event,
        deliveryId: job.deliveryId,
        attempts: 1,
        error: outcome.error,
        failedAt: Date.now(),
      });
    }
  };

  return {
    async run(job, token) {
      const id = job.event.id;
      const attempt = startAttempt(process, job, { attempt: 1, timeoutMs: handlerTimeoutMs });
      const stopRenewing = claims.keep(id, token);
      const outcome = attempt.done.then(
        () => OK,
        (error: unknown): Outcome => ({ ok: false, error }),
      );
      const entry = { attempt, outcome };
      runs.add(entry);
      void outcome.then(() => {
        stopRenewing();
        runs.delete(entry);
      });
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<typeof DEADLINE>((resolve) => {
        timer = setTimeout(resolve, ackDeadlineMs, DEADLINE);
      });
      const first = await Promise.race([outcome, deadline]);
      clearTimeout(timer);
      if (first === DEADLINE) {
        return withBackground(
          answers.accepted,
          outcome.then((late) => finishLate(job, token, late)),
        );
      }
      if (first.ok) {
        await claims.complete(id, token);
        return answers.processed;
      }
      await claims.release(id, token);
      return answers.handlerFailed;
    },
    async close(timeoutMs, reason) {
      const left = [...runs];
      let timer: ReturnType<typeof setTimeout> | undefined;
      const expired = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([Promise.all(left.map((run) => run.outcome)), expired]);
      clearTimeout(timer);
      for (const run of left) run.attempt.abort(reason);
    },
  };
}
