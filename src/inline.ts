// Inline mode: run the handlers before answering, or answer 202 at the deadline and let the queue own the rest.
import { type Attempt, startAttempt } from './attempt.js';
import type { Claims } from './claims.js';
import { WebhookError, type WebhookErrorCode } from './errors.js';
import { LOST_WHILE_RUNNING } from './memory-queue-turns.js';
import { ON_WORKERS } from './on-workers.js';
import type { DeadLetter, JobProcessor, QueuedEvent } from './queue.js';
import { answers, type WebhookResponse, withBackground } from './responses.js';

/** What `createInlineRunner` needs. */
export interface InlineRunnerOptions {
  readonly process: JobProcessor;
  readonly claims: Claims;
  /** The answer's deadline, counted from the claim (a slow one's time is `claims.took`), done mark included. */
  readonly ackDeadlineMs: number;
  readonly handlerTimeoutMs: number;
  /**
   * Queues a run that failed after its 202 with `error`, its failure, and the handlers that succeeded; resolves with
   * the queue's answer, whose `background` is the queue's work on it.
   */
  readonly handOver: (
    job: QueuedEvent,
    token: string,
    error: unknown,
  ) => WebhookResponse | Promise<WebhookResponse>;
  readonly deadLetter: (letter: DeadLetter) => Promise<void>;
  /**
   * The run failed and the event will be tried again: by the sender (500, or 503 when close() cut it short), or by
   * another delivery that took its lease. A run handed to a queue is counted by the queue.
   */
  readonly onRetry?: (job: QueuedEvent, attempt: number) => void;
}

/** Runs claimed events inline, and tracks the runs so `close` can wait for them. */
export interface InlineRunner {
  run(job: QueuedEvent, token: string): Promise<WebhookResponse>;
  /**
   * True while this process runs the event, until the store has the run's end: a copy is then answered 409 without
   * asking the store. A handler that held the event loop past its lease gets its renewal or its done mark in before
   * a store that forgot the claim can give it out.
   */
  running(eventId: string): boolean;
  /**
   * Waits for runs in flight up to `timeoutMs` less its last fifth (at most 1 s; `Infinity`: with no timer), then
   * aborts what is left with `reason`; the rest of `timeoutMs` is for what follows them: their done marks and
   * releases, and the hand-over of runs past their 202.
   */
  close(timeoutMs: number, reason: unknown): Promise<void>;
}

// A failure carries the handlers that had succeeded (see `Attempt.completed`), for the hand-over.
type Outcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly error: unknown; readonly completed?: readonly number[] | undefined };
const OK: Outcome = { ok: true };
// A run answered 202 on Workers, until it ends: see `late` in createInlineRunner.
interface LateRun {
  readonly job: QueuedEvent;
  readonly token: string;
  readonly attempt: Attempt;
  readonly stopRenewing: () => void;
  readonly forget: () => void;
  taken: boolean;
}
const DEADLINE = Symbol('deadline');
const HAND_OVER_RETRIES_MS = [1000, 2000, 4000, 8000, 16_000];
const backgroundOf = (answer: WebhookResponse | undefined): Promise<void> | undefined => answer?.background;
const hasCode = (error: unknown, code: WebhookErrorCode): boolean =>
  error instanceof WebhookError && error.code === code;

/**
 * The inline runner: 200 when the handlers succeed, 500 when one fails (the sender retries), 202 past
 * `ackDeadlineMs` from the claim (under the sender's 10 s), after which a failure goes to the queue for its
 * remaining attempts; the done mark or release that ends a run is waited for only within that deadline.
 * @example
 * const inline = createInlineRunner({ process, claims, ackDeadlineMs: 8000, handlerTimeoutMs: 30_000, handOver, deadLetter });
 */
export function createInlineRunner(options: InlineRunnerOptions): InlineRunner {
  const { process, claims, ackDeadlineMs, handlerTimeoutMs, handOver, deadLetter, onRetry } = options;
  const runs = new Map<string, { readonly attempt: Attempt; readonly outcome: Promise<Outcome> }>();

  // Answers the queue's answer when the event was handed over, whose `background` (the done mark, then the queue's
  // run of the event) the 202's keep-alive waits for; `close` waits only for the hand-over.
  const finishLate = async (
    job: QueuedEvent,
    token: string,
    outcome: Outcome,
  ): Promise<WebhookResponse | undefined> => {
    if (outcome.ok) {
      await claims.complete(job.event.id, token);
      return undefined;
    }
    // Another delivery owns the event now (logged when the lease was found taken): handing it over would run it twice.
    // The attempt made is a retry, as before the 202: that delivery runs the event again.
    if (hasCode(outcome.error, 'lease_lost')) {
      onRetry?.(job, 1);
      return;
    }
    const completed = outcome.completed ?? [];
    const handedOver = await handOverUntilTaken({ ...job, attemptsMade: 1, completed }, token, outcome.error);
    // The claim was taken while the queue refused (logged by the renewal): the event is another delivery's now,
    // which runs it again.
    if (handedOver === undefined) {
      onRetry?.(job, 1);
      return;
    }
    // The sender already has its 202: an event no queue would take is announced, never dropped silently. A queue
    // that took it counts the attempt, by what follows it (a retry, or the dead letter it makes).
    if (handedOver.status === answers.accepted.status) return handedOver;
    // Held through every try (a refused hand-over keeps it), given up once here.
    await claims.release(job.event.id, token);
    await deadLetter({
      event: job.event,
      deliveryId: job.deliveryId,
      attempts: 1,
      error: outcome.error,
      failedAt: Date.now(),
    });
  };

  // Waits between hand-over tries, ended at once by `close`; and the late finishes in flight, which `close` awaits.
  const pauses = new Set<() => void>();
  const pause = (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      const end = (): void => {
        clearTimeout(timer);
        pauses.delete(end);
        resolve();
      };
      const timer = setTimeout(end, ms);
      pauses.add(end);
    });
  const finishing = new Set<Promise<unknown>>();

  // A queue takes an event already answered 2xx even when full (the receiver's queues do); a queue that still
  // refuses, or cannot be reached, is asked again a few times before the event is given up as a dead letter.
  // Between tries the claim is renewed (at once, then every third of a lease): the tries outlast a lease, and a
  // copy of the event must not run meanwhile. Undefined when a renewal found the claim taken.
  const handOverUntilTaken = async (
    job: QueuedEvent,
    token: string,
    error: unknown,
  ): Promise<WebhookResponse | undefined> => {
    let answer = await handOver(job, token, error);
    for (const ms of HAND_OVER_RETRIES_MS) {
      if (answer.status === answers.accepted.status || closed) break;
      let taken = false;
      const stop = claims.keep(
        job.event.id,
        token,
        () => {
          taken = true;
        },
        true,
      );
      await pause(ms);
      stop();
      if (taken) return undefined;
      answer = await handOver(job, token, error);
    }
    return answer;
  };
  let closed = false;

  // On Workers, runs answered 202 whose handlers go on in their delivery's request, and when that request is taken for
  // ended: the platform ends a request's timers and I/O with it (past the time waitUntil keeps it up, or cancelled),
  // the run's own time limit among them, and the run would never end, its event neither processed nor a dead letter.
  // One more limit past its own, the next delivery takes it back: handed over as a failure of that attempt, which
  // the memory queue makes a dead letter (as it does its own attempts cut so).
  const late = new Map<LateRun, number>();
  let lateDueAt = Number.POSITIVE_INFINITY;
  const takeBackLate = (): void => {
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [run, lostAt] of late) {
      if (lostAt > now) {
        next = Math.min(next, lostAt);
        continue;
      }
      late.delete(run);
      run.taken = true;
      const error = new WebhookError('queue_unavailable', LOST_WHILE_RUNNING);
      run.attempt.abort(error);
      run.stopRenewing();
      const finished = finishLate(run.job, run.token, { ok: false, error, completed: run.attempt.completed });
      finishing.add(finished);
      const settled = (): void => {
        finishing.delete(finished);
        run.forget();
      };
      finished.then(settled, settled);
    }
    lateDueAt = next;
  };

  return {
    async run(job, token) {
      if (late.size > 0 && performance.now() >= lateDueAt) takeBackLate();
      const id = job.event.id;
      // The answer's deadline counts from the claim, not from here: the sender's 10 s ran while a slow store took it.
      const tookMs = claims.took(token);
      const budgetMs = Math.max(0, ackDeadlineMs - tookMs);
      // The lease was written while the claim was under way: its renewals count from the claim's start, not from here.
      const since = performance.now() - tookMs;
      // Its claim came back after close() began (a store round trip): nothing starts now, the sender retries.
      if (closed) {
        await claims.release(id, token);
        return answers.unavailable.shutting_down;
      }
      const attempt = startAttempt(process, job, { attempt: 1, timeoutMs: handlerTimeoutMs });
      // A lease found taken by another delivery aborts the handlers' signal: they stop, and nothing is handed on. One
      // the store let lapse while nobody took the id is taken back by the next renewal: stopping the handlers then
      // would run the event again for every store hiccup during a long handler.
      const stopRenewing = claims.keep(id, token, (reason) => attempt.abort(reason), false, since);
      const outcome = attempt.done.then(
        () => OK,
        (error: unknown): Outcome => ({ ok: false, error, completed: attempt.completed }),
      );
      const entry = { attempt, outcome };
      runs.set(id, entry);
      void outcome.then(stopRenewing);
      // A copy is answered 409 until the store has the run's end (its done mark, release or hand-over): asking the
      // store meanwhile, its claim could land first (on another of the store's connections) and take a lease that
      // lapsed while a handler held the event loop, and the event would run twice.
      const forget = (): void => {
        if (runs.get(id) === entry) runs.delete(id);
      };
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<typeof DEADLINE>((resolve) => {
        timer = setTimeout(resolve, budgetMs, DEADLINE);
      });
      const first = await Promise.race([outcome, deadline]);
      if (first === DEADLINE) {
        let kept: LateRun | undefined;
        if (ON_WORKERS) {
          kept = { job, token, attempt, stopRenewing, forget, taken: false };
          const lostAt = since + tookMs + 2 * handlerTimeoutMs;
          late.set(kept, lostAt);
          lateDueAt = Math.min(lateDueAt, lostAt);
        }
        const finished = outcome.then((result) => {
          if (kept === undefined) return finishLate(job, token, result);
          // Taken back already: its request lived on after all, and this end is not counted.
          if (kept.taken) return undefined;
          late.delete(kept);
          return finishLate(job, token, result);
        });
        finishing.add(finished);
        const settled = (): void => {
          finishing.delete(finished);
          forget();
        };
        finished.then(settled, settled);
        // The keep-alive (`after()`, `waitUntil`) covers a handed-over event until the queue is done with it.
        return withBackground(answers.accepted, finished.then(backgroundOf));
      }
      // The done mark or release shares the answer's deadline: a store slow to take it (each call within its own
      // deadline) must not push the answer past the sender's. Cut, it goes on in the background, copies answered 409
      // until it lands; the answer stands (the handlers ran, or the sender retries).
      const ended = first.ok ? claims.complete(id, token) : claims.release(id, token);
      const inTime = await Promise.race([ended, deadline]);
      clearTimeout(timer);
      if (inTime === DEADLINE) void ended.then(forget);
      else forget();
      const answer = first.ok
        ? answers.processed
        : // The sender tries again: after a handler's failure (500), or after close() cut the run short before its
          // answer (503; no handler failed, the receiver is shutting down).
          hasCode(first.error, 'shutting_down')
          ? answers.unavailable.shutting_down
          : answers.handlerFailed;
      if (!first.ok) onRetry?.(job, 1);
      return inTime === DEADLINE ? withBackground(answer, ended) : answer;
    },
    running: (eventId) => runs.has(eventId),
    async close(timeoutMs, reason) {
      closed = true;
      const left = [...runs.values()];
      const timers: ReturnType<typeof setTimeout>[] = [];
      // No limit: no timer at all (one past 2^31 - 1 ms would fire at once and cut every run short).
      const after = (ms: number): Promise<void> =>
        timeoutMs === Number.POSITIVE_INFINITY
          ? new Promise<void>(() => {})
          : new Promise<void>((resolve) => {
              timers.push(setTimeout(resolve, ms));
            });
      // The last fifth (at most 1 s) is kept for the store calls that end the runs (a run cut short releases its
      // claim for the sender's retry), so they are sent before the user closes the store's client.
      const cut = after(timeoutMs - Math.min(timeoutMs / 5, 1000));
      const expired = after(timeoutMs);
      await Promise.race([Promise.all(left.map((run) => run.outcome)), cut]);
      for (const run of left) run.attempt.abort(reason);
      // Late failures go to the queue now, while it still takes them (the receiver closes it after this), rather
      // than after a wait that would outlast the shutdown.
      for (const end of [...pauses]) end();
      await Promise.race([Promise.all([...finishing]).then(() => claims.settled()), expired]);
      for (const timer of timers) clearTimeout(timer);
    },
  };
}
