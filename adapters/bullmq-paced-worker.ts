// The queue's BullMQ worker: its fetch paced after Redis refused it, and its job locks kept by attempt, not by job id
// alone. Internal: not a subpath of the package.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Worker } from 'bullmq';

// BullMQ's fetch loop asks again at once when Redis refuses a fetch with a reply of its own (OOM under noeviction,
// READONLY on a replica after a failover), pausing only for a lost connection: the worker would spin, one error line
// per turn, thousands a second, for as long as Redis refuses. Such a refusal waits a second before the loop asks
// again; the receiver's close ends the wait. The jobs are still there, and run once Redis takes writes again.
const REFUSED_FETCH_PAUSE_MS = 1000;

/**
 * What the worker tells and asks the processor about the attempts it runs (a `JobRunner` is one).
 * @example
 * const worker = new (pacedWorker(Worker, createJobRunner(options)))(name, processor, { connection });
 */
export interface LockHolders {
  /** These jobs' locks could not be renewed with these tokens. */
  lockLost(ids: readonly string[], tokens: readonly string[]): void;
  /** True while an attempt of job `id` runs here. */
  holds(id: string): boolean;
}

// BullMQ's lock manager keeps one entry per job id, which the end of each attempt removes. A job whose lock lapsed
// (a worker stuck past it) is handed back by a stalled check, maybe to this same worker, while the earlier attempt
// still ends here: that end would remove the newer attempt's entry, whose lock would then never be renewed, lapse,
// and hand the job out a third time (run again beside it, or failed as stalled while it runs). So an entry is
// removed only once no attempt of its job runs here; each attempt's own end comes after its processor returned.
type Locks = { untrackJob(id: string): void };

/**
 * BullMQ's `Worker` class, its fetch paced after Redis refused it with a reply of its own, its failed lock renewals
 * told to `holders` with their tokens, and a job's lock kept renewed while any attempt of it runs here.
 * @example
 * const worker = new (pacedWorker(Worker, runner))(name, runner.processor, { connection });
 */
export const pacedWorker = (Base: typeof Worker, holders: LockHolders): typeof Worker =>
  class PacedWorker<D> extends Base<D> {
    #wake: AbortController | undefined;

    // BullMQ's hook for its lock manager, called as the worker is built.
    protected override createLockManager(): void {
      super.createLockManager();
      const locks = this.lockManager as unknown as Locks;
      const untrack = locks.untrackJob.bind(locks);
      locks.untrackJob = (id) => {
        if (!holders.holds(id)) untrack(id);
      };
    }

    // Only the attempt that held the token whose renewal failed is told: a failure for an older attempt of a job run
    // here again since (its renewal sent just before the newer attempt took the lock) is not the newer one's.
    override async extendJobLocks(ids: string[], tokens: string[], duration: number): Promise<string[]> {
      const failed = await super.extendJobLocks(ids, tokens, duration);
      if (failed.length > 0)
        holders.lockLost(
          failed,
          failed.map((id) => tokens[ids.indexOf(id)] ?? ''),
        );
      return failed;
    }

    protected override async moveToActive(token: string, name?: string) {
      try {
        return await super.moveToActive(token, name);
      } catch (error) {
        // Redis's own refusal, or a Postgres server's (BullMQ's Postgres backend: a refused migration fails every
        // fetch in the same turn): either fails the next fetch at once too, and BullMQ asks again at once.
        if (
          ((error as Error)?.name === 'ReplyError' ||
            typeof (error as { severity?: unknown })?.severity === 'string') &&
          !this.closing
        ) {
          if (this.#wake === undefined) {
            const wake = new AbortController();
            this.#wake = wake;
            this.once('closing', () => wake.abort());
          }
          await sleep(REFUSED_FETCH_PAUSE_MS, undefined, { signal: this.#wake.signal }).catch(() => {});
        }
        throw error;
      }
    }
  } as typeof Worker;
