// The BullMQ queue's records of success: a finished job that Redis may hand to another worker is not run again.
// Internal: not a subpath of the package.
import type { Redis } from 'ioredis';
import { withDeadline } from '../src/deadline.js';

/**
 * BullMQ records a completion only under the job's lock, and stops renewing the lock when the processor returns. A
 * Redis that goes silent then, for longer than the lock has left, lets another instance's stalled check take the
 * finished job over and run it again. So a finished job whose completion BullMQ has not confirmed within half the
 * time its lock has left leaves a record of success apart from the lock, written on the worker's connection: while
 * Redis is silent it waits there, ahead of anything a takeover can send once Redis answers, and the worker that
 * takes a job over (only a job back from a stall) reads it first. Redis answering before then finds the lock live,
 * and the completion lands. What the lock has left is counted from when it was last known live (the job's fetch,
 * then each renewal BullMQ confirms): a job whose renewals a silent Redis held up writes the record at once. A
 * completion confirmed in time costs a timer and nothing in Redis.
 * @example
 * const records = new SuccessRecords({ client: () => workerClient, key: (id) => queue.toKey(`${id}:succeeded`), ... });
 */
export class SuccessRecords {
  readonly #client: () => Redis | undefined;
  readonly #key: (id: string) => string;
  readonly #keepMs: number;
  readonly #lockMs: number;
  // When each running job's lock was last known live, by job id (this process's Date.now()).
  readonly #lockedAt = new Map<string, number>();
  // The queue is closing: its connections may be dropped before BullMQ confirms anything.
  #closing = false;
  // Finished jobs whose completion BullMQ has not confirmed yet: the timer that records them, and their stamp.
  readonly #unconfirmed = new Map<
    string,
    { readonly timer: ReturnType<typeof setTimeout>; readonly stamp: string }
  >();

  // A completion BullMQ did not confirm in time: one function for every timer, none made per job.
  readonly #late = (id: string): void => {
    const unconfirmed = this.#unconfirmed.get(id);
    if (unconfirmed !== undefined) this.#record(id, unconfirmed.stamp);
  };

  constructor(options: {
    /** The worker's connection (BullMQ's commands for its jobs go through it); undefined: not on Redis. */
    readonly client: () => Redis | undefined;
    /** The record's key of a job id. */
    readonly key: (id: string) => string;
    /** How long a record is kept (`keepCompletedMs`). */
    readonly keepMs: number;
    /** The jobs' lock (`lockDurationMs`). */
    readonly lockMs: number;
  }) {
    this.#client = options.client;
    this.#key = options.key;
    this.#keepMs = options.keepMs;
    this.#lockMs = options.lockMs;
  }

  /**
   * The job's processor starts. `fetchedAt` is when this worker asked for the job (BullMQ's `processedOn`, taken
   * from this process's clock before the lock was set): a job fetched with others waits for a free slot, and its
   * lock ages meanwhile.
   */
  started(id: string, fetchedAt: number | undefined): void {
    const now = Date.now();
    this.#lockedAt.set(id, fetchedAt === undefined ? now : Math.min(fetchedAt, now));
  }

  /** BullMQ renewed these jobs' locks. */
  renewed(ids: readonly string[]): void {
    const at = Date.now();
    for (const id of ids) if (this.#lockedAt.has(id)) this.#lockedAt.set(id, at);
  }

  /**
   * The job's handlers succeeded: BullMQ records the completion next, which `confirmed` reports. `stamp` tells this
   * job from a later one of the same id (its creation time): a record is only ever read by the job it was made for.
   */
  succeeded(id: string, stamp: string): void {
    const client = this.#client();
    const lockedAt = this.#lockedAt.get(id);
    if (client === undefined || lockedAt === undefined) return;
    const lockLeftMs = this.#lockMs - (Date.now() - lockedAt);
    if (lockLeftMs < 2 || this.#closing) {
      this.#record(id, stamp);
      return;
    }
    this.confirmed(id);
    const timer = setTimeout(this.#late, lockLeftMs / 2, id);
    timer.unref?.();
    this.#unconfirmed.set(id, { timer, stamp });
  }

  /** The job's processor ended. */
  ended(id: string): void {
    this.#lockedAt.delete(id);
  }

  /** BullMQ recorded the job's completion. */
  confirmed(id: string): void {
    if (this.#unconfirmed.size === 0) return;
    clearTimeout(this.#unconfirmed.get(id)?.timer);
    this.#unconfirmed.delete(id);
  }

  /**
   * The queue closes: every completion still unconfirmed is recorded now, and every one from now on at once, as the
   * connections may be dropped before BullMQ confirms them.
   */
  closing(): void {
    this.#closing = true;
    for (const [id, { stamp }] of [...this.#unconfirmed]) this.#record(id, stamp);
  }

  /** The record's key of a job id: a replay or a discard drops it, as what it recorded no longer holds. */
  keyOf(id: string): string {
    return this.#key(id);
  }

  /**
   * True when a record says the job succeeded before it came back from a stall. Answered within the lock: a Redis
   * that does not answer by then fails the attempt (`queue_unavailable`) rather than risk a second run.
   */
  async succeededBefore(id: string, stamp: string): Promise<boolean> {
    const client = this.#client();
    if (client === undefined) return false;
    return (await withDeadline(() => client.get(this.#key(id)), this.#lockMs, 'queue_unavailable')) === stamp;
  }

  #record(id: string, stamp: string): void {
    this.confirmed(id);
    void this.#client()
      ?.set(this.#key(id), stamp, 'PX', this.#keepMs)
      .catch(() => {});
  }
}
